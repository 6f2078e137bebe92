import { randomBytes } from 'node:crypto';
import type { EnrolledFactor, Factor, Passkey, Session } from '@plinth/shared';
import type { Queryable } from '../../db/index.js';
import { ApiError, mfaRequired } from '../../http/index.js';
import { iso, isoSql, isUuid, sha256 } from '../../lib/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import type { SignedIn } from '../guards.js';
import type { SessionService } from '../sessions/service.js';
import type { Assurance } from '../sessions/state.js';
import { newTotp, totpStep } from './totp.js';
import { createWebAuthnFactors, type WebAuthnCeremony, type WebAuthnFactorRow } from './webauthn.js';

/** A user may hold this many factors, verified or not (an unverified one is a QR code shown once). */
export const MAX_FACTORS = 10;
/** Wrong codes that void a challenge. */
export const CHALLENGE_MAX_FAILURES = 5;
const CHALLENGE_TTL_MS = 5 * 60_000;
const RECOVERY_CODES = 10;

/** The passkeys listed at enrolment (passkeys/ owns them; this area only reads them for the list). */
const PASSKEY_COLUMNS = `k.id, k.name, ${isoSql('k.created_at')} as created_at, ${isoSql('k.last_used_at')} as last_used_at, k.backed_up`;

const FACTOR_COLUMNS = `f.id, f.factor_type, f.friendly_name, f.status, ${isoSql('f.created_at')} as created_at, ${isoSql('f.updated_at')} as updated_at`;

const notFound = () => new ApiError('factor_not_found', 'No factor with this id belongs to the signed-in user.');
const challengeInvalid = () =>
  new ApiError('challenge_invalid', 'The challenge is unknown, expired, already used or void after 5 wrong codes; ask for a new one.');
const wrongCode = () =>
  new ApiError('invalid_code', 'The code is wrong, or was used already; enter the current code of the authenticator app.');

/** Recovery codes are typed by people: dashes, spaces and case do not matter. */
const normalizeRecovery = (code: unknown) => (typeof code === 'string' ? code.replace(/[\s-]/g, '').toLowerCase().slice(0, 64) : '');

/** 16 base32 characters (80 bits from the CSPRNG), shown as xxxx-xxxx-xxxx-xxxx. */
function recoveryCode(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out.match(/.{4}/g)?.join('-') ?? out;
}

/** The session the caller proved a second factor from, its methods kept, at `aal2`. */
async function steppedUp(tx: Queryable, sessionId: string, method: string, now: number): Promise<Assurance> {
  const { rows } = await tx.query<{ amr: unknown }>('select amr from auth.sessions where id = $1', [sessionId]);
  const raw = rows[0]?.amr;
  const before = Array.isArray(raw) ? (raw as Assurance['amr']).filter((m) => m.method !== method) : [];
  return { aal: 'aal2', amr: [...before, { method, timestamp: Math.floor(now / 1000) }] };
}

/**
 * TOTP factors and recovery codes (docs/securing-accounts.md): enrol, challenge, verify (the
 * first success verifies the factor), list, remove; each code works once; 5 wrong codes void a
 * challenge; wrong codes are limited per user. A verification or a recovery code ends the
 * caller's session and opens a new one at `aal2` (a refresh token stolen with the old one
 * never reaches `aal2`).
 * @example const mfa = createMfaService(deps, sessions); const f = await mfa.enroll(who, { factor_type: 'totp' });
 */
export function createMfaService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, settings, limits, sessionState } = deps;
  const webauthnFactors = createWebAuthnFactors(deps);

  const nameOf = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 100) : null);

  /** A new unverified factor, under the per-user limit (a user's enrolments serialised). */
  async function insertFactor(userId: string, type: Factor['factor_type'], name: string | null, secret: string | null): Promise<Factor> {
    const now = clock.now();
    return db.transaction(async (tx) => {
      await tx.query('select 1 from auth.users where id = $1 for update', [userId]);
      const { rows } = await tx.query<{ n: number }>('select count(*)::int as n from auth.mfa_factors where user_id = $1', [userId]);
      if (Number(rows[0]?.n ?? 0) >= MAX_FACTORS)
        throw new ApiError('too_many_factors', `A user may have at most ${MAX_FACTORS} factors; remove one first.`);
      const inserted = await tx.query<Factor>(
        `insert into auth.mfa_factors as f (user_id, factor_type, friendly_name, secret, created_at, updated_at)
         values ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz) returning ${FACTOR_COLUMNS}`,
        [userId, type, name, secret, iso(now)],
      );
      return inserted.rows[0];
    });
  }

  /** The user's passkeys, listed beside a new factor (see enroll). */
  async function passkeysOf(userId: string): Promise<Passkey[]> {
    const { rows } = await db.query<Passkey>(
      `select ${PASSKEY_COLUMNS} from auth.passkeys k where k.user_id = $1 order by k.created_at, k.id`,
      [userId],
    );
    return rows;
  }

  /** Ends the caller's session and opens its successor at `aal2`, in one transaction with `work`. */
  async function stepUp(who: SignedIn, method: string, client: ClientInfo, work: (tx: Queryable, now: number) => Promise<ApiError | null>) {
    const now = clock.now();
    const sessionId = who.sessionId;
    if (!sessionId) throw new ApiError('invalid_token', 'The session of this access token has ended; sign in again.');
    const outcome = await db.transaction(async (tx) => {
      const refused = await work(tx, now);
      if (refused) return refused;
      const level = await steppedUp(tx, sessionId, method, now);
      await sessionState.revokeSessions(tx, who.userId, { only: sessionId }, now);
      return sessionState.startSession(tx, who.userId, client, now, level);
    });
    if (outcome instanceof ApiError) throw outcome;
    return sessions.issue(who.userId, outcome.sessionId, outcome.refreshToken);
  }

  return {
    /** GET /v1/auth/factors: the user's factors, verified or not. */
    async list(userId: string): Promise<{ factors: Factor[] }> {
      const { rows } = await db.query<Factor>(
        `select ${FACTOR_COLUMNS} from auth.mfa_factors f where f.user_id = $1 order by f.created_at, f.id`,
        [userId],
      );
      return { factors: rows };
    },

    /**
     * POST /v1/auth/factors: a new TOTP factor, unverified until its first code, with the user's
     * passkeys: one registered before the first factor (from `aal1`) still signs in at `aal2` by
     * itself, so the owner sees them here and removes any she does not know (review round 3, R9).
     */
    async enroll(who: SignedIn, input: { factor_type?: unknown; friendly_name?: unknown }): Promise<EnrolledFactor> {
      if (!settings.auth().mfa_totp_enabled)
        throw new ApiError('provider_disabled', 'Authenticator-app factors are off for this project (mfa_totp_enabled).');
      if (input.factor_type !== 'totp')
        throw new ApiError('invalid_request', 'factor_type must be "totp" or "webauthn".', [
          { field: 'body.factor_type', message: 'must be "totp" or "webauthn"' },
        ]);
      const { rows: users } = await db.query<{ label: string }>(
        'select coalesce(email, phone, id::text) as label from auth.users where id = $1',
        [who.userId],
      );
      const totp = await newTotp(settings.project().name, users[0]?.label ?? who.userId);
      const factor = await insertFactor(who.userId, 'totp', nameOf(input.friendly_name), totp.secret);
      return { ...factor, totp, passkeys: await passkeysOf(who.userId) };
    },

    /**
     * A new WebAuthn factor (a security key, a platform authenticator), unverified until its
     * first challenge is answered with the credential the authenticator creates; needs the
     * project's relying party (passkey_enabled), like passkeys. Listed with the user's passkeys,
     * as a TOTP factor is.
     */
    async enrollWebAuthn(who: SignedIn, input: { friendly_name?: unknown }): Promise<Factor & { passkeys: Passkey[] }> {
      webauthnFactors.assertEnabled();
      const factor = await insertFactor(who.userId, 'webauthn', nameOf(input.friendly_name), null);
      return { ...factor, passkeys: await passkeysOf(who.userId) };
    },

    /**
     * POST /v1/auth/factors/{id}/challenge: `{id, expires_at}` (epoch seconds), good for 5
     * minutes, bound to the caller's session; a WebAuthn factor's adds `webauthn: {type,
     * options}` (`create` while unverified, `request` after) for the authenticator.
     */
    async challenge(
      who: SignedIn,
      factorId: string,
    ): Promise<{ id: string; expires_at: number; webauthn?: { type: WebAuthnCeremony; options: object } }> {
      if (!isUuid(factorId) || !who.sessionId) throw notFound();
      const { rows: factors } = await db.query<{ factor_type: string; status: string; credential_id: string | null; transports: unknown }>(
        'select factor_type, status, credential_id, transports from auth.mfa_factors where id = $1 and user_id = $2',
        [factorId, who.userId],
      );
      const factor = factors[0];
      if (!factor) throw notFound();
      const webauthn = factor.factor_type === 'webauthn' ? await webauthnFactors.options(db, who.userId, factor) : undefined;
      const now = clock.now();
      // Challenges over for 5 minutes and more are never read again.
      await db.query('delete from auth.mfa_challenges where factor_id = $1 and expires_at < $2::timestamptz', [
        factorId,
        iso(now - CHALLENGE_TTL_MS),
      ]);
      const { rows } = await db.query<{ id: string }>(
        `insert into auth.mfa_challenges (factor_id, session_id, webauthn_challenge, created_at, expires_at)
         select f.id, $3, $6, $4::timestamptz, $5::timestamptz from auth.mfa_factors f where f.id = $1 and f.user_id = $2 returning id`,
        [factorId, who.userId, who.sessionId, iso(now), iso(now + CHALLENGE_TTL_MS), webauthn?.options.challenge ?? null],
      );
      if (!rows[0]) throw notFound();
      return { id: rows[0].id, expires_at: Math.floor((now + CHALLENGE_TTL_MS) / 1000), ...(webauthn ? { webauthn } : {}) };
    },

    /**
     * POST /v1/auth/factors/{id}/verify: a new session at `aal2`. The challenge must be this
     * session's, live, and not void; a code of a time step accepted before is a replay.
     * Verifying a factor for the first time is its enrolment (review round 3, R9): with another
     * factor verified already it needs `aal2`, like enrolling; the user's first factor removes
     * every other unverified one and ends the user's other sessions, so a factor enrolled by
     * someone who had only the password, and their sessions, do not outlive the owner's.
     * A WebAuthn factor is answered with `credential` (the authenticator's JSON) in place of
     * `code`; any answer spends its challenge.
     */
    async verify(
      who: SignedIn,
      factorId: string,
      input: { challenge_id?: unknown; code?: unknown; credential?: unknown },
      client: ClientInfo,
    ): Promise<Session> {
      const challengeId = input.challenge_id;
      if (!isUuid(factorId) || typeof challengeId !== 'string' || !isUuid(challengeId)) throw challengeInvalid();
      await limits.assertMfa(who.userId);
      const code = typeof input.code === 'string' ? input.code.trim() : '';
      const { rows: types } = await db.query<{ factor_type: string }>(
        'select factor_type from auth.mfa_factors where id = $1 and user_id = $2',
        [factorId, who.userId],
      );
      const method = types[0]?.factor_type === 'webauthn' ? 'webauthn' : 'totp';
      let failed = false;
      try {
        return await stepUp(who, method, client, async (tx, now) => {
          // A user's verifications one at a time (as enrolments are): of two factors verified
          // at once for a user without one, the first removes the other, which then fails.
          await tx.query('select 1 from auth.users where id = $1 for update', [who.userId]);
          const { rows } = await tx.query<
            { secret: string; last_step: string | null; failures: number; live: boolean; factor_type: string } & WebAuthnFactorRow
          >(
            `select f.secret, f.last_step::text as last_step, c.failures, f.status, f.factor_type, c.webauthn_challenge,
               f.credential_id, f.public_key, f.counter::text as counter, f.transports,
               (c.done_at is null and c.expires_at > $4::timestamptz and c.failures < $5) as live
             from auth.mfa_challenges c join auth.mfa_factors f on f.id = c.factor_id
             where c.id = $1 and f.id = $2 and f.user_id = $3 and c.session_id = $6 for update of c, f`,
            [challengeId, factorId, who.userId, iso(now), CHALLENGE_MAX_FAILURES, who.sessionId],
          );
          const row = rows[0];
          if (!row?.live || row.factor_type !== method) return challengeInvalid();
          const first = row.status !== 'verified';
          const others = first
            ? await tx.query(`select 1 from auth.mfa_factors where user_id = $1 and id <> $2 and status = 'verified' limit 1`, [
                who.userId,
                factorId,
              ])
            : null;
          const hadFactor = (others?.rows.length ?? 0) > 0;
          if (first && hadFactor && who.aal !== 'aal2') return mfaRequired();
          if (method === 'webauthn') {
            // One answer per WebAuthn challenge, right or wrong (the authenticator signs each anew).
            await tx.query('update auth.mfa_challenges set done_at = $2::timestamptz where id = $1', [challengeId, iso(now)]);
            const refused = await webauthnFactors.check(tx, factorId, row, input.credential, now);
            if (refused) {
              failed = true;
              return refused;
            }
            await tx.query(`update auth.mfa_factors set status = 'verified', updated_at = $2::timestamptz where id = $1`, [
              factorId,
              iso(now),
            ]);
          } else {
            const step = totpStep(row.secret, code, now);
            if (step === null || (row.last_step !== null && step <= Number(row.last_step))) {
              failed = true;
              await tx.query(
                `update auth.mfa_challenges set failures = failures + 1, done_at = case when failures + 1 >= $2 then $3::timestamptz end where id = $1`,
                [challengeId, CHALLENGE_MAX_FAILURES, iso(now)],
              );
              return wrongCode();
            }
            await tx.query('update auth.mfa_challenges set done_at = $2::timestamptz where id = $1', [challengeId, iso(now)]);
            await tx.query(`update auth.mfa_factors set last_step = $2, status = 'verified', updated_at = $3::timestamptz where id = $1`, [
              factorId,
              step,
              iso(now),
            ]);
          }
          if (first && !hadFactor) {
            await tx.query(`delete from auth.mfa_factors where user_id = $1 and id <> $2 and status <> 'verified'`, [who.userId, factorId]);
            await sessionState.revokeSessions(tx, who.userId, { except: who.sessionId ?? undefined }, now);
          }
          // A first verified factor: every instance's gate hears that this user now needs aal2.
          if (first) await sessionState.factorsChanged(tx, who.userId, { lower: false });
          return null;
        });
      } finally {
        if (failed) await limits.mfaFailed(who.userId);
      }
    },

    /**
     * DELETE /v1/auth/factors/{id}. The last verified factor gone, the user's sessions drop to
     * `aal1` at once and the recovery codes go with it.
     */
    async unenroll(who: SignedIn, factorId: string): Promise<{ id: string }> {
      if (!isUuid(factorId)) throw notFound();
      await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ status: string }>(
          'delete from auth.mfa_factors where id = $1 and user_id = $2 returning status',
          [factorId, who.userId],
        );
        if (!rows[0]) throw notFound();
        await afterRemoval(tx, who.userId);
      });
      return { id: factorId };
    },

    /** POST /v1/auth/factors/recovery-codes (aal2): 10 new single-use codes, shown this once; the old set is void. */
    async recoveryCodes(who: SignedIn): Promise<{ codes: string[] }> {
      if (who.aal !== 'aal2') throw mfaRequired();
      const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
      const now = clock.now();
      await db.transaction(async (tx) => {
        await tx.query('delete from auth.recovery_codes where user_id = $1', [who.userId]);
        for (const c of codes)
          await tx.query('insert into auth.recovery_codes (user_id, hash, created_at) values ($1, $2, $3::timestamptz)', [
            who.userId,
            sha256(normalizeRecovery(c)),
            iso(now),
          ]);
      });
      return { codes };
    },

    /** POST /v1/auth/factors/recover: a recovery code for a new session at `aal2`; each code works once. */
    async recover(who: SignedIn, input: { code?: unknown }, client: ClientInfo): Promise<Session> {
      await limits.assertMfa(who.userId);
      const code = normalizeRecovery(input.code);
      let failed = false;
      try {
        return await stepUp(who, 'recovery', client, async (tx, now) => {
          const { rows } = await tx.query(
            'update auth.recovery_codes set used_at = $3::timestamptz where user_id = $1 and hash = $2 and used_at is null returning id',
            [who.userId, sha256(code), iso(now)],
          );
          if (rows.length) return null;
          failed = true;
          return new ApiError('recovery_code_invalid', 'The recovery code is wrong or was used already.');
        });
      } finally {
        if (failed) await limits.mfaFailed(who.userId);
      }
    },

    /**
     * An operator's reset (DELETE /api/v1/users/{id}/factors): every factor and recovery code
     * of the user goes, and their sessions drop to `aal1` at once. Answers how many factors went.
     * @example await auth.mfa.reset(userId) // 1
     */
    async reset(userId: string): Promise<number> {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query('delete from auth.mfa_factors where user_id = $1 returning id', [userId]);
        await afterRemoval(tx, userId);
        return rows.length;
      });
    },
  };

  /** After factors went: with no verified one left, the recovery codes go and the sessions drop to aal1. */
  async function afterRemoval(tx: Queryable, userId: string): Promise<void> {
    const { rows } = await tx.query(`select 1 from auth.mfa_factors where user_id = $1 and status = 'verified' limit 1`, [userId]);
    const none = rows.length === 0;
    if (none) await tx.query('delete from auth.recovery_codes where user_id = $1', [userId]);
    await sessionState.factorsChanged(tx, userId, { lower: none });
  }
}

export type MfaService = ReturnType<typeof createMfaService>;
