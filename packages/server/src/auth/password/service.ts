import type { Session, User } from '@plinth/shared';
import { dbErrorKind, type Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { decoyUser, findCredentials, findUser } from '../accounts/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import { queueAuthEmail, linkWithToken } from '../mail.js';
import { consumeOneTimeToken, issueOneTimeTokenWithCode, type PkceChallenge, pkcePayload, pkceRefused } from '../one-time.js';
import { firstFactor, type SessionService } from '../sessions/service.js';
import { iso } from '../../lib/index.js';
import { isImportedHash } from './hasher.js';
import { allowedRedirect, checkPassword, checkUserData, normalizeEmail } from '../validate.js';

export interface SignUpInput {
  email: unknown;
  password: unknown;
  emailRedirectTo?: string;
  data?: Record<string, unknown>;
  /** The PKCE challenge the verification link is bound to (supabase/auth's PKCE flow). */
  pkce?: PkceChallenge;
}

const INVALID_CREDENTIALS = 'The email or password is wrong.';

/**
 * Email and password: sign-up, sign-in, forgot and reset (docs/api.md §5).
 * @example const pw = createPasswordService(deps, sessions); await pw.signIn({ email, password }, { ip, userAgent: null });
 */
export function createPasswordService(deps: AuthDeps, sessions: SessionService) {
  const { db, clock, hasher, limits, settings, outbox, accounts } = deps;

  /**
   * A verification link for a sign-up, bound to the password that sign-up chose, and its mail,
   * held back `delayMs` when the recipient had a mail this minute (never dropped).
   */
  async function sendVerification(
    tx: Queryable,
    userId: string,
    email: string,
    page: string,
    hash: string,
    now: number,
    delayMs: number,
    pkce?: PkceChallenge,
  ) {
    const { raw, code } = await issueOneTimeTokenWithCode(
      tx,
      {
        kind: 'verification',
        userId,
        email,
        ttlMs: deps.config.verificationTtlMs,
        payload: { password_hash: hash, ...pkcePayload(pkce) },
        keepEarlier: true,
      },
      now,
    );
    const link = linkWithToken(page, raw, pkce ? 'code' : 'token');
    await queueAuthEmail(outbox, tx, 'verification', email, link, delayMs ? now + delayMs : undefined, code);
  }

  function assertEnabled() {
    if (!settings.auth().email_password_enabled)
      throw new ApiError('provider_disabled', 'Email and password sign-in is disabled for this project.');
  }

  return {
    /** 200 `{user, session}`; session null while the email awaits confirmation. */
    async signUp(input: SignUpInput, client: ClientInfo): Promise<{ user: User; session: Session | null }> {
      assertEnabled();
      const s = settings.auth();
      const email = normalizeEmail(input.email);
      const password = checkPassword(input.password, s.min_password_length);
      const confirm = s.require_email_confirmation;
      const page = allowedRedirect(settings, input.emailRedirectTo, 'emailRedirectTo') ?? s.email_verification_url;
      // Hashed before looking the email up, so a duplicate costs the same as a new account.
      const hash = await hasher.hash(password);
      const now = clock.now();
      let queued = false;
      const data = checkUserData(input.data);
      const result = await db.transaction(async (tx) => {
        const id = await accounts.createUser(tx, { email, data }, now);
        if (!id) {
          if (!confirm) throw new ApiError('email_exists', 'An account with this email already exists; sign in instead.');
          // Answer as for a new account (no enumeration). An unconfirmed address gets a link
          // of its own carrying THIS sign-up's password: whoever proves the address with it
          // gets this password, and the password stored by an earlier sign-up (maybe not the
          // owner's) does not survive the proof (accounts.proveEmail).
          // Its mail waits out the one-a-minute limit rather than being dropped, so the owner
          // always gets a mail of her own sign-up; and while two sign-ups with different
          // passwords are pending, a link of either proves the address with no password at all.
          const existing = await findCredentials(tx, email);
          if (existing && !existing.confirmed && page) {
            await sendVerification(tx, existing.id, email, page, hash, now, await limits.emailDelay(email), input.pkce);
            queued = true;
          }
          return { userId: null, session: null };
        }
        await accounts.setPassword(tx, id, hash, now);
        await accounts.linkEmail(tx, id, email, now);
        if (confirm) {
          // Settings require email_verification_url while confirmation is on; without a page
          // there is no link to send, but still no session before the address is proven.
          if (page) {
            await limits.emailDelay(email); // counted, never refused: this address has had no mail yet
            await sendVerification(tx, id, email, page, hash, now, 0, input.pkce);
            queued = true;
          }
          return { userId: id, session: null };
        }
        return { userId: id, session: await deps.sessionState.startSession(tx, id, client, now, firstFactor('password', now)) };
      });
      if (queued) outbox.kick();
      if (!result.userId) return { user: decoyUser(email, iso(now)), session: null };
      const user = await findUser(db, result.userId);
      if (!user) throw new ApiError('internal_error', 'The new user could not be read back.');
      return {
        user,
        session: result.session ? await sessions.issue(user.id, result.session.sessionId, result.session.refreshToken) : null,
      };
    },

    /** 200 session; 400 invalid_credentials alike for a wrong password and an unknown email. */
    async signIn(input: { email: unknown; password: unknown }, client: ClientInfo): Promise<Session> {
      assertEnabled();
      const email = normalizeEmail(input.email);
      const password = typeof input.password === 'string' ? input.password.slice(0, 1024) : '';
      await limits.assertSignin(email, client.ip);
      const found = await findCredentials(db, email);
      // Always one argon2 verification, against a dummy hash when there is no account or no
      // password, so the answer takes the same time either way.
      const ok = await hasher.verify(found?.hash ?? (await hasher.dummyHash()), password);
      if (!found?.hash || !ok) {
        await limits.signinFailed(email, client.ip);
        throw new ApiError('invalid_credentials', INVALID_CREDENTIALS);
      }
      if (settings.auth().require_email_confirmation && !found.confirmed) {
        throw new ApiError('email_not_confirmed', 'Confirm the email address first: follow the link in the verification email.');
      }
      // An imported bcrypt hash (a Supabase export, a seed) becomes argon2id at its first good sign-in.
      if (isImportedHash(found.hash)) await accounts.rehashPassword(db, found.id, found.hash, await hasher.hash(password), clock.now());
      return sessions.signIn(found.id, client, 'password');
    },

    /**
     * 200 always (unknown emails alike); 429 after too many emails to one address. The answer
     * goes before the work, so a known address takes no longer to answer than an unknown one.
     */
    async forgotPassword(input: { email: unknown; pkce?: PkceChallenge }): Promise<void> {
      assertEnabled();
      const email = normalizeEmail(input.email);
      await limits.assertEmail(email);
      const page = settings.auth().password_reset_url;
      if (!page) {
        deps.log.warn('forgot-password: no password_reset_url is configured; no email sent');
        return;
      }
      deps.later(async () => {
        const found = await findCredentials(db, email);
        if (!found) return;
        await db.transaction(async (tx) => {
          const { raw, code } = await issueOneTimeTokenWithCode(
            tx,
            { kind: 'reset', userId: found.id, email, ttlMs: deps.config.resetTtlMs, payload: pkcePayload(input.pkce) },
            clock.now(),
          );
          await queueAuthEmail(outbox, tx, 'reset', email, linkWithToken(page, raw, input.pkce ? 'code' : 'token'), undefined, code);
        });
        outbox.kick();
      });
    },

    /**
     * A reset link used as a sign-in (GoTrue's `verify` of type `recovery`, supabase/auth): the
     * link proves the address as a magic link does (at its first proof every credential
     * attached before goes, the password included; the user then sets one with a recent
     * sign-in), the other reset links die, and a session opens in the same transaction.
     */
    async signInWithResetLink(input: { token: unknown; codeVerifier?: unknown }, client: ClientInfo): Promise<Session> {
      assertEnabled();
      const invalid = new ApiError('token_invalid', 'The reset link is invalid, expired or already used; ask for a new one.');
      return sessions.signInWith(
        client,
        async (tx, now) => {
          const used = await consumeOneTimeToken(tx, input.token, ['reset'], now);
          if (!used?.userId || !used.email || pkceRefused(used.payload, input.codeVerifier)) return invalid;
          if ((await accounts.proveEmail(tx, used.userId, used.email, {}, now)) === 'moved') return invalid;
          await tx.query(`delete from auth.one_time_tokens where user_id = $1 and kind = 'reset' and consumed_at is null`, [used.userId]);
          return used.userId;
        },
        'magic_link',
      );
    },

    /**
     * 200 `{user}`. The link proves the address: at its first proof everything attached before
     * goes but the new password; either way every session of the user ends and the other
     * reset links die. A link mailed to an address the account no longer has is void.
     */
    async resetPassword(input: { token: unknown; password: unknown }): Promise<{ user: User }> {
      assertEnabled();
      const password = checkPassword(input.password, settings.auth().min_password_length);
      const hash = await hasher.hash(password);
      const now = clock.now();
      const userId = await db
        .transaction(async (tx) => {
          const used = await consumeOneTimeToken(tx, input.token, ['reset'], now);
          if (!used?.userId || !used.email) return null;
          const proof = await accounts.proveEmail(tx, used.userId, used.email, { passwordHash: hash }, now);
          if (proof === 'moved') return null;
          if (proof === 'already') await accounts.setPassword(tx, used.userId, hash, now);
          await accounts.revokeSessions(tx, used.userId, {}, now);
          await tx.query(`delete from auth.one_time_tokens where user_id = $1 and kind = 'reset' and consumed_at is null`, [used.userId]);
          return used.userId;
        })
        .catch((err) => {
          if (dbErrorKind(err) === 'foreign_key_violation') return null; // user deleted meanwhile
          throw err;
        });
      if (!userId) throw new ApiError('token_invalid', 'The reset link is invalid, expired or already used; ask for a new one.');
      const user = await findUser(db, userId);
      if (!user) throw new ApiError('token_invalid', 'The reset link is invalid, expired or already used; ask for a new one.');
      return { user };
    },
  };
}

export type PasswordService = ReturnType<typeof createPasswordService>;
