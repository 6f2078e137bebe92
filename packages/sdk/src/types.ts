/**
 * Types that cross the network (API.md §4). They mirror `@plinth/shared` but are declared
 * here so the published package and its `.d.ts` files depend on nothing; the type test
 * (`test/types/shared.typetest.ts`) fails when the two drift apart.
 */

export interface Identity {
  provider: string;
  email: string | null;
  created_at: string;
}

export interface User {
  id: string;
  email: string | null;
  email_confirmed_at: string | null;
  phone: string | null;
  phone_confirmed_at: string | null;
  name: string | null;
  avatar: string | null;
  created_at: string;
  updated_at: string;
  last_sign_in_at: string | null;
  identities: Identity[];
}

/** The token set every sign-in returns. `expires_at` is in seconds since the epoch. */
export interface Session {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: User;
}

/**
 * What every SDK call returns instead of throwing. `code` and `message` come from the server's
 * error body (`{code, message, details?}`); errors made by the SDK itself have `status: 0`
 * (for example `network_error`, `session_missing`), except `not_found` / `too_many_rows` of
 * `single()`, which carry the status the server would use for them.
 */
export interface PlinthError {
  code: string;
  message: string;
  status: number;
  details?: unknown;
}

/** `{data, error}`: exactly one of the two is set, so checking `error` narrows `data`. */
export type Result<T> = { data: T; error: null } | { data: null; error: PlinthError };

/** The built-in social providers. */
export type BuiltInOAuthProvider = 'google' | 'github' | 'apple' | 'linkedin' | 'microsoft';

/**
 * What `signInWithOAuth` takes: a built-in provider, or the `id` of an OpenID Connect provider
 * of the project's `oidc_providers` setting (`GET /v1/auth/settings` lists the enabled ones).
 * The built-in names still complete in an editor (`string & {}` keeps the union from collapsing).
 */
export type OAuthProvider = BuiltInOAuthProvider | (string & {});

/** Events passed to `onAuthStateChange` callbacks. */
export type AuthChangeEvent = 'INITIAL_SESSION' | 'SIGNED_IN' | 'SIGNED_OUT' | 'TOKEN_REFRESHED' | 'USER_UPDATED' | 'PASSWORD_RECOVERY';

/**
 * Where the session is kept. `localStorage` fits as is; so does any adapter whose methods are
 * synchronous or return promises (React Native AsyncStorage, a cookie wrapper, ...).
 */
export interface SupportedStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/**
 * A mutual-exclusion function in the shape of `navigator.locks.request(name, fn)`: runs `fn`
 * while no other holder of `name` runs, and resolves with its result.
 */
export type LockFunction = <T>(name: string, fn: () => Promise<T>) => Promise<T>;
