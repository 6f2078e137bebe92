import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type CallerGuards, CONSOLE_COOKIE, fromOwnPage } from '../http/index.js';
import { ADMIN_MAX_MS } from './sessions.js';

/**
 * The Set-Cookie value of a console session (docs/api.md §4.1): HttpOnly, SameSite=Strict,
 * Path=/, Secure when the public URL is https; it lasts as long as the session can (7 days), the
 * server ends it sooner after 12 idle hours.
 */
export function sessionCookie(value: string, secure: boolean): string {
  return `${CONSOLE_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${ADMIN_MAX_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedCookie(secure: boolean): string {
  return `${CONSOLE_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/**
 * Route guards of the management table, run at `onRequest` (before the body is parsed, so a
 * cross-site form post is refused as such, not as a bad body). Who is calling, and what a
 * console role may do, is worked out by http/guards.ts (keys, tokens, the console cookie and
 * its rule, `ROLE_RIGHTS` of packages/shared). The secret key may do everything.
 * - `manage`: every management route; a `viewer` reads only.
 * - `sql`: the SQL runner; not a `viewer` (the runner is no sandbox: docs/security.md).
 * - `inbox`: the dev inbox, as `sql`: its messages hold reset and sign-in links, which would let
 *   a `viewer` (reads only) take over end-users (review round 3, R10).
 * - `team`: admins, invitations, the audit log, signing keys: `owner` and `admin`.
 * - `owners`: making an admin (an owner) or setting any admin's password: `owner` only (and the
 *   secret key: `plinth admin` through a running server).
 * - `admin`: the cookie only, any role (me, keys, logout).
 * - `origin`: sign-in, setup, accepting an invitation: no credential yet, but from our own pages.
 * @example app.post('/api/v1/sql', { onRequest: guards.sql }, handler)
 */
export function createGuards(callers: CallerGuards, options: { publicOrigin: string }) {
  const admin = async (req: FastifyRequest, _reply?: FastifyReply) => {
    if (!(await callers.consoleOf(req))) throw new ApiError('unauthorized', 'No console session: sign in at /console/login.');
  };
  const origin = async (req: FastifyRequest, _reply?: FastifyReply) => {
    if (!fromOwnPage(req, options.publicOrigin)) {
      throw new ApiError('csrf_rejected', 'Refused: console sign-in is accepted from the console page only.');
    }
  };
  const sql = callers.operator('sql');
  const inbox = async (req: FastifyRequest, _reply?: FastifyReply) => {
    try {
      await sql(req);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'forbidden' || !req.admin) throw err;
      throw new ApiError(
        'forbidden',
        `Your console role (${req.admin.role}) may not read the dev inbox: its messages hold sign-in and reset links.`,
      );
    }
  };
  return {
    manage: callers.operator(),
    sql,
    inbox,
    team: callers.operator('manageAdmins'),
    owners: callers.operator('manageOwners'),
    admin,
    origin,
  };
}

export type Guards = ReturnType<typeof createGuards>;
