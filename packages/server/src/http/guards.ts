import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import type { Principal, PrincipalResolver } from './principal.js';

/**
 * Who is calling, worked out in one place for every area (docs/api.md §1, keys and roles): the REST API, storage,
 * the OpenAPI document, the auth routes and the management routes all resolve the caller here,
 * once per request, and keep it on `req.principal`. Areas compose their own guards on top
 * (auth's `user`: an open session; admin's `manage`: the secret key or a console cookie).
 */
export interface CallerGuards {
  /**
   * The principal of the `apikey` and `Authorization` headers, resolved once per request.
   * @example const who = await guards.callerOf(req); if (who.role === 'anon') …
   */
  callerOf(req: FastifyRequest): Promise<Principal>;
  /**
   * Guard: any key of the project. When `apikey` is sent, `Authorization` is not looked at:
   * a client still holding an expired access token must be able to sign in or refresh.
   */
  key(req: FastifyRequest): Promise<void>;
  /** Guard: the secret key (`Authorization: Bearer sk_…` or `apikey: sk_…`). */
  service(req: FastifyRequest): Promise<void>;
}

/**
 * @example const guards = createCallerGuards(createPrincipalResolver(keys, verify)); app.post('/v1/auth/signin', { preHandler: guards.key }, h)
 */
export function createCallerGuards(resolve: PrincipalResolver): CallerGuards {
  const callerOf = async (req: FastifyRequest): Promise<Principal> => {
    req.principal ??= await resolve(req.headers.apikey, req.headers.authorization);
    return req.principal;
  };
  return {
    callerOf,
    async key(req) {
      req.principal = await resolve(req.headers.apikey, req.headers.apikey === undefined ? req.headers.authorization : undefined);
    },
    async service(req) {
      if ((await callerOf(req)).role !== 'service') {
        throw new ApiError('forbidden', 'This endpoint needs the secret key (Authorization: Bearer sk_…).');
      }
    },
  };
}

/**
 * One cookie's value from a Cookie header, or null (no cookie library for the two names Plinth reads).
 * @example readCookie('a=1; plinth_admin=xyz', 'plinth_admin') // 'xyz'
 */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
