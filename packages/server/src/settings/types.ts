import type { Plan } from '@plinth/shared';

/** One social provider's settings (API.md §3). Secrets are masked as "********" when read over HTTP. */
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
  private_key: string | null;
}

export type EmailTemplateKind = 'verification' | 'reset' | 'magic_link' | 'email_change' | 'email_change_notice' | 'reauthentication';

export interface EmailTemplate {
  subject: string;
  html: string;
  text: string;
}

/** The auth settings of API.md §3, JSON names. */
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
  providers: {
    google: OAuthProviderSettings;
    github: OAuthProviderSettings;
    linkedin: OAuthProviderSettings;
    microsoft: OAuthProviderSettings;
    apple: AppleProviderSettings;
  };
  /** Per-project overrides of the email templates; absent kinds use the defaults. */
  email_templates: Partial<Record<EmailTemplateKind, Partial<EmailTemplate>>>;
}

export interface ProjectInfo {
  plan: Plan;
  public_url: string;
  name: string;
}

/**
 * Settings kept in the database, cached in memory, refreshed on every instance when any
 * instance changes them (NOTIFY). `get()` never awaits: it is read on the request path.
 */
export interface SettingsStore {
  auth(): AuthSettings;
  project(): ProjectInfo;
  /** Validates the whole result; throws ApiError invalid_settings (details per field) or paid_plan_required. */
  updateAuth(patch: unknown): Promise<AuthSettings>;
  updateProject(patch: unknown): Promise<ProjectInfo>;
  /** Whether a browser Origin may call the API: own origin, or `cors_origins` (loopback port wildcard). */
  isOriginAllowed(origin: string): boolean;
  /** Whether a redirect target is allowed by `allowed_redirect_urls` (API.md §3 matching rule). */
  isRedirectAllowed(url: string): boolean;
  close(): Promise<void>;
}
