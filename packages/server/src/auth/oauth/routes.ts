import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/server.js';
import { clientOf } from '../guards.js';
import { AUTH_DOCS } from '../responses.js';
import type { OAuthService, Redirect } from './service.js';

export const StartQuery = Type.Object({ redirect_url: Type.Optional(Type.String({ maxLength: 2048 })) });
type Params = { provider: string };

/** One cookie's value from a Cookie header (no cookie library for one name). */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Query or form fields as plain strings: a repeated field counts once, anything else is dropped. */
function fields(source: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (!source || typeof source !== 'object') return out;
  for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (typeof value === 'string') out[k] = value.slice(0, 8192);
  }
  return out;
}

function go(reply: FastifyReply, r: Redirect) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if (r.setCookie) reply.header('set-cookie', r.setCookie);
  return reply.redirect(r.location, 302);
}

/**
 * Social sign-in routes (a browser navigates here: no apikey). The callback also takes POST,
 * for Apple's form_post; the form parser is registered for these routes only.
 */
export function registerOAuthRoutes(app: App, oauth: OAuthService): void {
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    const callback = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) =>
      go(
        reply,
        await oauth.callback(
          req.params.provider,
          fields(req.method === 'POST' ? req.body : req.query),
          readCookie(req.headers.cookie, oauth.cookieName),
          clientOf(req),
        ),
      );
    scope.get(
      '/v1/auth/oauth/:provider',
      { schema: { querystring: StartQuery, ...AUTH_DOCS.oauthStart }, config: { redirect: true } },
      async (req: FastifyRequest<{ Params: Params; Querystring: typeof StartQuery.static }>, reply) =>
        go(reply, await oauth.start(req.params.provider, req.query.redirect_url, readCookie(req.headers.cookie, oauth.cookieName))),
    );
    scope.get('/v1/auth/oauth/:provider/callback', { schema: AUTH_DOCS.oauthCallback, config: { redirect: true } }, callback);
    scope.post('/v1/auth/oauth/:provider/callback', { schema: AUTH_DOCS.oauthCallback, config: { redirect: true } }, callback);
  });
}
