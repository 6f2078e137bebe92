import type { Session } from '@plinth/shared';
import { isValidPhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { ApiError } from '../../http/index.js';
import { iso, randomDigits, safeEqual, sha256 } from '../../lib/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import type { SessionService } from '../sessions/service.js';

const E164 = /^\+[1-9]\d{6,14}$/;
const INVALID_CODE = 'The code is wrong or no longer valid; ask for a new one.';

/**
 * An E.164 number that numbering plans allow (libphonenumber-js), else 400 `invalid_phone`.
 * Only E.164 is accepted, unformatted: `+46701234567`, not `070-123 45 67`.
 * @example normalizePhone('+46701234567') // '+46701234567'
 */
export function normalizePhone(input: unknown): string {
  const phone = typeof input === 'string' ? input : '';
  if (!E164.test(phone) || !isValidPhoneNumber(phone) || parsePhoneNumberFromString(phone)?.number !== phone) {
    throw new ApiError('invalid_phone', 'The phone number must be in E.164 format: + country code and number, e.g. +46701234567.');
  }
  return phone;
}

// The number is part of the hash: a code row copied to another number does not verify.
const codeHash = (phone: string, code: string) => sha256(`${phone}:${code}`);

/**
 * Phone sign-in with a texted 6-digit code (docs/api.md §5). Paid plans only; the code goes out
 * through the outbox, in the transaction that stores its hash.
 * @example const phone = createPhoneService(deps, sessions); await phone.sendCode({ phone: '+46701234567' }, client);
 */
export function createPhoneService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, settings, limits, outbox, config, accounts } = deps;

  return {
    /** 200 `{sent: true}`; makes a user without email for an unknown number. */
    async sendCode(input: { phone: unknown }, client: ClientInfo): Promise<{ sent: true }> {
      if (settings.project().plan === 'free') {
        throw new ApiError('paid_plan_required', 'Phone sign-in needs a paid plan (Pro or above).');
      }
      if (!settings.auth().phone_enabled) throw new ApiError('provider_disabled', 'Phone sign-in is disabled for this project.');
      // A send-SMS hook (docs/auth.md, "Auth hooks") sends in place of the server's provider.
      if (!deps.smsConfigured && !deps.hooks.sends('sms')) {
        throw new ApiError('sms_not_configured', 'No SMS provider is configured on the server (SMS_PROVIDER); phone codes cannot be sent.');
      }
      const phone = normalizePhone(input.phone);
      await limits.assertPhoneCode(phone, client.ip);
      const code = randomDigits(6);
      const now = clock.now();
      await db.transaction(async (tx) => {
        await accounts.createUser(tx, { phone }, now);
        const { rows } = await tx.query<{ id: string }>('select id from auth.users where phone = $1', [phone]);
        const userId = rows[0].id;
        await accounts.linkIdentity(tx, userId, { provider: 'phone', providerUserId: phone, email: null }, now);
        // One live code per number: this one replaces any earlier one, and its tries start at 0.
        await tx.query(
          `insert into auth.phone_codes (phone, user_id, code_hash, attempts, created_at, expires_at)
           values ($1, $2, $3, 0, $4::timestamptz, $5::timestamptz)
           on conflict (phone) do update set user_id = excluded.user_id, code_hash = excluded.code_hash, attempts = 0,
             created_at = excluded.created_at, expires_at = excluded.expires_at`,
          [phone, userId, codeHash(phone, code), iso(now), iso(now + config.phoneCodeTtlMs)],
        );
        await outbox.enqueue(tx, { channel: 'sms', kind: 'sms_otp', to: phone, data: { code } });
      });
      outbox.kick();
      return { sent: true };
    },

    /**
     * 200 session (with the user); 400 `invalid_code` for a wrong code (the fifth voids it) or
     * none, 400 `code_expired` after 10 minutes. Checked under a row lock: concurrent tries
     * are counted one by one and a code signs in once.
     */
    async verify(input: { phone: unknown; code: unknown }, client: ClientInfo): Promise<Session> {
      if (settings.project().plan === 'free') {
        throw new ApiError('paid_plan_required', 'Phone sign-in needs a paid plan (Pro or above).');
      }
      if (!settings.auth().phone_enabled) throw new ApiError('provider_disabled', 'Phone sign-in is disabled for this project.');
      const phone = normalizePhone(input.phone);
      const code = typeof input.code === 'string' && /^\d{6}$/.test(input.code) ? input.code : null;
      const wrong = new ApiError('invalid_code', INVALID_CODE);
      return sessions.signInWith(
        client,
        async (tx, now) => {
          const { rows } = await tx.query<{ user_id: string; code_hash: string; attempts: number; expired: boolean }>(
            `select user_id, code_hash, attempts, expires_at <= $2::timestamptz as expired from auth.phone_codes where phone = $1 for update`,
            [phone, iso(now)],
          );
          const row = rows[0];
          if (!row) return wrong;
          if (row.expired) {
            await tx.query('delete from auth.phone_codes where phone = $1', [phone]);
            return new ApiError('code_expired', 'The code has expired (codes last 10 minutes); ask for a new one.');
          }
          if (!code || !safeEqual(codeHash(phone, code), row.code_hash)) {
            if (row.attempts + 1 >= config.phoneCodeMaxAttempts) await tx.query('delete from auth.phone_codes where phone = $1', [phone]);
            else await tx.query('update auth.phone_codes set attempts = attempts + 1 where phone = $1', [phone]);
            return wrong;
          }
          await tx.query('delete from auth.phone_codes where phone = $1', [phone]);
          return (await accounts.provePhone(tx, row.user_id, phone, now)) ? row.user_id : wrong;
        },
        'otp',
      );
    },
  };
}

export type PhoneService = ReturnType<typeof createPhoneService>;
