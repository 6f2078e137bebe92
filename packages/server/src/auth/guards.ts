import type { FastifyRequest } from 'fastify';
import { ApiError, type CallerGuards, mfaRequired } from '../http/index.js';
import { isUuid } from '../lib/index.js';
import type { ClientInfo } from './deps.js';
import type { SessionGate } from './sessions/gate.js';

/** The signed-in caller of /v1/auth/user and /v1/auth/signout. */
export interface SignedIn {
  userId: string;
  sessionId: string | null;
  /** The session's level now (a lowered session counts as `aal1` whatever its token says). */
  aal: 'aal1' | 'aal2';
}

declare module 'fastify' {
  interface FastifyRequest {
    signedIn: SignedIn | null;
  }
}

/**
 * Guards of the auth route table: `apikey` (any key of the project, as every /v1/auth call
 * carries), `user` (a user access token whose session is still open, at `aal2` when the user
 * has a verified second factor: else 403 `mfa_required`), `stepUp` (the same, but an `aal1`
 * token of such a user passes: the routes that list factors, challenge, verify, recover, read
 * the user and sign out).
 * @example app.get('/v1/auth/user', { preHandler: guards.stepUp }, handler)
 */
export function createAuthGuards(callers: CallerGuards, gate: SessionGate, enforcement: () => 'server' | 'policies') {
  const signedIn = (aal1: boolean) => async (req: FastifyRequest) => {
    const p = await callers.callerOf(req, { aal1 });
    if (p.role !== 'authenticated') throw new ApiError('unauthorized', 'Send the user access token: Authorization: Bearer <access_token>.');
    const sessionId = isUuid(p.sessionId) ? p.sessionId : null;
    // The principal passed the gate's cached answer; where credentials change, ask afresh.
    const state = sessionId && isUuid(p.sub) ? await gate.check(sessionId, p.sub, { fresh: true }) : null;
    if (!sessionId || !state?.open) throw new ApiError('invalid_token', 'The session of this access token has ended; sign in again.');
    const aal = p.payload.aal === 'aal2' && state.aal === 'aal2' ? 'aal2' : 'aal1';
    // Asked afresh too: a factor verified a moment ago on another instance counts here now.
    if (!aal1 && state.mfa && aal === 'aal1' && enforcement() === 'server') throw mfaRequired();
    req.signedIn = { userId: p.sub, sessionId, aal };
  };
  return { apikey: callers.key, user: signedIn(false), stepUp: signedIn(true) };
}

export type AuthGuards = ReturnType<typeof createAuthGuards>;

/** The plain inputs a service gets about the caller (convention 9). */
export function clientOf(req: FastifyRequest): ClientInfo {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, userAgent: typeof ua === 'string' ? ua : null };
}
