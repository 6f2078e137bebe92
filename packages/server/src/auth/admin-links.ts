import { ApiError, fromDbError } from '../http/index.js';
import { findCredentials } from './accounts/index.js';
import type { AuthDeps } from './deps.js';
import { linkWithToken, queueAuthEmail } from './mail.js';
import { issueOneTimeTokenWithCode, type OneTimeKind } from './one-time.js';
import { checkPassword, checkUserData, normalizeEmail } from './validate.js';

/** The links an admin may make for a user: GoTrue's `generate_link` types. */
export type AdminLinkType = 'signup' | 'invite' | 'magiclink' | 'recovery' | 'email_change';

const KIND: Record<AdminLinkType, OneTimeKind> = {
  signup: 'verification',
  invite: 'verification',
  magiclink: 'magic_link',
  recovery: 'reset',
  email_change: 'email_change',
};

/**
 * Links made by the secret key's holder instead of mailed (GoTrue's `admin/generate_link`): the
 * same one-time tokens the methods mail, so the same rules take them (a sign-up's link carries
 * its password through the proof, a reset link proves the address). `signup` and `invite` make
 * the user (unconfirmed) when the address is new and are 422 `email_exists` when it is taken;
 * `magiclink` and `recovery` need an existing user (404 `user_not_found`).
 * @example const { userId, token } = await links.generate({ type: 'magiclink', email: 'ann@example.com' });
 */
export function createAdminLinks(deps: AuthDeps) {
  const { db, clock, hasher, accounts, settings, limits, outbox } = deps;
  return {
    /**
     * An invitation (GoTrue's `POST /invite`): the user is made (unconfirmed, `data` as its
     * metadata) and mailed a verification link to `page` (an allowed redirect, else
     * email_verification_url), with the one-mail-a-minute limit of every auth mail. Using the
     * link proves the address and signs in; the user then sets a password.
     */
    async invite(input: { email: unknown; data?: unknown; page: string | null }): Promise<{ userId: string }> {
      const email = normalizeEmail(input.email);
      if (!input.page) {
        throw new ApiError(
          'invalid_request',
          'An invitation needs the email_verification_url auth setting (the page that receives ?token=).',
        );
      }
      await limits.assertEmail(email);
      const data = checkUserData(input.data);
      const now = clock.now();
      const page = input.page;
      const userId = await db
        .transaction(async (tx) => {
          const id = await accounts.createUser(tx, { email, data }, now);
          if (!id) throw new ApiError('email_exists', 'A user with this email address has already been registered.');
          await accounts.linkEmail(tx, id, email, now);
          const { raw: token, code } = await issueOneTimeTokenWithCode(
            tx,
            { kind: 'verification', userId: id, email, ttlMs: deps.config.verificationTtlMs, keepEarlier: true },
            now,
          );
          await queueAuthEmail(outbox, tx, 'verification', email, linkWithToken(page, token), undefined, code);
          return id;
        })
        .catch((err) => {
          throw fromDbError(err, {
            constraints: { users_email_key: ['email_exists', 'A user with this email address has already been registered.'] },
          });
        });
      outbox.kick();
      return { userId };
    },

    async generate(input: {
      type: AdminLinkType;
      email: unknown;
      password?: unknown;
      data?: unknown;
      /** `email_change`: the address the user moves to (the link proves it, as the user's own change). */
      newEmail?: unknown;
    }): Promise<{ userId: string; token: string; code: string }> {
      const email = normalizeEmail(input.email);
      const newEmail = input.type === 'email_change' ? normalizeEmail(input.newEmail) : null;
      const kind = KIND[input.type];
      const hash =
        input.type === 'signup' && input.password !== undefined
          ? await hasher.hash(checkPassword(input.password, settings.auth().min_password_length))
          : null;
      const data = checkUserData(input.data);
      const now = clock.now();
      return db
        .transaction(async (tx) => {
          let userId: string;
          if (input.type === 'signup' || input.type === 'invite') {
            const id = await accounts.createUser(tx, { email, data }, now);
            if (!id) throw new ApiError('email_exists', 'A user with this email address has already been registered.');
            if (hash) await accounts.setPassword(tx, id, hash, now);
            await accounts.linkEmail(tx, id, email, now);
            userId = id;
          } else {
            const found = await findCredentials(tx, email);
            if (!found) throw new ApiError('user_not_found', 'No user has this email address.');
            userId = found.id;
          }
          if (newEmail) {
            const { rows } = await tx.query('select 1 from auth.users where email = $1', [newEmail]);
            if (rows.length) throw new ApiError('email_exists', 'A user with this email address has already been registered.');
            const { raw: token, code } = await issueOneTimeTokenWithCode(
              tx,
              { kind, userId, email: newEmail, ttlMs: deps.config.verificationTtlMs, payload: { email: newEmail } },
              now,
            );
            return { userId, token, code };
          }
          const ttlMs =
            kind === 'reset' ? deps.config.resetTtlMs : kind === 'magic_link' ? deps.config.magicLinkTtlMs : deps.config.verificationTtlMs;
          const { raw: token, code } = await issueOneTimeTokenWithCode(
            tx,
            { kind, userId, email, ttlMs, payload: hash ? { password_hash: hash } : {}, keepEarlier: kind === 'verification' },
            now,
          );
          return { userId, token, code };
        })
        .catch((err) => {
          throw fromDbError(err, {
            constraints: { users_email_key: ['email_exists', 'A user with this email address has already been registered.'] },
          });
        });
    },
  };
}

export type AdminLinks = ReturnType<typeof createAdminLinks>;
