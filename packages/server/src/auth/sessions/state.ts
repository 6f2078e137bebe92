/**
 * Session state, the one home of "is this session open" and of the ban (docs/architecture.md,
 * "One home for each rule"). A session is open while it is not revoked (signed out, ended by a
 * proof, a password change, a reset, an address change, a ban) and its user is not banned.
 * Every sign-in method opens its session here (the ban is checked once for all of them), every
 * revocation ends here (every instance's gate hears of it), and the gate (gate.ts), the auth
 * guard and the refresh rotation ask the question with the same SQL.
 */
import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { iso, randomToken, sha256 } from '../../lib/index.js';
import type { ClientInfo } from '../deps.js';

/** NOTIFY channel on which a revocation (or a ban) names the user whose sessions changed; `*`: every user. */
export const SESSIONS_CHANNEL = 'plinth_sessions';

/**
 * SQL: the user row `u` is banned at the time `at` (an SQL expression of type timestamptz).
 * @example `select ${bannedSql('u', '$2::timestamptz')} as banned from auth.users u where u.id = $1`
 */
export const bannedSql = (u: string, at: string) => `coalesce(${u}.banned_until > ${at}, false)`;

/**
 * SQL: the session row `s` of the user row `u` is open at `at`.
 * @example `select ${openSql('s', 'u', '$3::timestamptz')} as open from auth.sessions s join auth.users u on u.id = s.user_id …`
 */
export const openSql = (s: string, u: string, at: string) => `(${s}.revoked_at is null and not ${bannedSql(u, at)})`;

/** The answer to a banned user's sign-in or refresh (403). */
export function banned(): ApiError {
  return new ApiError('user_banned', 'This account is banned; contact the project owner.');
}

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

/**
 * What the writes tell when a user's sessions changed (the gate, gate.ts): it forgets them at
 * once, and asks the other instances to acknowledge once the change has committed.
 */
export interface Evicts {
  evictUser(userId: string): void;
  sync(tx: Queryable): Promise<void>;
}

/** `aal1`: one factor; `aal2`: a second factor, or a passkey with user verification. */
export type Aal = 'aal1' | 'aal2';

/** How a session was opened: its level and the methods behind it (the token's `aal` and `amr`). */
export interface Assurance {
  aal: Aal;
  amr: Array<{ method: string; timestamp: number }>;
}

/**
 * What a token's session is now: open or not, its level (lowered in place when the user's last
 * factor goes), and whether its user has a verified second factor (then an `aal1` session must
 * step up before the API answers it, docs/securing-accounts.md).
 */
export interface SessionCheck {
  open: boolean;
  aal: Aal;
  mfa: boolean;
}

/** SQL: the user `u` has a verified second factor. */
export const hasFactorSql = (u: string) => `exists (select 1 from auth.mfa_factors f where f.user_id = ${u}.id and f.status = 'verified')`;

/**
 * Whether a session is open now, its level and its user's factors, read from the database (no
 * cache): the question the gate caches and the auth endpoints ask afresh.
 * @example const { open } = await checkSession(db, sid, uid, clock.now());
 */
export async function checkSession(q: Queryable, sessionId: string, userId: string, now: number): Promise<SessionCheck> {
  const { rows } = await q.query<{ open: boolean; aal: Aal; mfa: boolean }>(
    `select ${openSql('s', 'u', '$3::timestamptz')} as open, s.aal, ${hasFactorSql('u')} as mfa
     from auth.sessions s join auth.users u on u.id = s.user_id where s.id = $1::uuid and s.user_id = $2::uuid`,
    [sessionId, userId, iso(now)],
  );
  const r = rows[0];
  return r
    ? { open: r.open === true, aal: r.aal === 'aal2' ? 'aal2' : 'aal1', mfa: r.mfa === true }
    : { open: false, aal: 'aal1', mfa: false };
}

/**
 * Whether a session is open now (checkSession's first answer).
 * @example if (!(await isSessionOpen(db, sid, uid, clock.now()))) throw …
 */
export async function isSessionOpen(q: Queryable, sessionId: string, userId: string, now: number): Promise<boolean> {
  return (await checkSession(q, sessionId, userId, now)).open;
}

/**
 * Opening and ending sessions, in the caller's transaction.
 * @example const state = createSessionState(gate); await db.transaction((tx) => state.revokeSessions(tx, userId, {}, clock.now()));
 */
export function createSessionState(gate: Evicts) {
  /** The user's sessions changed (`*`: everyone's): this gate forgets them now, every instance's at commit. */
  async function notifyChanged(tx: Queryable, userId: string): Promise<void> {
    await tx.query('select pg_notify($1, $2)', [SESSIONS_CHANNEL, userId]);
    gate.evictUser(userId);
    await gate.sync(tx);
  }
  return {
    /**
     * Opens a session for a user whose credential was just proven, at the level it proved
     * (`aal1` by a method alone); 403 `user_banned` while the user is banned.
     * @example const { sessionId, refreshToken } = await state.startSession(tx, userId, client, now, { aal: 'aal1', amr: [{ method: 'password', timestamp }] });
     */
    async startSession(tx: Queryable, userId: string, client: ClientInfo, now: number, level?: Assurance): Promise<Started> {
      const { rows: who } = await tx.query<{ banned: boolean }>(
        `select ${bannedSql('u', '$2::timestamptz')} as banned from auth.users u where u.id = $1`,
        [userId, iso(now)],
      );
      if (who[0]?.banned) throw banned();
      const { rows } = await tx.query<{ id: string }>(
        `insert into auth.sessions (user_id, user_agent, ip, created_at, refreshed_at, aal, amr)
         values ($1, $2, $3, $4::timestamptz, $4::timestamptz, $5, $6::jsonb) returning id`,
        [userId, client.userAgent?.slice(0, 512) ?? null, client.ip, iso(now), level?.aal ?? 'aal1', JSON.stringify(level?.amr ?? [])],
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
     * Ends sessions of a user and kills their refresh tokens. The gate forgets the user now and
     * every instance's gate at commit (NOTIFY), so the access tokens of these sessions stop
     * working on the REST API too.
     * @example await state.revokeSessions(tx, userId, { except: currentSessionId }, now);
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

    /**
     * Ends every session of every user (a signing key revoked: no token made before counts).
     * @example await state.revokeEverySession(tx, clock.now());
     */
    async revokeEverySession(tx: Queryable, now: number): Promise<number> {
      const { rows } = await tx.query<{ n: number }>(
        `with s as (update auth.sessions set revoked_at = $1::timestamptz where revoked_at is null returning id),
         t as (update auth.refresh_tokens set revoked = true, successor_enc = null where session_id in (select id from s) returning 1)
         select (select count(*) from s)::int as n`,
        [iso(now)],
      );
      await notifyChanged(tx, '*');
      return Number(rows[0]?.n ?? 0);
    },

    /**
     * The user's second factors changed (one verified, the last removed, an admin reset): the
     * sessions above `aal1` drop to it when no factor is left (`lower`), and every instance's
     * gate forgets the user, so the requirement and the level apply from the next request.
     * @example await state.factorsChanged(tx, userId, { lower: true });
     */
    async factorsChanged(tx: Queryable, userId: string, options: { lower: boolean }): Promise<void> {
      // A passkey with user verification is aal2 by itself: those sessions keep their level.
      if (options.lower)
        await tx.query(
          `update auth.sessions set aal = 'aal1' where user_id = $1 and aal <> 'aal1' and not amr @> '[{"method": "passkey"}]'::jsonb`,
          [userId],
        );
      await notifyChanged(tx, userId);
    },

    notifyChanged,
  };
}

export type SessionState = ReturnType<typeof createSessionState>;
