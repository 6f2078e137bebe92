import type { Queryable } from '../../db/index.js';
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
