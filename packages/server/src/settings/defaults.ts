import { CLIENT_SECRET_PROVIDERS, type ClientSecretProviderId } from '@plinth/shared';
import type { AuthSettings, OAuthProviderSettings, ProjectInfo } from './types.js';

const provider = (): OAuthProviderSettings => ({ enabled: false, client_id: null, client_secret: null });

/** The defaults of docs/api.md §4 (auth settings). */
export function defaultAuthSettings(): AuthSettings {
  return {
    email_password_enabled: true,
    magic_link_enabled: false,
    phone_enabled: false,
    min_password_length: 8,
    require_email_confirmation: false,
    session_duration_seconds: 3600,
    allowed_redirect_urls: [],
    cors_origins: [],
    cors_allow_localhost: true,
    email_verification_url: null,
    password_reset_url: null,
    magic_link_url: null,
    providers: {
      ...(Object.fromEntries(CLIENT_SECRET_PROVIDERS.map((id) => [id, provider()])) as Record<
        ClientSecretProviderId,
        OAuthProviderSettings
      >),
      apple: { enabled: false, service_id: null, team_id: null, key_id: null, private_key: null },
    },
    oidc_providers: [],
    email_templates: {},
    mfa_totp_enabled: true,
    mfa_enforcement: 'server',
    passkey_enabled: false,
    passkey_rp_id: null,
    passkey_origins: [],
    anonymous_sign_in_enabled: false,
    hooks: {
      custom_access_token: null,
      before_user_created: null,
      send_email: null,
      send_sms: null,
      send_email_secrets: null,
      send_sms_secrets: null,
    },
  };
}

/** What an `oidc_providers` entry gets when a PATCH leaves these out. */
export const OIDC_DEFAULTS = { scopes: ['openid', 'email', 'profile'], token_endpoint_auth_method: 'client_secret_basic' } as const;

export function defaultProject(publicUrl: string): ProjectInfo {
  return { plan: 'free', public_url: publicUrl, name: 'Plinth project' };
}

/** Values shown as this mask over HTTP; sent back unchanged, they keep the stored secret. */
export { MASK } from '@plinth/shared';
export const SECRET_FIELDS = new Set(['client_secret', 'private_key']);
