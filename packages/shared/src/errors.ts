/**
 * Stable error codes of the HTTP API (docs/api.md §1). Codes are never renamed; add new ones.
 * Each maps to the HTTP status it is sent with.
 */
export const ERROR_STATUS = {
  // conventions
  invalid_json: 400,
  payload_too_large: 413,
  unauthorized: 401,
  invalid_token: 401,
  token_expired: 401,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  invalid_request: 400,
  rate_limited: 429,
  database_unavailable: 503,
  internal_error: 500,
  forbidden: 403,
  /** The request (headers or body) did not arrive within REQUEST_TIMEOUT_MS. */
  request_timeout: 408,
  /** The request headers are larger than the server accepts. */
  headers_too_large: 431,
  // database REST
  table_not_found: 404,
  column_not_found: 400,
  invalid_parameter: 400,
  invalid_value: 400,
  filter_required: 400,
  conflict: 409,
  /** The setting is managed by the project file (plinth.json); change it there. */
  managed_by_config: 409,
  constraint_violation: 400,
  rls_violation: 403,
  permission_denied: 403,
  too_many_rows: 400,
  /** A `raise exception` (or assert, or an owner-defined SQLSTATE) in the project's SQL: its message is for the client. */
  raised_exception: 400,
  /** An embedded relation (`select=author(name)`) matches several foreign keys: `details.candidates` lists them. */
  ambiguous_relation: 400,
  /** `select=` embeds a name that is no relation of the table (no foreign key either way, no join table). */
  relation_not_found: 400,
  /** `/api/v1/rpc/{function}`: no function of `public` with that name and those argument names; `details.signatures` lists the known ones. */
  function_not_found: 404,
  /** `/api/v1/rpc/{function}`: several overloads take the arguments given; `details.signatures` lists them. */
  ambiguous_function: 400,
  // management
  sql_error: 400,
  statement_timeout: 400,
  invalid_settings: 400,
  paid_plan_required: 402,
  /** Backups through Plinth (POST /api/v1/backups) are of the embedded database; PostgreSQL is backed up with pg_dump. */
  backups_unavailable: 409,
  // auth
  redirect_not_allowed: 400,
  weak_password: 400,
  email_exists: 409,
  phone_exists: 409,
  invalid_credentials: 400,
  email_not_confirmed: 403,
  invalid_refresh_token: 401,
  refresh_token_reused: 401,
  token_invalid: 400,
  provider_disabled: 403,
  provider_not_found: 404,
  magic_link_invalid: 401,
  invalid_phone: 400,
  invalid_email: 400,
  invalid_code: 400,
  code_expired: 400,
  sms_not_configured: 503,
  email_send_failed: 502,
  invalid_state: 400,
  oauth_failed: 400,
  user_not_found: 404,
  /**
   * An OpenID Connect provider (`oidc_providers`) whose discovery document or keys cannot be read:
   * in the details of 400 `invalid_settings` at save, or alone (502) when a sign-in or a test
   * sign-in starts.
   */
  oidc_unreachable: 502,
  /** The discovery document names another issuer than the one configured (exactly equal, per OpenID Connect Discovery). */
  oidc_issuer_mismatch: 502,
  /** The provider lacks what sign-in needs: the authorization code flow, a JWKS, an allowed ID token algorithm, PKCE S256, the client authentication method. */
  oidc_unsupported: 502,
  /** The user is banned until `banned_until`: no sign-in, no refresh, and open sessions stop working. */
  user_banned: 403,
  /** A password or email change needs a recent sign-in, the current password, or a reauthentication code. */
  reauthentication_required: 403,
  // multi-factor authentication and passkeys (docs/securing-accounts.md)
  /**
   * The user has a verified second factor and this access token is `aal1`: verify a factor
   * (or use a recovery code or a passkey) for an `aal2` session first.
   */
  mfa_required: 403,
  /** No factor with this id belongs to the signed-in user. */
  factor_not_found: 404,
  /** The MFA challenge is unknown, expired (5 minutes), already used, or void after 5 wrong codes. */
  challenge_invalid: 400,
  /** A user may have at most 10 factors (verified or not); remove one first. */
  too_many_factors: 409,
  /** The recovery code is unknown or already used. */
  recovery_code_invalid: 400,
  /**
   * The passkey answer does not verify: wrong origin or relying party, unknown or removed
   * credential, a signature counter that went back (a cloned authenticator), an expired or used challenge.
   */
  passkey_invalid: 400,
  /** No passkey with this id belongs to the user. */
  passkey_not_found: 404,
  /** The user has the most passkeys a user may have (20): remove one first. */
  too_many_passkeys: 409,
  /** The user has no identity of this provider (unlinking). */
  identity_not_found: 404,
  /** Unlinking the user's only identity: link another sign-in first. */
  last_identity: 409,
  /** Linking a provider account that is already linked to another user (GoTrue's `identity_already_exists`). */
  identity_exists: 409,
  /** Linking an identity was started without a PKCE challenge: the link flow's result is a code for the app that started it. */
  pkce_required: 400,
  /** An auth hook (docs/auth.md, "Auth hooks") threw, timed out or answered something else than its contract: the sign-in, refresh or sign-up is refused. */
  hook_failed: 500,
  /** An auth hook refused the request with its own message (`{error: {http_code, message}}`; the status is its http_code). */
  hook_refused: 403,
  /** The project's send-email or send-SMS hook (docs/auth.md, "Auth hooks") could not be reached, timed out, or answered other than 2xx: nothing was sent. */
  send_hook_failed: 502,
  // console admins and end-user administration (docs/api.md §4)
  /** A change made with the admin cookie without `X-Plinth-Admin: 1`, or from another origin. */
  csrf_rejected: 403,
  /** The admin setup link is unknown, expired or used, or an admin exists already. */
  setup_link_invalid: 400,
  /** Resend verification for an account whose email is already confirmed (or that has none). */
  email_already_confirmed: 409,
  /** An email flow needs its page URL in the auth settings first (e.g. `email_verification_url`). */
  flow_url_missing: 400,
  /** No console admin with this id. */
  admin_not_found: 404,
  /** A console admin with this email exists already (an invitation to it, or accepting one). */
  admin_exists: 409,
  /** The change would leave the project without an owner: the last owner stays. */
  last_owner: 409,
  /** The admin invitation link is unknown, expired or already used. */
  invite_invalid: 400,
  // storage (docs/storage.md)
  bucket_not_found: 404,
  bucket_exists: 409,
  bucket_not_empty: 409,
  invalid_bucket_name: 400,
  object_exists: 409,
  invalid_object_name: 400,
  invalid_mime_type: 415,
  range_not_satisfiable: 416,
  /** The storage backend (the disk, or the S3 service) failed or cannot be reached. */
  storage_unavailable: 503,
  /** An image transform was asked for on a server with transforms off (STORAGE_IMAGE_TRANSFORMS=false). */
  transforms_disabled: 400,
  // realtime (docs/realtime.md; docs/realtime.md). Sent in WebSocket `error` messages; the statuses are
  // those of the HTTP routes beside it (GET/POST/DELETE /api/v1/realtime/tables) and of a refused upgrade.
  /** The table exists but its changes are not captured: `select realtime.enable('<table>')` first. */
  realtime_disabled: 400,
  /** `since` is older than the changes kept (REALTIME_RETENTION), not a seq of this log, or more than REALTIME_MAX_REPLAY changes back: refetch, then subscribe afresh. */
  resume_gap: 410,
  /** A connection may hold REALTIME_MAX_SUBSCRIPTIONS subscriptions, a client IP REALTIME_MAX_SUBSCRIPTIONS_PER_IP. */
  too_many_subscriptions: 429,
  /** A client IP may hold REALTIME_MAX_CONNECTIONS_PER_IP WebSockets. */
  too_many_connections: 429,
  // database webhooks (docs/webhooks.md)
  /** A webhook's body is wrong: `details` lists `[{field, message}]`, and nothing is saved. */
  invalid_webhook: 400,
  /** The URL resolves to a loopback, private, link-local or metadata address (allowed only with WEBHOOK_ALLOW_PRIVATE=true). */
  webhook_url_refused: 400,
  webhook_not_found: 404,
  webhook_delivery_not_found: 404,
  // functions (docs/functions.md)
  /** The function threw, failed to load, answered something that is not a Response, or ran out of memory; its log has the cause. */
  function_error: 500,
  /** The function did not answer within its time limit (its worker is stopped and replaced if it stopped answering). */
  function_timeout: 504,
  /** The function has its limit of calls in flight and its queue is full: retry after a moment. */
  function_busy: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error body of every endpoint: `{code, message, details?}`. */
export interface ErrorBody {
  code: ErrorCode | string;
  message: string;
  details?: unknown;
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, code);
}
