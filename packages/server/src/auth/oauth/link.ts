import type { Queryable } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import type { Accounts } from '../accounts/index.js';
import { normalizeEmail } from '../validate.js';
import { FlowError, type Profile } from './provider.js';

/**
 * Finds the user for a provider profile, else links by verified email, else creates one.
 * An email the provider does not vouch for is kept on the identity only: it never becomes
 * the account's address, never links, and so never stands in the way of its real owner.
 * Linking to an account whose address was unproven is its first proof (accounts.proveEmail).
 * @example const userId = await userFor(accounts, tx, 'github', profile, clock.now());
 */
export async function userFor(accounts: Accounts, tx: Queryable, provider: string, profile: Profile, now: number): Promise<string> {
  let email: string | null = null;
  try {
    email = profile.email ? normalizeEmail(profile.email) : null;
  } catch {
    email = null; // a provider's odd address is not worth refusing the sign-in over
  }
  const verified = email !== null && profile.emailVerified;
  const name = profile.name?.slice(0, 200) ?? null;
  const avatar = profile.avatar && /^https?:\/\//i.test(profile.avatar) && profile.avatar.length <= 2048 ? profile.avatar : null;
  const identity = { provider, providerUserId: profile.id, email };
  const known = await tx.query<{ user_id: string }>(
    'select user_id from auth.identities where provider = $1 and provider_user_id = $2 for update',
    [provider, profile.id],
  );
  let userId: string | null = known.rows[0]?.user_id ?? null;
  if (userId) {
    await accounts.updateIdentityEmail(tx, identity);
  } else {
    let created = false;
    if (verified) {
      userId = (await tx.query<{ id: string }>('select id from auth.users where email = $1 for update', [email])).rows[0]?.id ?? null;
    }
    if (!userId) {
      userId = await accounts.createUser(tx, { email: verified ? email : null, emailConfirmed: verified, name, avatar }, now);
      created = userId !== null;
      // Another request made the account with this (verified) email a moment ago: link to it.
      userId ??= (await tx.query<{ id: string }>('select id from auth.users where email = $1 for update', [email])).rows[0]?.id ?? null;
      if (!userId) throw new FlowError('oauth_failed', `${provider} sign-in could not be completed; try again.`);
    }
    const owner = await accounts.linkIdentity(tx, userId, identity, now);
    // The same provider account signed in twice at once: the first link wins, and only an
    // account made by this request is dropped (one found by its email stays).
    if (owner !== userId && created) await accounts.deleteUser(tx, userId, now);
    userId = owner;
  }
  if (verified && email) {
    await accounts.proveEmail(tx, userId, email, { identity: { provider, providerUserId: profile.id } }, now);
  }
  // Name and picture fill what the user has not set; nothing else is touched.
  await accounts.fillProfile(tx, userId, { name, avatar }, now);
  return userId;
}

/**
 * Attaches a provider account to the signed-in user who asked for it (a PKCE link's code
 * exchanged, or an ID token brought with `link_identity`): only while the session that asked is
 * still open (else 401 invalid_token, GoTrue's session_not_found), and never a provider account
 * another user has (409 identity_exists). Answers the user's id, or the refusal to return from
 * `signInWith` (nothing is written then). The email it carries stays on the identity: it is not
 * the account's address and proves nothing about it.
 * @example return attachIdentity(accounts, tx, { userId, sessionId }, 'corp', profile, now);
 */
export async function attachIdentity(
  accounts: Accounts,
  tx: Queryable,
  link: { userId: string; sessionId: string | null },
  provider: string,
  profile: Profile,
  now: number,
): Promise<string | ApiError> {
  const open = await tx.query('select 1 from auth.sessions where id = $1 and user_id = $2 and revoked_at is null', [
    link.sessionId,
    link.userId,
  ]);
  if (!open.rows.length) {
    return new ApiError('invalid_token', 'The session that started this link has ended; sign in and link again.');
  }
  let email: string | null = null;
  try {
    email = profile.email ? normalizeEmail(profile.email) : null;
  } catch {
    email = null;
  }
  const owner = await accounts.linkIdentity(tx, link.userId, { provider, providerUserId: profile.id, email }, now);
  if (owner !== link.userId) return new ApiError('identity_exists', `This ${provider} account is already linked to another user.`);
  return link.userId;
}
