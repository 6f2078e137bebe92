import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { iso, randomToken, sha256 } from '../../lib/index.js';
import type { ClientInfo } from '../deps.js';
import { SESSIONS_CHANNEL, type SessionGate } from '../sessions/gate.js';

/** A session just opened: its id and first refresh token (the tokens are signed after commit). */
export interface Started {
  sessionId: string;
  refreshToken: string;
}

/** Which of a user's sessions to end: all, one, or all but one. */
export interface Which {
  only?: string;
  except?: string;
}

export function banned(): ApiError {
  return new ApiError('user_banned', 'This account is banned; contact the project owner.');
}

/**
 * Opening and ending sessions, the one place that does either: every sign-in method opens its
 * session here (so a ban is checked once for all of them), and every revocation ends here
 * (so the REST API's session gate hears of it at once).
 */
export function createSessionWrites(gate: SessionGate) {
  /** The user's sessions changed: this gate forgets them now, every instance's at commit. */
  async function notifyChanged(tx: Queryable, userId: string): Promise<void> {
    await tx.query('select pg_notify($1, $2)', [SESSIONS_CHANNEL, userId]);
    gate.evictUser(userId);
  }
  return {
    /**
     * Opens a session for a user whose credential was just proven, in the caller's
     * transaction; 403 `user_banned` while the user is banned.
     * @example const { sessionId, refreshToken } = await accounts.startSession(tx, userId, client, now);
     */
    async startSession(tx: Queryable, userId: string, client: ClientInfo, now: number): Promise<Started> {
      const { rows: who } = await tx.query<{ banned: boolean }>(
        'select coalesce(banned_until > $2::timestamptz, false) as banned from auth.users where id = $1',
        [userId, iso(now)],
      );
      if (who[0]?.banned) throw banned();
      const { rows } = await tx.query<{ id: string }>(
        `insert into auth.sessions (user_id, user_agent, ip, created_at, refreshed_at) values ($1, $2, $3, $4::timestamptz, $4::timestamptz) returning id`,
        [userId, client.userAgent?.slice(0, 512) ?? null, client.ip, iso(now)],
      );
      const refreshToken = randomToken(32);
      await tx.query('insert into auth.refresh_tokens (hash, session_id, created_at) values ($1, $2, $3::timestamptz)', [
        sha256(refreshToken),
        rows[0].id,
        iso(now),
      ]);
      await tx.query('update auth.users set last_sign_in_at = $2::timestamptz where id = $1', [userId, iso(now)]);
      return { sessionId: rows[0].id, refreshToken };
    },

    /**
     * Ends sessions of a user and kills their refresh tokens, in the caller's transaction. The
     * gate forgets the user now and every instance's gate at commit (NOTIFY), so the access
     * tokens of these sessions stop working on the REST API too.
     * @example await accounts.revokeSessions(tx, userId, { except: currentSessionId }, now);
     */
    async revokeSessions(tx: Queryable, userId: string, which: Which, now: number): Promise<number> {
      const { rows } = await tx.query<{ id: string }>(
        `update auth.sessions set revoked_at = $2::timestamptz
         where user_id = $1 and revoked_at is null and ($3::uuid is null or id = $3::uuid) and ($4::uuid is null or id <> $4::uuid)
         returning id`,
        [userId, iso(now), which.only ?? null, which.except ?? null],
      );
      if (rows.length) {
        await tx.query('update auth.refresh_tokens set revoked = true, successor_enc = null where session_id = any($1::uuid[])', [
          rows.map((r) => r.id),
        ]);
        await notifyChanged(tx, userId);
      }
      return rows.length;
    },

    notifyChanged,
  };
}
