import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { PrincipalResolver } from '../http/principal.js';
import type { ClientInfo } from './deps.js';
import type { SessionService } from './sessions/service.js';

/** The signed-in caller of /v1/auth/user and /v1/auth/signout. */
export interface SignedIn {
  userId: string;
  sessionId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    signedIn: SignedIn | null;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Guards of the auth route table: `apikey` (any key of the project, as every /v1/auth call
 * carries), `user` (a user access token whose session is still open).
 * @example app.get('/v1/auth/user', { preHandler: guards.user }, handler)
 */
export function authGuards(resolve: PrincipalResolver, sessions: SessionService) {
  // Routes that need only the project key (sign-in, refresh, …) ignore Authorization when an
  // apikey is sent: a client still holding an expired access token must be able to refresh.
  const apikey = async (req: FastifyRequest) => {
    req.principal = await resolve(req.headers.apikey, req.headers.apikey === undefined ? req.headers.authorization : undefined);
  };
  const withToken = async (req: FastifyRequest) => {
    req.principal = await resolve(req.headers.apikey, req.headers.authorization);
  };
  const user = async (req: FastifyRequest) => {
    await withToken(req);
    const p = req.principal;
    if (p?.role !== 'authenticated')
      throw new ApiError('unauthorized', 'Send the user access token: Authorization: Bearer <access_token>.');
    const sessionId = p.sessionId && UUID.test(p.sessionId) ? p.sessionId : null;
    // The JWT alone stays valid until it expires; the auth endpoints also want the session open.
    if (!UUID.test(p.sub) || !(await sessions.isActive(p.sub, sessionId)))
      throw new ApiError('invalid_token', 'The session of this access token has ended; sign in again.');
    req.signedIn = { userId: p.sub, sessionId };
  };
  return { apikey, user };
}

export type AuthGuards = ReturnType<typeof authGuards>;

/** The plain inputs a service gets about the caller (convention 9). */
export function clientOf(req: FastifyRequest): ClientInfo {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, userAgent: typeof ua === 'string' ? ua : null };
}
