import type { AuthSettings, ErrorCode, Plan, TemplateKind } from '@plinth/shared';

export type { AppleProviderSettings, AuthSettings, EmailTemplate, OAuthProviderSettings, OidcProviderSettings } from '@plinth/shared';

/** The email kinds a project may override (packages/shared keeps the one list). */
export type EmailTemplateKind = TemplateKind;

export interface ProjectInfo {
  plan: Plan;
  public_url: string;
  name: string;
}

/**
 * Settings kept in the database, cached in memory, refreshed on every instance when any
 * instance changes them (NOTIFY). `get()` never awaits: it is read on the request path.
 */
/** One refused setting: its field (`cors_origins[1]`), a sentence, and a code when more precise than invalid_settings. */
export interface FieldProblem {
  field: string;
  message: string;
  code?: ErrorCode;
}

/**
 * A check of a settings change that needs the network (the OpenID Connect providers' discovery
 * documents), handed in by the composition root: it runs before the change is saved, outside the
 * database transaction.
 */
export type RemoteSettingsCheck = (next: AuthSettings, previous: AuthSettings) => Promise<FieldProblem[]>;

export interface SettingsStore {
  auth(): AuthSettings;
  project(): ProjectInfo;
  /**
   * Validates the whole result (and runs the remote check); throws ApiError invalid_settings
   * (details per field) or paid_plan_required.
   */
  updateAuth(patch: unknown): Promise<AuthSettings>;
  updateProject(patch: unknown): Promise<ProjectInfo>;
  /**
   * Applies the project file's `auth` section (same merge and validation as a PATCH) and marks
   * its keys managed: a later PATCH naming one is 409 managed_by_config.
   */
  applyManaged(patch: Record<string, unknown>, file: string): Promise<AuthSettings>;
  /** The keys the project file manages (`min_password_length`, `providers.github`…) and the file, or null. */
  managed(): { file: string; keys: string[] } | null;
  /**
   * Whether a browser Origin may call the API: own origin, `cors_origins` (loopback port
   * wildcard), or, while PUBLIC_URL is a loopback address, any loopback origin (`cors_allow_localhost`).
   */
  isOriginAllowed(origin: string): boolean;
  /** What would allow a refused origin, for the refusal's answer and log line. */
  corsAdvice(origin: string): string;
  /** Whether a redirect target is allowed by `allowed_redirect_urls` (docs/api.md §4, its matching rule). */
  isRedirectAllowed(url: string): boolean;
  close(): Promise<void>;
}
