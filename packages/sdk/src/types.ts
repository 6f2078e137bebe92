/**
 * Types that cross the network: `User`, `Session`, `Identity`, the providers and the server's
 * error codes are `@plinth/shared`'s own declarations (the server answers with them); the build copies their
 * `.d.ts` into this package (scripts/sdk-types.mjs), so it still depends on nothing.
 */
import type { ErrorCode, OAuthProviderId } from '@plinth/shared';

export type {
  AuthenticatorAssuranceLevel,
  AuthMethodReference,
  EnrolledFactor,
  Factor,
  Identity,
  Passkey,
  Session,
  User,
  WebhookPayload,
} from '@plinth/shared';

/**
 * The codes of errors the SDK makes itself, with `status: 0` (or, for `single()`, the status
 * the server would use: `not_found`, `too_many_rows`).
 */
export type ClientErrorCode =
  | 'network_error'
  | 'unexpected_response'
  | 'invalid_response'
  | 'session_missing'
  | 'oauth_callback_missing'
  | 'oauth_flow_mismatch'
  | 'invalid_redirect'
  | 'websocket_unavailable'
  | 'webauthn_unavailable'
  | 'webauthn_cancelled';

/**
 * Every code a `PlinthError` carries: the server's (docs/api.md, never renamed, only added)
 * and the SDK's own. Switch on it and the type checker knows the spelling.
 */
export type PlinthErrorCode = ErrorCode | ClientErrorCode;

/**
 * What every SDK call returns instead of throwing. `code` and `message` come from the server's
 * error body (`{code, message, details?}`); errors made by the SDK itself have `status: 0`
 * (for example `network_error`, `session_missing`), except `not_found` / `too_many_rows` of
 * `single()`, which carry the status the server would use for them.
 */
export interface PlinthError {
  code: PlinthErrorCode;
  message: string;
  status: number;
  details?: unknown;
}

/** `{data, error}`: exactly one of the two is set, so checking `error` narrows `data`. */
export type Result<T> = { data: T; error: null } | { data: null; error: PlinthError };

/** The built-in social providers: packages/shared's one list. */
export type BuiltInOAuthProvider = OAuthProviderId;

/**
 * What `signInWithOAuth` takes: a built-in provider, or the `id` of an OpenID Connect provider
 * of the project's `oidc_providers` setting (`GET /v1/auth/settings` lists the enabled ones).
 * The built-in names still complete in an editor (`string & {}` keeps the union from collapsing).
 */
export type OAuthProvider = BuiltInOAuthProvider | (string & {});

/** Events passed to `onAuthStateChange` callbacks. */
export type AuthChangeEvent =
  | 'INITIAL_SESSION'
  | 'SIGNED_IN'
  | 'SIGNED_OUT'
  | 'TOKEN_REFRESHED'
  | 'USER_UPDATED'
  | 'PASSWORD_RECOVERY'
  | 'MFA_CHALLENGE_VERIFIED';

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
