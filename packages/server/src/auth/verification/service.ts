import type { User } from '@plinth/shared';
import { DbError } from '../../db/index.js';
import { ApiError } from '../../http/errors.js';
import type { AuthDeps } from '../deps.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { consumeOneTimeToken, issueOneTimeToken } from '../one-time.js';
import { findCredentials, findUser } from '../users/repo.js';
import { iso, normalizeEmail } from '../validate.js';

const TOKEN_INVALID = 'The verification link is invalid, expired or already used; ask for a new one.';

/**
 * Email verification: the link of sign-up and of an email change, and resending it.
 * @example const v = verificationService(deps); await v.verifyEmail({ token });
 */
export function verificationService(deps: AuthDeps) {
  const { db, clock, outbox, settings, limits } = deps;

  return {
    /**
     * 200 `{user}`. A `verification` token confirms the address it was sent to; an
     * `email_change` token moves the user to the new address, confirmed.
     */
    async verifyEmail(input: { token: unknown }): Promise<{ user: User }> {
      const now = clock.now();
      const userId = await db
        .transaction(async (tx) => {
          const used = await consumeOneTimeToken(tx, input.token, ['verification', 'email_change'], now);
          if (!used?.userId) return null;
          if (used.kind === 'verification') {
            // Only while the address is still the one the link went to.
            const { rows } = await tx.query(
              'update auth.users set email_confirmed_at = coalesce(email_confirmed_at, $2::timestamptz), updated_at = $2::timestamptz where id = $1 and email = $3 returning id',
              [used.userId, iso(now), used.email],
            );
            return rows.length ? used.userId : null;
          }
          const next = used.payload.email;
          await tx.query(
            'update auth.users set email = $2, email_confirmed_at = $3::timestamptz, updated_at = $3::timestamptz where id = $1',
            [used.userId, next, iso(now)],
          );
          await tx.query(`update auth.identities set email = $2 where user_id = $1 and provider = 'email'`, [used.userId, next]);
          await tx.query(
            `insert into auth.identities (user_id, provider, provider_user_id, email, created_at)
             values ($1, 'email', $2, $3, $4::timestamptz) on conflict (provider, provider_user_id) do nothing`,
            [used.userId, used.userId, next, iso(now)],
          );
          return used.userId;
        })
        .catch((err) => {
          // The new address was taken by another account meanwhile: say so, not "invalid link".
          if (err instanceof DbError && err.sqlstate === '23505') {
            throw new ApiError('email_exists', 'Another account has used this email address in the meantime; choose another one.');
          }
          if (err instanceof DbError && err.sqlstate === '23503') return null; // the user was deleted
          throw err;
        });
      const user = userId ? await findUser(db, userId) : null;
      if (!user) throw new ApiError('token_invalid', TOKEN_INVALID);
      return { user };
    },

    /** 200 always (unknown or already confirmed emails alike); 429 after too many emails to one address. */
    async resend(input: { email: unknown }): Promise<void> {
      const email = normalizeEmail(input.email);
      await limits.assertEmail(email);
      const page = settings.auth().email_verification_url;
      if (!page) return;
      const found = await findCredentials(db, email);
      if (!found || found.confirmed) return;
      await db.transaction(async (tx) => {
        const raw = await issueOneTimeToken(
          tx,
          { kind: 'verification', userId: found.id, email, ttlMs: deps.config.verificationTtlMs },
          clock.now(),
        );
        await queueAuthEmail(outbox, tx, 'verification', email, linkWithToken(page, raw));
      });
      outbox.kick();
    },
  };
}

export type VerificationService = ReturnType<typeof verificationService>;
