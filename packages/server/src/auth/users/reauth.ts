import { ApiError } from '../../http/index.js';
import { iso, randomDigits, safeEqual, sha256 } from '../../lib/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';

/** What a change of password or email may carry to prove the caller is still the account's owner. */
export interface ReauthProof {
  current_password?: unknown;
  nonce?: unknown;
}

const REQUIRED =
  'Changing the password or email needs a recent sign-in: send current_password, or the code from POST /v1/auth/reauthenticate as nonce.';
const WRONG_CODE = 'The reauthentication code is wrong or no longer valid; ask for a new one.';
const MAX_ATTEMPTS = 5;
const codeHash = (userId: string, code: string) => sha256(`${userId}:${code}`);

/**
 * Reauthentication (docs/security.md): a stolen access token must not be enough to change the
 * password or the email for good. The change is allowed when the session was opened by a
 * sign-in a few minutes ago (AUTH_REAUTH_WINDOW_SECONDS), or with the current password, or
 * with a 6-digit code sent to the confirmed email (or phone) by `sendCode`.
 * @example await reauth.assert(userId, sessionId, { current_password }, client);
 */
export function createReauthService(deps: AuthDeps) {
  const { db, clock, hasher, limits, outbox, config } = deps;
  return {
    /** Resolves when the caller may change credentials; 403 `reauthentication_required`, 400 `invalid_credentials` / `invalid_code` otherwise. */
    async assert(userId: string, sessionId: string | null, proof: ReauthProof, client: ClientInfo): Promise<void> {
      const now = clock.now();
      // A proof that is sent is checked, inside the window too: a wrong one is never accepted.
      if (proof.current_password === undefined && proof.nonce === undefined && sessionId) {
        const { rows } = await db.query<{ recent: boolean }>(
          'select created_at > $3::timestamptz as recent from auth.sessions where id = $1::uuid and user_id = $2',
          [sessionId, userId, iso(now - config.reauthWindowMs)],
        );
        if (rows[0]?.recent) return;
      }
      if (typeof proof.current_password === 'string') {
        // Counted like sign-in failures, under a key of the user (who may have no email).
        const key = `user:${userId}`;
        await limits.assertSignin(key, client.ip);
        const { rows } = await db.query<{ hash: string }>('select hash from auth.passwords where user_id = $1', [userId]);
        const ok = await hasher.verify(rows[0]?.hash ?? (await hasher.dummyHash()), proof.current_password.slice(0, 1024));
        if (rows[0] && ok) return;
        await limits.signinFailed(key, client.ip);
        throw new ApiError('invalid_credentials', 'The current password is wrong.');
      }
      if (typeof proof.nonce === 'string') {
        const ok = await db.transaction(async (tx) => {
          const { rows } = await tx.query<{ code_hash: string; attempts: number; live: boolean }>(
            'select code_hash, attempts, expires_at > $2::timestamptz as live from auth.reauth_codes where user_id = $1 for update',
            [userId, iso(now)],
          );
          const row = rows[0];
          if (!row) return false;
          if (row.live && safeEqual(codeHash(userId, String(proof.nonce).slice(0, 16)), row.code_hash)) {
            await tx.query('delete from auth.reauth_codes where user_id = $1', [userId]);
            return true;
          }
          if (!row.live || row.attempts + 1 >= MAX_ATTEMPTS) await tx.query('delete from auth.reauth_codes where user_id = $1', [userId]);
          else await tx.query('update auth.reauth_codes set attempts = attempts + 1 where user_id = $1', [userId]);
          return false;
        });
        if (ok) return;
        throw new ApiError('invalid_code', WRONG_CODE);
      }
      // A user with no credential at all but its session (an anonymous one) has nothing to
      // reauthenticate with: its session is the account, and adding an email or a password is
      // how it is upgraded.
      const { rows: bare } = await db.query<{ bare: boolean }>(
        `select u.email is null and u.phone is null and not exists (select 1 from auth.passwords p where p.user_id = u.id)
           and not exists (select 1 from auth.identities i where i.user_id = u.id)
           and not exists (select 1 from auth.passkeys k where k.user_id = u.id) as bare
         from auth.users u where u.id = $1`,
        [userId],
      );
      if (bare[0]?.bare && proof.current_password === undefined && proof.nonce === undefined) return;
      throw new ApiError('reauthentication_required', REQUIRED);
    },

    /**
     * POST /v1/auth/reauthenticate: a 6-digit code (10 minutes, one live per user, five wrong
     * tries void it) to the confirmed email, else the confirmed phone.
     */
    async sendCode(userId: string, client: ClientInfo): Promise<{ sent: true; channel: 'email' | 'sms' }> {
      const { rows } = await db.query<{ email: string | null; phone: string | null }>(
        `select case when email_confirmed_at is not null then email end as email,
                case when phone_confirmed_at is not null then phone end as phone
         from auth.users where id = $1`,
        [userId],
      );
      const to = rows[0];
      if (!to?.email && !to?.phone) {
        throw new ApiError('invalid_request', 'The account has no confirmed email or phone to send a code to; use current_password.');
      }
      if (to.email) await limits.assertEmail(to.email);
      else if (to.phone) await limits.assertPhoneCode(to.phone, client.ip);
      const code = randomDigits(6);
      const now = clock.now();
      await db.transaction(async (tx) => {
        await tx.query(
          `insert into auth.reauth_codes (user_id, code_hash, attempts, created_at, expires_at) values ($1, $2, 0, $3::timestamptz, $4::timestamptz)
           on conflict (user_id) do update set code_hash = excluded.code_hash, attempts = 0, created_at = excluded.created_at, expires_at = excluded.expires_at`,
          [userId, codeHash(userId, code), iso(now), iso(now + config.reauthCodeTtlMs)],
        );
        if (to.email)
          await outbox.enqueue(tx, { channel: 'email', kind: 'reauthentication', to: to.email, data: { code, email: to.email } });
        else await outbox.enqueue(tx, { channel: 'sms', kind: 'sms_otp', to: to.phone as string, data: { code } });
      });
      outbox.kick();
      return { sent: true, channel: to.email ? 'email' : 'sms' };
    },
  };
}

export type ReauthService = ReturnType<typeof createReauthService>;
