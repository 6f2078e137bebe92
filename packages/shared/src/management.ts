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
  email_verification_url: string | null;
  password_reset_url: string | null;
  magic_link_url: string | null;
  providers: Record<ClientSecretProviderId, OAuthProviderSettings> & { apple: AppleProviderSettings };
  /** Per-project overrides of the email templates; absent kinds use the defaults. */
  email_templates: Partial<Record<TemplateKind, Partial<EmailTemplate>>>;
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

/** A console admin (`GET /api/v1/admin/me`, setup and login answers). */
export interface Admin {
  id: string;
  email: string;
  created_at: string;
  last_sign_in_at: string | null;
}

/** An end-user as the management API answers it (`/api/v1/users`): the user and its ban. */
export interface EndUser extends User {
  banned_until: string | null;
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
