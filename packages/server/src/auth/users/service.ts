import type { User } from '@plinth/shared';
import { ApiError } from '../../http/index.js';
import { findUser } from '../accounts/index.js';
import type { AuthDeps, ClientInfo } from '../deps.js';
import { linkWithToken, queueAuthEmail } from '../mail.js';
import { issueOneTimeTokenWithCode } from '../one-time.js';
import { allowedRedirect, checkPassword, checkUserData, normalizeEmail, storableText } from '../validate.js';
import { type ReauthProof, createReauthService } from './reauth.js';

export interface UserPatch extends ReauthProof {
  email?: unknown;
  password?: unknown;
  name?: unknown;
  avatar?: unknown;
  /** Top-level keys merged into the user's own metadata (null removes a key); GoTrue's `data`. */
  data?: unknown;
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
  if (!storableText(value)) {
    throw new ApiError('invalid_value', `${field} must not contain NUL characters or unpaired surrogates.`, [
      { field, message: 'has characters that cannot be stored' },
    ]);
  }
  return value;
}

/** An avatar is a picture URL an app will put in `<img src>`: http(s) only, never `javascript:` or `data:`. */
function avatarUrl(value: unknown): string | null {
  const v = text(value, 'avatar', 2048);
  if (v === null) return null;
  let ok = false;
  try {
    const u = new URL(v);
    ok = (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
  } catch {
    ok = false;
  }
  if (!ok)
    throw new ApiError('invalid_request', 'avatar must be an http(s) URL, or null.', [
      { field: 'avatar', message: 'must be an http(s) URL' },
    ]);
  return v;
}

/**
 * The signed-in user's own record: GET and PATCH /v1/auth/user, POST /v1/auth/reauthenticate.
 * @example const users = createUserService(deps); await users.update(sub, sessionId, { name: 'Ann' }, client);
 */
export function createUserService(deps: AuthDeps) {
  const { db, clock, settings, outbox, hasher, limits, accounts } = deps;
  const reauth = createReauthService(deps);
  return {
    async get(userId: string): Promise<User> {
      const user = await findUser(db, userId);
      if (!user) throw new ApiError('user_not_found', 'The user of this access token no longer exists.');
      return user;
    },

    /**
     * DELETE /v1/auth/identities/{provider}: unlinks a sign-in method under the reauthentication
     * rule (a recent sign-in, the current password or a code); 404 `identity_not_found`, 409
     * `last_identity` for the only one. Unlinking the email or phone removes the address.
     */
    async unlinkIdentity(
      userId: string,
      sessionId: string | null,
      provider: unknown,
      proof: ReauthProof,
      client: ClientInfo,
    ): Promise<User> {
      if (typeof provider !== 'string' || !/^[A-Za-z0-9_:.-]{1,100}$/.test(provider))
        throw new ApiError('identity_not_found', 'The user has no identity of this provider.');
      await reauth.assert(userId, sessionId, proof, client);
      const outcome = await db.transaction((tx) => accounts.unlinkIdentity(tx, userId, provider, clock.now()));
      if (outcome === 'none') throw new ApiError('identity_not_found', 'The user has no identity of this provider.');
      if (outcome === 'last')
        throw new ApiError('last_identity', 'This is the only way this user signs in; link another before removing it.');
      const user = await findUser(db, userId);
      if (!user) throw new ApiError('user_not_found', 'The user of this access token no longer exists.');
      return user;
    },

    /** POST /v1/auth/reauthenticate: a code to the confirmed email or phone, for `nonce`. */
    reauthenticate: (userId: string, client: ClientInfo) => reauth.sendCode(userId, client),

    /**
     * Name and avatar change at once. The password and the email change only after
     * reauthentication (a recent sign-in, the current password, or a code): a stolen access
     * token is not a permanent takeover. A password change ends the user's other sessions; an
     * email change (or a first email) takes effect only when the link sent to the new address
     * is used, and the old address is told. Whether the new address is taken is not said here
     * (409 at the link), so this cannot be used to find accounts.
     */
    async update(userId: string, sessionId: string | null, patch: UserPatch, client: ClientInfo): Promise<User> {
      const s = settings.auth();
      const name = patch.name === undefined ? undefined : text(patch.name, 'name', 200);
      const avatar = patch.avatar === undefined ? undefined : avatarUrl(patch.avatar);
      const password = patch.password === undefined ? undefined : checkPassword(patch.password, s.min_password_length);
      const data = patch.data === undefined ? undefined : checkUserData(patch.data);
      const current = await findUser(db, userId);
      if (!current) throw new ApiError('user_not_found', 'The user of this access token no longer exists.');
      let newEmail: string | null = null;
      let page: string | null = null;
      if (patch.email !== undefined) {
        const email = normalizeEmail(patch.email);
        if (email !== current.email) {
          newEmail = email;
          page = allowedRedirect(settings, patch.emailRedirectTo, 'emailRedirectTo') ?? s.email_verification_url;
          if (!page) {
            throw new ApiError(
              'invalid_request',
              'Changing the email needs the email_verification_url auth setting (the page that receives ?token=).',
            );
          }
        }
      }
      if (password !== undefined || newEmail) await reauth.assert(userId, sessionId, patch, client);
      if (newEmail) await limits.assertEmail(newEmail);
      const hash = password === undefined ? undefined : await hasher.hash(password);
      const now = clock.now();
      await db.transaction(async (tx) => {
        if (name !== undefined || avatar !== undefined) await accounts.setProfile(tx, userId, { name, avatar }, now);
        if (data !== undefined) await accounts.mergeUserData(tx, userId, data, now);
        if (hash !== undefined) {
          await accounts.setPassword(tx, userId, hash, now);
          // Whoever else held a session with the old password loses it; this one stays.
          await accounts.revokeSessions(tx, userId, sessionId ? { except: sessionId } : {}, now);
        }
        if (newEmail && page) {
          const { raw, code } = await issueOneTimeTokenWithCode(
            tx,
            {
              kind: 'email_change',
              userId,
              email: newEmail,
              ttlMs: deps.config.verificationTtlMs,
              // The session that asked survives the change; the others end (their tokens claim the old address).
              payload: sessionId ? { email: newEmail, session_id: sessionId } : { email: newEmail },
            },
            now,
          );
          await queueAuthEmail(outbox, tx, 'email_change', newEmail, linkWithToken(page, raw), undefined, code);
          if (current.email && current.email_confirmed_at) {
            await outbox.enqueue(tx, {
              channel: 'email',
              kind: 'email_change_notice',
              to: current.email,
              data: { email: current.email, new_email: newEmail },
            });
          }
        }
      });
      if (newEmail) outbox.kick();
      return this.get(userId);
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
