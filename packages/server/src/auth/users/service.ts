import type { User } from '@plinth/shared';
import { ApiError } from '../../http/errors.js';
import type { AuthDeps } from '../deps.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { issueOneTimeToken } from '../one-time.js';
import type { SessionService } from '../sessions/service.js';
import { checkPassword, iso, normalizeEmail } from '../validate.js';
import { findUser } from './repo.js';

export interface UserPatch {
  email?: unknown;
  password?: unknown;
  name?: unknown;
  avatar?: unknown;
  /** Page for the email-change link instead of `email_verification_url` (must be allowlisted). */
  emailRedirectTo?: unknown;
}

function text(value: unknown, field: string, max: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length > max) {
    throw new ApiError('invalid_request', `${field} must be a string of at most ${max} characters, or null.`, [
      { field, message: 'is invalid' },
    ]);
  }
  return value;
}

/**
 * The signed-in user's own record: GET and PATCH /v1/auth/user.
 * @example const users = userService(deps, sessions); await users.update(sub, sessionId, { name: 'Ann' });
 */
export function userService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, settings, outbox, hasher, limits } = deps;

  return {
    async get(userId: string): Promise<User> {
      const user = await findUser(db, userId);
      if (!user) throw new ApiError('user_not_found', 'The user of this access token no longer exists.');
      return user;
    },

    /**
     * Name and avatar change at once; a password change ends the user's other sessions; an
     * email change (or a first email) takes effect only when the link sent to the new
     * address is used (verify-email), so the address is proven before it is trusted.
     */
    async update(userId: string, sessionId: string | null, patch: UserPatch): Promise<User> {
      const s = settings.auth();
      const name = patch.name === undefined ? undefined : text(patch.name, 'name', 200);
      const avatar = patch.avatar === undefined ? undefined : text(patch.avatar, 'avatar', 2048);
      const password = patch.password === undefined ? undefined : checkPassword(patch.password, s.min_password_length);
      const hash = password === undefined ? undefined : await hasher.hash(password);
      const current = await findUser(db, userId);
      if (!current) throw new ApiError('user_not_found', 'The user of this access token no longer exists.');
      let newEmail: string | null = null;
      let page: string | null = null;
      if (patch.email !== undefined) {
        const email = normalizeEmail(patch.email);
        if (email !== current.email) {
          newEmail = email;
          const redirect = patch.emailRedirectTo;
          if (redirect !== undefined && (typeof redirect !== 'string' || !settings.isRedirectAllowed(redirect))) {
            throw new ApiError('redirect_not_allowed', 'emailRedirectTo is not in the allowed redirect URLs of the project.');
          }
          page = (redirect as string | undefined) ?? s.email_verification_url;
          if (!page) {
            throw new ApiError(
              'invalid_request',
              'Changing the email needs the email_verification_url auth setting (the page that receives ?token=).',
            );
          }
          const taken = await db.query('select 1 from auth.users where email = $1 and id <> $2', [email, userId]);
          if (taken.rows.length) throw new ApiError('email_exists', 'Another account already uses this email.');
          await limits.assertEmail(email);
        }
      }
      const now = iso(clock.now());
      await db.transaction(async (tx) => {
        if (name !== undefined || avatar !== undefined) {
          await tx.query(
            `update auth.users set name = case when $2 then $3 else name end, avatar = case when $4 then $5 else avatar end, updated_at = $6::timestamptz where id = $1`,
            [userId, name !== undefined, name ?? null, avatar !== undefined, avatar ?? null, now],
          );
        }
        if (hash !== undefined) {
          await tx.query(
            `insert into auth.passwords (user_id, hash, updated_at) values ($1, $2, $3::timestamptz)
             on conflict (user_id) do update set hash = excluded.hash, updated_at = excluded.updated_at`,
            [userId, hash, now],
          );
          await tx.query('update auth.users set updated_at = $2::timestamptz where id = $1', [userId, now]);
          // Whoever else held a session with the old password loses it; this one stays.
          await sessions.revoke(tx, userId, sessionId ? { except: sessionId } : {});
        }
        if (newEmail && page) {
          const raw = await issueOneTimeToken(
            tx,
            { kind: 'email_change', userId, email: newEmail, ttlMs: deps.config.verificationTtlMs, payload: { email: newEmail } },
            clock.now(),
          );
          await queueAuthEmail(outbox, tx, 'email_change', newEmail, linkWithToken(page, raw));
        }
      });
      if (newEmail) outbox.kick();
      return this.get(userId);
    },
  };
}

export type UserService = ReturnType<typeof userService>;
