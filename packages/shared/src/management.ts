import type { AdminRole } from './admins.js';
import type { ClientSecretProviderId } from './providers.js';
import type { TemplateKind } from './messages.js';
import type { User } from './types.js';

/**
 * Types of the management API (docs/api.md §4) that cross the network: the server answers with
 * them and the console reads them, from this one declaration.
 */

/** One social provider's settings. Secrets come back masked (`MASK`); sent back unchanged, the stored one stays. */
export interface OAuthProviderSettings {
  enabled: boolean;
  client_id: string | null;
  client_secret: string | null;
}

export interface AppleProviderSettings {
  enabled: boolean;
  service_id: string | null;
  team_id: string | null;
  key_id: string | null;
  /** PEM text of the .p8 key file. */
  private_key: string | null;
}

/** How the client authenticates at the provider's token endpoint (OpenID Connect's names). */
export type OidcTokenAuthMethod = 'client_secret_basic' | 'client_secret_post';

/**
 * An OpenID Connect provider added by its issuer (`oidc_providers[]`): Keycloak, Authentik,
 * Zitadel, Okta, Auth0, Entra ID, GitLab… Its `id` is the `{provider}` of `/v1/auth/oauth/{provider}`.
 * `client_secret` comes back masked (`MASK`); sent back unchanged for the same `id`, the stored one stays.
 */
export interface OidcProviderSettings {
  id: string;
  /** What a sign-in button says ("Sign in with {name}"). */
  name: string;
  /** The issuer URL, exactly as the provider's discovery document names it. */
  issuer: string;
  client_id: string;
  client_secret: string;
  /** Scopes asked for; must include `openid`. Omitted in a PATCH: `["openid", "email", "profile"]`. */
  scopes: string[];
  /** Omitted in a PATCH: `client_secret_basic` (the OpenID Connect default); Auth0 apps want `client_secret_post`. */
  token_endpoint_auth_method: OidcTokenAuthMethod;
  enabled: boolean;
}

/** One claim a test sign-in received, and where it came from. */
export interface OidcTestClaim {
  name: string;
  value: unknown;
  source: 'id_token' | 'userinfo';
}

/**
 * The result of a test sign-in (`GET /api/v1/settings/auth/oidc/{id}/tests/{test_id}`): every
 * claim received, the ones sign-in needs that are missing, and what Plinth would make of them.
 */
export interface OidcTestResult {
  id: string;
  provider: string;
  status: 'pending' | 'done' | 'failed';
  issuer: string;
  created_at: string;
  completed_at: string | null;
  /** The verified ID token's claims, then the userinfo endpoint's (when it has one). */
  claims: OidcTestClaim[];
  /** Of `sub`, `email`, `email_verified`: those neither source sent. */
  missing: Array<'sub' | 'email' | 'email_verified'>;
  /** What a sign-in would use: the identity, and whether the email may link to an existing account. */
  profile: { subject: string; email: string | null; email_verified: boolean; name: string | null; avatar: string | null } | null;
  /** Why a failed test failed (`status: "failed"`): one of our codes and a sentence for the admin. */
  error: { code: string; message: string } | null;
}

export interface EmailTemplate {
  subject: string;
  html: string;
  text: string;
}

/** The auth settings (`GET`/`PATCH /api/v1/settings/auth`), JSON names. */
export interface AuthSettings {
  email_password_enabled: boolean;
  magic_link_enabled: boolean;
  phone_enabled: boolean;
  min_password_length: number;
  require_email_confirmation: boolean;
  session_duration_seconds: number;
  allowed_redirect_urls: string[];
  cors_origins: string[];
  /**
   * While PUBLIC_URL is a loopback address (development): pages on `localhost`, `127.0.0.1`
   * and `[::1]`, any port, may call the API without being listed in `cors_origins`. On by
   * default; no effect once PUBLIC_URL is another host.
   */
  cors_allow_localhost: boolean;
  email_verification_url: string | null;
  password_reset_url: string | null;
  magic_link_url: string | null;
  providers: Record<ClientSecretProviderId, OAuthProviderSettings> & { apple: AppleProviderSettings };
  /** Providers added by their OpenID Connect issuer (docs/oidc.md). */
  oidc_providers: OidcProviderSettings[];
  /** Per-project overrides of the email templates; absent kinds use the defaults. */
  email_templates: Partial<Record<TemplateKind, Partial<EmailTemplate>>>;
  /** Users may enrol new TOTP factors (factors already verified keep working when off). */
  mfa_totp_enabled: boolean;
  /**
   * `server`: an `aal1` token of a user with a verified factor is refused everywhere (403
   * `mfa_required`); `policies`: it passes, and policies read `auth.jwt()->>'aal'`.
   */
  mfa_enforcement: 'server' | 'policies';
  /** Passkey sign-in, sign-up and registration (WebAuthn). */
  passkey_enabled: boolean;
  /** The WebAuthn relying party ID; null: the host of PUBLIC_URL. */
  passkey_rp_id: string | null;
  /** Origins besides PUBLIC_URL's whose pages may use passkeys (`https://app.example.com`). */
  passkey_origins: string[];
  /**
   * Anonymous sign-in (Supabase's `signInAnonymously`): a user with no email, phone or identity,
   * upgraded in place by adding one; at most 30 an hour per IP.
   */
  anonymous_sign_in_enabled: boolean;
  /**
   * Auth hooks (docs/auth.md, "Auth hooks"): each `pg-functions://postgres/<schema>/<function>`
   * (a SQL function taking and returning jsonb), `function:<name>` (a project function), or null.
   */
  hooks: AuthHookSettings;
}

/** The auth hooks of the settings; null: none. */
export interface AuthHookSettings {
  /** Given `{user_id, claims, authentication_method}` before each access token is signed; returns `{claims}`. */
  custom_access_token: string | null;
  /** Given `{metadata, user}` before a user is inserted; returns `{}` or `{error: {http_code, message}}` to refuse. */
  before_user_created: string | null;
  /** Given `{user, email_data}` in place of each auth email Plinth would send (pg-functions://, function:, or an http(s) URL). */
  send_email?: string | null;
  /** Given `{user, sms: {otp}}` in place of each auth SMS Plinth would send. */
  send_sms?: string | null;
  /** An http(s) send-email hook's Standard Webhooks secrets (`v1,whsec_<base64>`, several joined by `|`); read back masked. */
  send_email_secrets?: string | null;
  /** An http(s) send-SMS hook's secrets, as `send_email_secrets`. */
  send_sms_secrets?: string | null;
}

/** The mask a stored secret is read as. */
export const MASK = '********';

/** An entry of the delivery log (`GET /api/v1/messages`), newest first. */
export interface LogEntry {
  id: string;
  channel: 'email' | 'sms';
  kind: string;
  to: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  transport: string | null;
  last_response: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  next_attempt_at: string | null;
}

/** A message kept by the dev inbox (`GET /api/v1/dev/inbox`) while no SMTP or SMS provider is set. */
export interface DevMessage {
  id: string;
  channel: 'email' | 'sms';
  kind: string;
  to: string;
  subject: string | null;
  text: string;
  html: string | null;
  created_at: string;
}

/** A console admin (`GET /api/v1/admin/me`, `…/admins`, setup and login answers). */
export interface Admin {
  id: string;
  email: string;
  /** What the admin may do (admins.ts `ROLE_RIGHTS`). */
  role: AdminRole;
  created_at: string;
  last_sign_in_at: string | null;
}

/** An end-user as the management API answers it (`/api/v1/users`): the user and its ban. */
export interface EndUser extends User {
  banned_until: string | null;
  /** The user has a verified second factor (their aal1 sessions must step up). */
  mfa_enabled: boolean;
  /** How many passkeys the user has. */
  passkeys: number;
}

/** `GET /api/v1/users/{id}/factors`: the user's second factors and passkeys. */
export interface EndUserFactors {
  factors: import('./types.js').Factor[];
  passkeys: import('./types.js').Passkey[];
}

/** One open session of an end-user, as `GET /api/v1/users/{id}` lists them. */
export interface EndUserSession {
  id: string;
  user_agent: string | null;
  ip: string | null;
  created_at: string;
  refreshed_at: string;
}

/** `GET /api/v1/users/{id}`: the user, its ban and its open sessions. */
export interface EndUserDetail extends EndUser {
  sessions: EndUserSession[];
}

/** `GET /api/v1/settings/project`: the project's settings and, read-only, where it runs. */
export interface ProjectSettings {
  plan: import('./types.js').Plan;
  public_url: string;
  name: string;
  database: 'pglite' | 'postgres';
  email_delivery: 'smtp' | 'dev_inbox';
  sms_configured: boolean;
}

/** A saved query of the SQL runner (docs/api.md "Saved queries"). */
export interface SavedQuery {
  id: string;
  name: string;
  query: string;
  created_at: string;
  updated_at: string;
}

/** One result of a script the SQL runner ran (`POST /api/v1/sql` answers `{results, durationMs}`). */
export interface SqlResult {
  command: string;
  rowCount: number;
  /** `type` is the short name PostgreSQL gives (`int8`, `text[]`). */
  columns: Array<{ name: string; type: string }>;
  rows: Array<Record<string, unknown>>;
  /** More rows than the runner sends were returned (the first ones are). */
  truncated: boolean;
}

/** A backup the server keeps (`GET /api/v1/backups`, newest first). */
export interface BackupInfo {
  name: string;
  size: number;
  created_at: string;
}

/** What a signing-key rotation answers (`POST /api/v1/admin/signing-keys/rotate`, docs/api.md §4.1). */
export interface SigningKeyRotation {
  kid: string;
  /** The old keys: still in the JWKS until `retire_at` (rotate), or gone at once (`revoked`). */
  previous: string[];
  revoked: boolean;
  /** When the old keys leave the JWKS (null when revoked). */
  retire_at: string | null;
  /** Sessions ended by a revocation (every session: their tokens were signed with the old keys). */
  sessions_ended: number;
}

/** One call of a function, as its log shows it (GET /api/v1/admin/functions/{name}/calls). */
export interface FunctionCall {
  /** Numbers the calls (a key for a list). */
  id: number;
  at: string;
  /** The deployed version that ran, or null for the project folder's file. */
  version: number | null;
  /** What called it: a request, a schedule or a webhook/auth hook (the service). */
  trigger: 'request' | 'service';
  /** The HTTP status it answered (its own, or the error's: 500, 503, 504). */
  status: number;
  /** `function_error`, `function_timeout` or `function_busy` when it failed. */
  code: string | null;
  duration_ms: number;
  /** Its console output, at most 50 lines and 4,000 characters. */
  logs: string;
}
