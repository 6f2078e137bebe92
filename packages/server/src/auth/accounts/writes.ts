import type { Queryable } from '../../db/index.js';
import { iso } from '../../lib/index.js';
import { randomUUID } from 'node:crypto';
import type { AuthHooks } from '../hooks.js';
import type { SessionState } from '../sessions/state.js';
import { findUser } from './repo.js';

/** What a new user starts with; everything is optional but at least an email or a phone. */
export interface NewUser {
  /** The id to use (a passkey sign-up named it in the credential's user handle); else a new one. */
  id?: string;
  email?: string | null;
  emailConfirmed?: boolean;
  phone?: string | null;
  name?: string | null;
  avatar?: string | null;
  data?: Record<string, unknown>;
}

/** An account at a provider: `email` is what the provider said, vouched for or not (kept here only). */
export interface IdentityInput {
  provider: string;
  providerUserId: string;
  email: string | null;
}

/**
 * The one credential a proof of the address was issued for: it survives the proof, nothing
 * else attached before it does. A verification link carries the password of the sign-up that
 * asked for it (`signupPassword`); a reset link the new password (`passwordHash`); a provider
 * its identity; a magic link nothing.
 */
export interface ProofKeeps {
  passwordHash?: string | null;
  /**
   * The password of the sign-up whose link this is: kept only while no other pending sign-up
   * of the address chose another one. Two sign-ups competing for one unproven address cannot
   * be told apart by the link that proves it (both were mailed to the same mailbox, and the
   * owner may click either), so then no password survives: the one who proved the address
   * sets her own (reset) or signs in by link.
   */
  signupPassword?: string | null;
  identity?: { provider: string; providerUserId: string };
  /**
   * The passkey of the passkey-first sign-up whose link this is: kept only while no other
   * pending sign-up of the address bound another credential (as `signupPassword`).
   */
  signupPasskey?: string | null;
}

/**
 * - `first`: the address was unproven until now; every credential attached before is gone.
 * - `already`: it was proven before; nothing changed.
 * - `moved`: the account no longer has this address (the proof is void).
 */
export type ProofOutcome = 'first' | 'already' | 'moved';

/**
 * Every write to users, passwords and identities, and the rule of docs/security.md
 * ("a credential attached while the address was unproven never survives the first proof
 * of the address"), in one place.
 */
export function createAccountWrites(sessions: SessionState, hooks?: Pick<AuthHooks, 'beforeUserCreated'>) {
  /** Drops what a proof does not keep: passwords, provider identities, sessions, pending links and codes. */
  async function dropUnproven(tx: Queryable, userId: string, email: string, keep: ProofKeeps, now: number) {
    await tx.query('delete from auth.passwords where user_id = $1', [userId]);
    if (keep.passwordHash) {
      await tx.query('insert into auth.passwords (user_id, hash, updated_at) values ($1, $2, $3::timestamptz)', [
        userId,
        keep.passwordHash,
        iso(now),
      ]);
    }
    // The email identity is the address itself and the phone one a number its owner proved
    // with a code; a provider account linked before the proof was linked by whoever had the
    // address unproven.
    await tx.query(
      `delete from auth.identities where user_id = $1 and provider not in ('email', 'phone')
       and not (provider = $2 and provider_user_id = $3)`,
      [userId, keep.identity?.provider ?? '', keep.identity?.providerUserId ?? ''],
    );
    // Second factors and passkeys enrolled while the address was unproven were enrolled by
    // whoever held the account then: a passkey would sign them in, a factor lock the owner out.
    await tx.query('delete from auth.passkeys where user_id = $1 and id is distinct from $2::uuid', [userId, keep.signupPasskey ?? null]);
    await tx.query('delete from auth.mfa_factors where user_id = $1', [userId]);
    await tx.query('delete from auth.recovery_codes where user_id = $1', [userId]);
    await sessions.revokeSessions(tx, userId, {}, now);
    // Links and codes issued before (an email change, a reset) would act for the old holder.
    await tx.query('delete from auth.one_time_tokens where consumed_at is null and (user_id = $1 or (user_id is null and email = $2))', [
      userId,
      email,
    ]);
    await tx.query('delete from auth.reauth_codes where user_id = $1', [userId]);
  }

  return {
    /**
     * Inserts a user; null when the email or phone is taken (the caller decides what that means).
     * Its identities are linked by the caller (`linkEmail`, `linkIdentity`).
     * @example const id = await accounts.createUser(tx, { email, emailConfirmed: true }, now);
     */
    async createUser(tx: Queryable, u: NewUser, now: number): Promise<string | null> {
      const at = iso(now);
      const id = u.id ?? randomUUID();
      // The before-user-created hook (hooks.ts) sees the user as GoTrue shows it, and may refuse.
      await hooks?.beforeUserCreated(tx, {
        id,
        aud: 'authenticated',
        role: 'authenticated',
        email: u.email ?? '',
        phone: u.phone ?? '',
        app_metadata: {},
        user_metadata: u.data ?? {},
        is_anonymous: !u.email && !u.phone,
        created_at: at,
      });
      const { rows } = await tx.query<{ id: string }>(
        `insert into auth.users (id, email, email_confirmed_at, phone, name, avatar, data, created_at, updated_at)
         values (coalesce($8::uuid, gen_random_uuid()), $1, case when $2 then $7::timestamptz end, $3, $4, $5, $6::jsonb, $7::timestamptz, $7::timestamptz)
         on conflict do nothing returning id`,
        [
          u.email ?? null,
          u.emailConfirmed === true,
          u.phone ?? null,
          u.name ?? null,
          u.avatar ?? null,
          JSON.stringify(u.data ?? {}),
          at,
          id,
        ],
      );
      return rows[0]?.id ?? null;
    },

    /**
     * Replaces an imported password hash by the argon2id hash of the same password, unless the
     * password changed meanwhile (the stored hash is no longer `old`).
     */
    async rehashPassword(tx: Queryable, userId: string, old: string, hash: string, now: number): Promise<void> {
      await tx.query('update auth.passwords set hash = $3, updated_at = $4::timestamptz where user_id = $1 and hash = $2', [
        userId,
        old,
        hash,
        iso(now),
      ]);
    },

    /** Sets (or replaces) the user's password hash. */
    async setPassword(tx: Queryable, userId: string, hash: string, now: number): Promise<void> {
      await tx.query(
        `insert into auth.passwords (user_id, hash, updated_at) values ($1, $2, $3::timestamptz)
         on conflict (user_id) do update set hash = excluded.hash, updated_at = excluded.updated_at`,
        [userId, hash, iso(now)],
      );
      await tx.query('update auth.users set updated_at = $2::timestamptz where id = $1', [userId, iso(now)]);
    },

    /**
     * Links a provider account to a user. The first link of a provider account wins: the user
     * it belongs to is returned (another request may have linked it a moment ago).
     * @example const owner = await accounts.linkIdentity(tx, userId, { provider: 'github', providerUserId: '42', email }, now);
     */
    async linkIdentity(tx: Queryable, userId: string, identity: IdentityInput, now: number): Promise<string> {
      const { rows } = await tx.query<{ user_id: string }>(
        `insert into auth.identities (user_id, provider, provider_user_id, email, created_at) values ($1, $2, $3, $4, $5::timestamptz)
         on conflict (provider, provider_user_id) do nothing returning user_id`,
        [userId, identity.provider, identity.providerUserId, identity.email, iso(now)],
      );
      if (rows.length) return userId;
      const first = await tx.query<{ user_id: string }>(
        'select user_id from auth.identities where provider = $1 and provider_user_id = $2',
        [identity.provider, identity.providerUserId],
      );
      return first.rows[0].user_id;
    },

    /**
     * The address `email` of the user is proven (a link mailed to it was used, or a provider
     * vouched for it). At its first proof it is confirmed and every credential attached while
     * it was unproven goes (passwords, provider identities, sessions, pending links), except
     * the one the proof was issued for. Locks the user row.
     * @example if ((await accounts.proveEmail(tx, userId, email, { passwordHash }, now)) === 'moved') return null;
     */
    async proveEmail(tx: Queryable, userId: string, email: string, keep: ProofKeeps, now: number): Promise<ProofOutcome> {
      const { rows } = await tx.query<{ email: string | null; confirmed: boolean }>(
        'select email, email_confirmed_at is not null as confirmed from auth.users where id = $1 for update',
        [userId],
      );
      if (!rows[0] || rows[0].email !== email) return 'moved';
      if (rows[0].confirmed) return 'already';
      await tx.query('update auth.users set email_confirmed_at = $2::timestamptz, updated_at = $2::timestamptz where id = $1', [
        userId,
        iso(now),
      ]);
      const passwordHash = keep.signupPassword
        ? await uncontested(tx, userId, 'password_hash', keep.signupPassword, now)
        : keep.passwordHash;
      const signupPasskey = keep.signupPasskey ? await uncontested(tx, userId, 'passkey_id', keep.signupPasskey, now) : null;
      await dropUnproven(tx, userId, email, { ...keep, passwordHash, signupPasskey }, now);
      return 'first';
    },

    /**
     * Moves the user to a new address whose link was just used: confirmed at once, and the
     * links and codes issued for the old address die with it, and so do the user's sessions
     * but the one that asked for the change (`keep`): their access tokens still claim the old
     * address as verified. Throws the unique violation when another account took the address
     * meanwhile.
     */
    async changeEmail(tx: Queryable, userId: string, next: string, keep: string | null, now: number): Promise<void> {
      await tx.query('update auth.users set email = $2, email_confirmed_at = $3::timestamptz, updated_at = $3::timestamptz where id = $1', [
        userId,
        next,
        iso(now),
      ]);
      await tx.query(`update auth.identities set email = $2 where user_id = $1 and provider = 'email'`, [userId, next]);
      await linkEmail(tx, userId, next, now);
      await tx.query('delete from auth.one_time_tokens where user_id = $1 and consumed_at is null', [userId]);
      await tx.query('delete from auth.reauth_codes where user_id = $1', [userId]);
      await sessions.revokeSessions(tx, userId, keep ? { except: keep } : {}, now);
    },

    linkEmail,

    /**
     * Removes the user's identities of `provider`, unless none is left after (`last`) or there
     * is none (`none`). The email identity goes with the address (setEmail to null: its links
     * die, and every session, whose tokens claim it, ends); the phone identity with the number.
     * @example const outcome = await accounts.unlinkIdentity(tx, userId, 'github', now); // 'removed'
     */
    async unlinkIdentity(tx: Queryable, userId: string, provider: string, now: number): Promise<'removed' | 'last' | 'none'> {
      const { rows } = await tx.query<{ provider: string }>('select provider from auth.identities where user_id = $1 for update', [userId]);
      if (!rows.some((r) => r.provider === provider)) return 'none';
      if (!rows.some((r) => r.provider !== provider)) return 'last';
      if (provider === 'email') await this.setEmail(tx, userId, null, false, now);
      else if (provider === 'phone') await this.setPhone(tx, userId, null, now);
      else await tx.query('delete from auth.identities where user_id = $1 and provider = $2', [userId, provider]);
      return 'removed';
    },

    /**
     * Sets (or clears) the user's email, confirmed or not: an operator's change (console). The
     * email identity follows, links and codes of the old address die with it, and so do the
     * user's sessions (their tokens claim the old address).
     */
    async setEmail(tx: Queryable, userId: string, email: string | null, confirmed: boolean, now: number): Promise<void> {
      await tx.query(
        'update auth.users set email = $2, email_confirmed_at = case when $3 then $4::timestamptz end, updated_at = $4::timestamptz where id = $1',
        [userId, email, confirmed && email !== null, iso(now)],
      );
      await tx.query(`delete from auth.identities where user_id = $1 and provider = 'email'`, [userId]);
      if (email) await linkEmail(tx, userId, email, now);
      await tx.query('delete from auth.one_time_tokens where user_id = $1 and consumed_at is null', [userId]);
      await tx.query('delete from auth.reauth_codes where user_id = $1', [userId]);
      await sessions.revokeSessions(tx, userId, {}, now);
    },

    /**
     * Confirms or unconfirms the current email (an operator's say-so; not a proof by the owner).
     * Unconfirming ends the user's sessions: their tokens say `email_verified: true`.
     */
    async setEmailConfirmed(tx: Queryable, userId: string, confirmed: boolean, now: number): Promise<void> {
      const { rows } = await tx.query<{ was: boolean }>(
        'select email_confirmed_at is not null as was from auth.users where id = $1 and email is not null for update',
        [userId],
      );
      await tx.query(
        `update auth.users set email_confirmed_at = case when $2 then coalesce(email_confirmed_at, $3::timestamptz) end,
         updated_at = $3::timestamptz where id = $1 and email is not null`,
        [userId, confirmed, iso(now)],
      );
      if (!confirmed && rows[0]?.was) await sessions.revokeSessions(tx, userId, {}, now);
    },

    /**
     * Sets (or clears) the phone number, confirmed (an operator's say-so); the phone identity
     * follows. A changed number ends the user's sessions (their tokens claim the old one).
     */
    async setPhone(tx: Queryable, userId: string, phone: string | null, now: number): Promise<void> {
      const { rows } = await tx.query<{ phone: string | null }>('select phone from auth.users where id = $1 for update', [userId]);
      await tx.query(
        'update auth.users set phone = $2, phone_confirmed_at = case when $2::text is not null then $3::timestamptz end, updated_at = $3::timestamptz where id = $1',
        [userId, phone, iso(now)],
      );
      await tx.query(`delete from auth.identities where user_id = $1 and provider = 'phone'`, [userId]);
      await tx.query('delete from auth.phone_codes where user_id = $1', [userId]);
      if (phone) {
        await tx.query(
          `insert into auth.identities (user_id, provider, provider_user_id, created_at) values ($1, 'phone', $2, $3::timestamptz)
           on conflict (provider, provider_user_id) do nothing`,
          [userId, phone, iso(now)],
        );
      }
      if (rows[0] && (rows[0].phone ?? null) !== phone) await sessions.revokeSessions(tx, userId, {}, now);
    },

    /**
     * Bans the user until a time (or lifts the ban with null). A ban ends every session of the
     * user (lifting it later revives none), and sign-in and refresh answer 403 `user_banned`
     * while it lasts; the gate of every instance hears of it at commit.
     */
    async setBan(tx: Queryable, userId: string, until: string | null, now: number): Promise<void> {
      await tx.query('update auth.users set banned_until = $2::timestamptz, updated_at = $3::timestamptz where id = $1', [
        userId,
        until,
        iso(now),
      ]);
      if (until !== null && Date.parse(until) > now) await sessions.revokeSessions(tx, userId, {}, now);
      else await sessions.notifyChanged(tx, userId);
    },

    /** Changes what the user may change about themselves: name and avatar (undefined keeps, null clears). */
    async setProfile(tx: Queryable, userId: string, profile: { name?: string | null; avatar?: string | null }, now: number): Promise<void> {
      await tx.query(
        `update auth.users set name = case when $2 then $3 else name end, avatar = case when $4 then $5 else avatar end, updated_at = $6::timestamptz where id = $1`,
        [userId, profile.name !== undefined, profile.name ?? null, profile.avatar !== undefined, profile.avatar ?? null, iso(now)],
      );
    },

    /**
     * Merges into the user's own metadata (`data`, GoTrue's `user_metadata`): each top-level key
     * of `patch` is set, a key set to null removed, the others kept.
     * @example await accounts.mergeUserData(tx, id, { plan: 'pro', theme: null }, now);
     */
    async mergeUserData(tx: Queryable, userId: string, patch: Record<string, unknown>, now: number): Promise<void> {
      await tx.query(
        `update auth.users set data = (data || $2::jsonb) - coalesce((select array_agg(key) from jsonb_each($2::jsonb) where value = 'null'::jsonb), '{}'::text[]),
         updated_at = $3::timestamptz where id = $1`,
        [userId, JSON.stringify(patch), iso(now)],
      );
    },

    /**
     * Merges the admin's `app_metadata` into auth.users.raw_app_meta_data (a key set to null is
     * removed); `provider` and `providers` are never stored (the claims derive them). Only the
     * secret key's admin API calls this: users cannot write it.
     * @example await accounts.mergeAppData(tx, id, { roles: ['editor'] }, now);
     */
    async mergeAppData(tx: Queryable, userId: string, patch: Record<string, unknown>, now: number): Promise<void> {
      const { provider: _p, providers: _ps, ...rest } = patch;
      await tx.query(
        `update auth.users set raw_app_meta_data = (coalesce(raw_app_meta_data, '{}'::jsonb) || $2::jsonb)
           - coalesce((select array_agg(key) from jsonb_each($2::jsonb) where value = 'null'::jsonb), '{}'::text[]),
         updated_at = $3::timestamptz where id = $1`,
        [userId, JSON.stringify(rest), iso(now)],
      );
    },

    /** Fills the name and picture a provider sent where the user has none; touches nothing else. */
    async fillProfile(tx: Queryable, userId: string, profile: { name: string | null; avatar: string | null }, now: number): Promise<void> {
      await tx.query(
        `update auth.users set name = coalesce(name, $2), avatar = coalesce(avatar, $3), updated_at = $4::timestamptz
         where id = $1 and ((name is null and $2::text is not null) or (avatar is null and $3::text is not null))`,
        [userId, profile.name, profile.avatar, iso(now)],
      );
    },

    /** What a provider now says the identity's email is (kept on the identity, vouched for or not). */
    async updateIdentityEmail(tx: Queryable, identity: IdentityInput): Promise<void> {
      await tx.query('update auth.identities set email = $3 where provider = $1 and provider_user_id = $2', [
        identity.provider,
        identity.providerUserId,
        identity.email,
      ]);
    },

    /**
     * The phone number is proven (its code was used): confirmed, while the user still has it.
     * @example if (!(await accounts.provePhone(tx, userId, phone, now))) return invalid;
     */
    async provePhone(tx: Queryable, userId: string, phone: string, now: number): Promise<boolean> {
      const { rows } = await tx.query(
        `update auth.users set phone_confirmed_at = coalesce(phone_confirmed_at, $2::timestamptz), updated_at = $2::timestamptz
         where id = $1 and phone = $3 returning id`,
        [userId, iso(now), phone],
      );
      return rows.length > 0;
    },

    /** Deletes the user; sessions end first (the gate hears of it), the rest goes by cascade. */
    async deleteUser(tx: Queryable, userId: string, now: number): Promise<void> {
      await sessions.revokeSessions(tx, userId, {}, now);
      await tx.query('delete from auth.users where id = $1', [userId]);
    },

    revokeSessions: sessions.revokeSessions,

    /** The user of docs/api.md §5.1 (the sign-in methods and the session service read it through here). */
    findUser,
  };
}

/**
 * The sign-up's credential (`password_hash` or `passkey_id` of its link), unless another live
 * verification link of the user binds another credential (or none: a resent link when sign-ups
 * competed): then null.
 */
async function uncontested(
  tx: Queryable,
  userId: string,
  field: 'password_hash' | 'passkey_id',
  value: string,
  now: number,
): Promise<string | null> {
  const { rows } = await tx.query(
    `select 1 from auth.one_time_tokens where user_id = $1 and kind = 'verification' and consumed_at is null
     and expires_at > $2::timestamptz and (payload ->> $3::text) is distinct from $4 limit 1`,
    [userId, iso(now), field, value],
  );
  return rows.length ? null : value;
}

/** The `email` identity (the address itself, for email-and-password and magic-link users), made once per user. */
async function linkEmail(tx: Queryable, userId: string, email: string, now: number) {
  await tx.query(
    `insert into auth.identities (user_id, provider, provider_user_id, email, created_at) values ($1::uuid, 'email', $1::text, $2, $3::timestamptz)
     on conflict (provider, provider_user_id) do nothing`,
    [userId, email, iso(now)],
  );
}

export type AccountWrites = ReturnType<typeof createAccountWrites>;
