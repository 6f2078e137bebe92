import type { Session, User } from '@plinth/shared';
import { dbErrorKind, type Queryable } from '../../db/index.js';
import { ApiError, fromDbError } from '../../http/index.js';
import { findCredentials, findUser } from '../accounts/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import type { SessionService } from '../sessions/service.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { consumeOneTimeToken, issueOneTimeTokenWithCode, pendingSignup, pkceRefused } from '../one-time.js';
import { normalizeEmail } from '../validate.js';

const TOKEN_INVALID = 'The verification link is invalid, expired or already used; ask for a new one.';

/**
 * Email verification: the link of sign-up and of an email change, and resending it.
 * @example const v = createVerificationService(deps); await v.verifyEmail({ token });
 */
export function createVerificationService(deps: AuthDeps, sessions?: SessionService) {
  const { db, clock, outbox, settings, limits, accounts } = deps;

  /**
   * Uses a `verification` or `email_change` link: a `verification` token proves the address it
   * was sent to (the password of the sign-up that asked for it is the one that survives); an
   * `email_change` token moves the user to the new address, confirmed, and ends the user's
   * sessions but the one that asked for the change. The user's id, or null for a void link.
   */
  async function proveLink(tx: Queryable, token: unknown, now: number, verifier?: unknown): Promise<string | null> {
    const used = await consumeOneTimeToken(tx, token, ['verification', 'email_change'], now);
    if (!used?.userId || !used.email || pkceRefused(used.payload, verifier)) return null;
    if (used.kind === 'verification') {
      const proof = await accounts.proveEmail(
        tx,
        used.userId,
        used.email,
        { signupPassword: used.payload.password_hash ?? null, signupPasskey: used.payload.passkey_id ?? null },
        now,
      );
      return proof === 'moved' ? null : used.userId;
    }
    await accounts.changeEmail(tx, used.userId, used.payload.email, used.payload.session_id ?? null, now);
    return used.userId;
  }

  /** A failed proof's answer: null when the user was deleted meanwhile, else the error (a taken address: 409). */
  function linkFailed(err: unknown): null {
    // The new address was taken by another account meanwhile: say so, not "invalid link".
    if (dbErrorKind(err) === 'foreign_key_violation') return null; // the user was deleted
    throw fromDbError(err, {
      constraints: {
        users_email_key: ['email_exists', 'Another account has used this email address in the meantime; choose another one.'],
      },
    });
  }

  return {
    /**
     * 200 `{user}`. A `verification` token proves the address it was sent to (the password
     * of the sign-up that asked for it is the one that survives); an `email_change` token
     * moves the user to the new address, confirmed, and ends the user's sessions but the one
     * that asked for the change.
     */
    async verifyEmail(input: { token: unknown }): Promise<{ user: User }> {
      const now = clock.now();
      const userId = await db.transaction((tx) => proveLink(tx, input.token, now)).catch(linkFailed);
      const user = userId ? await findUser(db, userId) : null;
      if (!user) throw new ApiError('token_invalid', TOKEN_INVALID);
      return { user };
    },

    /**
     * The same proof, and a session for its user opened in the same transaction (amr
     * `magic_link`: the link was mailed to the address): GoTrue's `verify` of a sign-up or an
     * email change signs the user in (supabase/auth).
     */
    async verifyAndSignIn(input: { token: unknown; codeVerifier?: unknown }, client: ClientInfo): Promise<Session> {
      if (!sessions) throw new Error('verifyAndSignIn needs the session service');
      return sessions
        .signInWith(
          client,
          async (tx, now) => (await proveLink(tx, input.token, now, input.codeVerifier)) ?? new ApiError('token_invalid', TOKEN_INVALID),
          'magic_link',
        )
        .catch((err) => {
          if (err instanceof ApiError) throw err;
          if (linkFailed(err) === null) throw new ApiError('token_invalid', TOKEN_INVALID);
          throw err;
        });
    },

    /**
     * 200 always (unknown or already confirmed emails alike); 429 after too many emails to one
     * address. The link carries the password of the account's pending sign-up when there is
     * exactly one (several sign-ups with different passwords: none survives the proof). The
     * answer goes before the work, so known and unknown addresses take the same time.
     */
    async resend(input: { email: unknown }): Promise<void> {
      const email = normalizeEmail(input.email);
      await limits.assertEmail(email);
      const page = settings.auth().email_verification_url;
      if (!page) return;
      deps.later(async () => {
        const found = await findCredentials(db, email);
        if (!found || found.confirmed) return;
        await db.transaction(async (tx) => {
          const now = clock.now();
          const { hash, passkey } = await pendingSignup(tx, found.id, now);
          // The fresh link replaces the earlier ones that bind the same credential (the same
          // sign-up); links of other sign-ups stay theirs.
          await tx.query(
            `delete from auth.one_time_tokens where user_id = $1 and kind = 'verification' and consumed_at is null
             and (payload ->> 'password_hash') is not distinct from $2 and (payload ->> 'passkey_id') is not distinct from $3`,
            [found.id, hash, passkey],
          );
          const { raw, code } = await issueOneTimeTokenWithCode(
            tx,
            {
              kind: 'verification',
              userId: found.id,
              email,
              ttlMs: deps.config.verificationTtlMs,
              payload: hash ? { password_hash: hash } : passkey ? { passkey_id: passkey } : {},
              keepEarlier: true,
            },
            now,
          );
          await queueAuthEmail(outbox, tx, 'verification', email, linkWithToken(page, raw), undefined, code);
        });
        outbox.kick();
      });
    },
  };
}

export type VerificationService = ReturnType<typeof createVerificationService>;
