import type { Session, User } from '@plinth/shared';
import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { iso, randomToken, sha256 } from '../../lib/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import { decideRefresh, openSuccessor, sealSuccessor } from './refresh.js';
import { type Aal, type Assurance, banned, bannedSql, hasFactorSql } from './state.js';
import { USER_CLAIMS_SQL, type UserClaims, userClaims } from './claims.js';

/** A sign-in method, as the access token's `amr` names it. */
export type AmrMethod = 'password' | 'magic_link' | 'otp' | 'oauth' | 'totp' | 'passkey' | 'recovery' | 'anonymous';

interface Level extends Assurance {
  /** The user has a verified second factor. */
  mfa: boolean;
  /** Claims about the user beside the level: metadata, providers, anonymity (userClaims). */
  user: UserClaims;
}

type Deps = Pick<AuthDeps, 'db' | 'tokens' | 'clock' | 'settings' | 'config' | 'accounts' | 'sessionState'> &
  Partial<Pick<AuthDeps, 'hooks'>>;

interface StateRow {
  session_id: string;
  user_id: string;
  revoked: boolean;
  successor_enc: string | null;
  rotated_at: number | null;
  session_revoked_at: number | null;
  session_active_at: number;
  banned: boolean;
}

const ms = (col: string) => `(extract(epoch from ${col}) * 1000)::float8`;
const STATE_SQL = `select t.session_id, s.user_id, t.revoked, t.successor_enc, ${ms('t.rotated_at')} as rotated_at,
  ${ms('s.revoked_at')} as session_revoked_at, ${ms('s.refreshed_at')} as session_active_at, ${bannedSql('u', '$2::timestamptz')} as banned
  from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id join auth.users u on u.id = s.user_id where t.hash = $1`;
const MAX_CHAIN = 8;

interface SignedAccess {
  token: string;
  /** Expiry, epoch seconds. */
  exp: number;
  /** Lifetime in seconds (`expires_in`). */
  ttl: number;
}

/**
 * A sealed successor: `{"r","a","e","t"}` (refresh token and the access token issued with it),
 * or, in rows written before that, the bare refresh token.
 */
function openSet(opened: string | null): { refresh: string; access: SignedAccess | null } | null {
  if (!opened) return null;
  if (!opened.startsWith('{')) return { refresh: opened, access: null };
  try {
    const v = JSON.parse(opened) as { r?: unknown; a?: unknown; e?: unknown; t?: unknown };
    if (typeof v.r !== 'string') return null;
    const access =
      typeof v.a === 'string' && typeof v.e === 'number' && typeof v.t === 'number' ? { token: v.a, exp: v.e, ttl: v.t } : null;
    return { refresh: v.r, access };
  } catch {
    return null;
  }
}

const invalid = (why = 'The refresh token is invalid or the session has ended; sign in again.') =>
  new ApiError('invalid_refresh_token', why);

/**
 * Sessions and their tokens: one session per sign-in, access tokens signed for it, refresh
 * tokens rotated on every use with a grace window (docs/api.md §5.2).
 * @example const sessions = createSessionService(deps); const set = await sessions.signIn(userId, { ip, userAgent });
 */
export function createSessionService(deps: Deps) {
  const { db, clock } = deps;

  /** The session's level and methods, and whether its user has a verified factor. */
  async function levelOf(sessionId: string): Promise<Level> {
    const { rows } = await db.query<{
      aal: Aal;
      amr: unknown;
      mfa: boolean;
      user_data: unknown;
      is_anonymous: boolean;
      providers: unknown;
    }>(
      `select s.aal, s.amr, ${hasFactorSql('u')} as mfa, ${USER_CLAIMS_SQL} from auth.sessions s join auth.users u on u.id = s.user_id where s.id = $1`,
      [sessionId],
    );
    const r = rows[0];
    const amr = r?.amr ?? [];
    return { aal: r?.aal === 'aal2' ? 'aal2' : 'aal1', amr: Array.isArray(amr) ? amr : [], mfa: r?.mfa === true, user: userClaims(r) };
  }

  /**
   * An access token for `sessionId` that lives `session_duration_seconds`, at the session's
   * level, with the claims the custom access-token hook returned (hooks.ts). `method`: how the
   * token came about (`token_refresh`, else the session's newest method), as the hook is told.
   */
  async function signAccess(user: User, sessionId: string, level: Level, method?: string): Promise<SignedAccess> {
    const ttl = deps.settings.auth().session_duration_seconds;
    // `email_verified` / `phone_verified`: a policy on auth.jwt()->>'email' must be able to tell
    // an address the user proved from one they only typed.
    const claims = {
      sub: user.id,
      // An absent address is no claim at all (GoTrue's tokens carry strings only: auth-js's
      // getClaims types them so), and auth.jwt()->>'email' reads null either way.
      ...(user.email !== null ? { email: user.email } : {}),
      email_verified: user.email !== null && user.email_confirmed_at !== null,
      ...(user.phone !== null ? { phone: user.phone } : {}),
      phone_verified: user.phone !== null && user.phone_confirmed_at !== null,
      session_id: sessionId,
      aal: level.aal,
      amr: level.amr,
      ...level.user,
    };
    const hooked = deps.hooks
      ? await deps.hooks.accessToken(
          user.id,
          { aud: 'authenticated', role: 'authenticated', ...claims },
          method ?? level.amr[level.amr.length - 1]?.method ?? 'password',
        )
      : claims;
    const { token, exp } = await deps.tokens.sign({ ...hooked, sub: user.id }, ttl);
    return { token, exp, ttl };
  }

  /** The session answer, with a fresh access token or the one already issued with this refresh token. */
  async function tokenSet(user: User, sessionId: string, refreshToken: string, access?: SignedAccess): Promise<Session> {
    const level = await levelOf(sessionId);
    const { token, exp, ttl } = access ?? (await signAccess(user, sessionId, level));
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: ttl,
      expires_at: exp,
      refresh_token: refreshToken,
      user,
      // With a verified factor, an aal1 session is told to step up (docs/securing-accounts.md).
      next_aal: level.mfa ? 'aal2' : level.aal,
    };
  }

  async function state(hash: string): Promise<StateRow | null> {
    return (await db.query<StateRow>(STATE_SQL, [hash, iso(clock.now())])).rows[0] ?? null;
  }

  /**
   * Rotation as one conditional UPDATE: of two racing refreshes one wins, the other gets null and
   * re-reads. The new set (refresh token and the access token signed for it) is sealed into the
   * parent's row, so a second tab inside the grace window gets the very same set.
   */
  async function rotate(raw: string, hash: string, sessionId: string, access: SignedAccess): Promise<string | null> {
    const child = randomToken(32);
    const now = clock.now();
    const sealed = sealSuccessor(raw, hash, JSON.stringify({ r: child, a: access.token, e: access.exp, t: access.ttl }));
    return db.transaction(async (tx) => {
      const won = await tx.query(
        'update auth.refresh_tokens set rotated_at = $2::timestamptz, successor_enc = $3 where hash = $1 and rotated_at is null and not revoked returning id',
        [hash, iso(now), sealed],
      );
      if (!won.rows.length) return null;
      await tx.query('insert into auth.refresh_tokens (hash, session_id, parent, created_at) values ($1, $2, $3, $4::timestamptz)', [
        sha256(child),
        sessionId,
        hash,
        iso(now),
      ]);
      await tx.query('update auth.sessions set refreshed_at = $2::timestamptz where id = $1', [sessionId, iso(now)]);
      // Successors older than the grace window are never needed again: drop them.
      await tx.query(
        'update auth.refresh_tokens set successor_enc = null where session_id = $1 and rotated_at < $2::timestamptz and successor_enc is not null',
        [sessionId, iso(now - deps.config.refreshGraceMs)],
      );
      return child;
    });
  }

  /** Follows successors from a rotated token to the session's active set (the second tab's answer). */
  async function active(raw: string, hash: string, sealed: string | null): Promise<{ refresh: string; access: SignedAccess | null }> {
    for (let i = 0; i < MAX_CHAIN; i++) {
      const opened = sealed ? openSet(openSuccessor(raw, hash, sealed)) : null;
      if (!opened) throw invalid();
      const childHash = sha256(opened.refresh);
      const { rows } = await db.query<{ rotated: boolean; revoked: boolean; successor_enc: string | null }>(
        'select rotated_at is not null as rotated, revoked, successor_enc from auth.refresh_tokens where hash = $1',
        [childHash],
      );
      if (!rows[0] || rows[0].revoked) throw invalid();
      if (!rows[0].rotated) return opened;
      [raw, hash, sealed] = [opened.refresh, childHash, rows[0].successor_enc];
    }
    throw invalid();
  }

  return {
    tokenSet,

    /**
     * A sign-in, the one way every method opens a session: `who` works out the user in a
     * transaction (consumes the link, checks the code, proves the address…), the session is
     * opened in that same transaction, and the tokens are signed once it has committed. `who`
     * answers the user's id, or an ApiError to refuse with after committing what it wrote (a
     * consumed link, a counted wrong code). `method` is what the token's `amr` will say (the
     * session is `aal1`), or the whole level (a passkey with user verification: `aal2`).
     * @example return sessions.signInWith(client, async (tx, now) => (await check(tx)) ? userId : new ApiError('invalid_code', '…'), 'otp');
     */
    async signInWith(
      client: ClientInfo,
      who: (tx: Queryable, now: number) => Promise<string | ApiError>,
      method: AmrMethod | Assurance,
    ): Promise<Session> {
      const now = clock.now();
      const level = typeof method === 'string' ? firstFactor(method, now) : method;
      const outcome = await db.transaction(async (tx) => {
        const userId = await who(tx, now);
        if (userId instanceof ApiError) return userId;
        return { userId, ...(await deps.sessionState.startSession(tx, userId, client, now, level)) };
      });
      if (outcome instanceof ApiError) throw outcome;
      return this.issue(outcome.userId, outcome.sessionId, outcome.refreshToken);
    },

    /** A new session for a user whose credentials were just proven. */
    signIn(userId: string, client: ClientInfo, method: AmrMethod | Assurance): Promise<Session> {
      return this.signInWith(client, async () => userId, method);
    },

    /** The session answer for a session opened with `start` in a transaction that has committed. */
    async issue(userId: string, sessionId: string, refreshToken: string): Promise<Session> {
      const user = await deps.accounts.findUser(db, userId);
      if (!user) throw invalid();
      try {
        return await tokenSet(user, sessionId, refreshToken);
      } catch (err) {
        // No token for it (a custom access-token hook refused): the session just opened is ended.
        await db.transaction((tx) => deps.sessionState.revokeSessions(tx, userId, { only: sessionId }, clock.now()));
        throw err;
      }
    },

    /**
     * POST /v1/auth/refresh: rotate, or inside the grace window return the current set, or
     * on reuse after it end the session (401 refresh_token_reused).
     */
    async refresh(raw: unknown): Promise<Session> {
      if (typeof raw !== 'string' || raw.length < 16 || raw.length > 256) throw invalid();
      const hash = sha256(raw);
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = await state(hash);
        if (!row) throw invalid();
        // Before the decision: a banned user hears why, whether or not the ban ended the session.
        if (row.banned) throw banned();
        const decision = decideRefresh(
          {
            revoked: row.revoked,
            rotatedAt: row.rotated_at,
            sessionRevokedAt: row.session_revoked_at,
            sessionActiveAt: row.session_active_at,
          },
          clock.now(),
          { graceMs: deps.config.refreshGraceMs, idleMs: deps.config.sessionIdleMs },
        );
        switch (decision.action) {
          case 'reject':
            throw invalid(
              decision.reason === 'session_expired' ? 'The session expired after 30 days without use; sign in again.' : undefined,
            );
          case 'revoke-family':
            await db.transaction((tx) => deps.sessionState.revokeSessions(tx, row.user_id, { only: row.session_id }, clock.now()));
            throw new ApiError('refresh_token_reused', 'This refresh token was already used; the session has been ended. Sign in again.');
          case 'return-active': {
            const set = await active(raw, hash, row.successor_enc);
            const user = await deps.accounts.findUser(db, row.user_id);
            if (!user) throw invalid();
            // The access token issued with this refresh token, while it is still good.
            const same = set.access && set.access.exp * 1000 > clock.now() ? set.access : undefined;
            return tokenSet(user, row.session_id, set.refresh, same);
          }
          case 'rotate': {
            const user = await deps.accounts.findUser(db, row.user_id);
            if (!user) throw invalid();
            const access = await signAccess(user, row.session_id, await levelOf(row.session_id), 'token_refresh');
            const next = await rotate(raw, hash, row.session_id, access);
            if (next === null) continue; // another request rotated it first: decide again
            return tokenSet(user, row.session_id, next, access);
          }
        }
      }
      throw invalid();
    },

    /**
     * POST /v1/auth/signout: this session, or every session of the user, or (`others`, GoTrue's
     * scope) every session but this one. Idempotent.
     */
    async signOut(userId: string, sessionId: string | null, scope: 'local' | 'global' | 'others'): Promise<void> {
      if (scope !== 'global' && !sessionId) return;
      const which = scope === 'local' ? { only: sessionId ?? undefined } : scope === 'others' ? { except: sessionId ?? undefined } : {};
      await db.transaction((tx) => deps.sessionState.revokeSessions(tx, userId, which, clock.now()));
    },
  };
}

/**
 * The level of a session opened by one method alone: `aal1`, the method and when.
 * @example await state.startSession(tx, id, client, now, firstFactor('password', now));
 */
export function firstFactor(method: AmrMethod, now: number): Assurance {
  return { aal: 'aal1', amr: [{ method, timestamp: Math.floor(now / 1000) }] };
}

export type SessionService = ReturnType<typeof createSessionService>;
