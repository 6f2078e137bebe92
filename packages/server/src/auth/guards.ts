import type { FastifyRequest } from 'fastify';
import { ApiError, type CallerGuards } from '../http/index.js';
import { isUuid } from '../lib/index.js';
import type { ClientInfo } from './deps.js';
import type { SessionGate } from './sessions/gate.js';

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

/**
 * Guards of the auth route table: `apikey` (any key of the project, as every /v1/auth call
 * carries), `user` (a user access token whose session is still open).
 * @example app.get('/v1/auth/user', { preHandler: guards.user }, handler)
 */
export function createAuthGuards(callers: CallerGuards, gate: SessionGate) {
  const user = async (req: FastifyRequest) => {
    const p = await callers.callerOf(req);
    if (p.role !== 'authenticated') throw new ApiError('unauthorized', 'Send the user access token: Authorization: Bearer <access_token>.');
    const sessionId = isUuid(p.sessionId) ? p.sessionId : null;
    // The principal passed the gate's cached answer; where credentials change, ask afresh.
    if (!sessionId || !isUuid(p.sub) || !(await gate.isOpen(sessionId, p.sub, { fresh: true })))
      throw new ApiError('invalid_token', 'The session of this access token has ended; sign in again.');
    req.signedIn = { userId: p.sub, sessionId };
  };
  return { apikey: callers.key, user };
}

export type AuthGuards = ReturnType<typeof createAuthGuards>;

/** The plain inputs a service gets about the caller (convention 9). */
export function clientOf(req: FastifyRequest): ClientInfo {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, userAgent: typeof ua === 'string' ? ua : null };
}
