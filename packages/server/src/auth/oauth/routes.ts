import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type App, readCookie } from '../../http/index.js';
import { clientOf } from '../guards.js';
import type { OAuthService, Redirect } from './service.js';

export const StartQuery = Type.Object({ redirect_url: Type.Optional(Type.String({ maxLength: 2048 })) });
type Params = { provider: string };

/** Query or form fields as plain strings: a repeated field counts once (its first), anything else is dropped; each at most 8 KiB. */
export function fields(source: unknown): Record<string, string> {
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
 * Lets a route scope read form posts: Apple sends its callback as `form_post`. Registered for
 * the social sign-in routes only (auth/routes.ts), so no other route takes a form.
 */
export function acceptForms(scope: App): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
}

/** Handlers of social sign-in (a browser navigates here: no apikey); the route table is auth/routes.ts. */
export function createOAuthHandlers(oauth: OAuthService) {
  return {
    start: async (req: FastifyRequest<{ Params: Params; Querystring: typeof StartQuery.static }>, reply: FastifyReply) =>
      go(reply, await oauth.start(req.params.provider, req.query.redirect_url, readCookie(req.headers.cookie, oauth.cookieName))),
    /** GET, or POST for Apple's form_post. */
    callback: async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) =>
      go(
        reply,
        await oauth.callback(
          req.params.provider,
          fields(req.method === 'POST' ? req.body : req.query),
          readCookie(req.headers.cookie, oauth.cookieName),
          clientOf(req),
        ),
      ),
  };
}
