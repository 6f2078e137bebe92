import type { ClientSecretProviderId } from './providers.js';
import type { TemplateKind } from './messages.js';

/**
 * Types of the management API (API.md §3, §6) that cross the network: the server answers with
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
