import type { SettingsStore } from '../settings/index.js';
import { enabledProviders } from './responses.js';
import type { TokenService } from './sessions/jwt.js';

/**
 * What anyone may read, without a key: the sign-in methods that are on (a sign-in page offers
 * them) and the public keys that verify access tokens. The route table is auth/routes.ts.
 */
export function createPublicHandlers(settings: Pick<SettingsStore, 'auth'>, tokens: Pick<TokenService, 'jwks'>) {
  return {
    /** GET /v1/auth/settings: enabled methods and providers, no secrets. */
    settings: async () => {
      const s = settings.auth();
      return {
        email_password_enabled: s.email_password_enabled,
        magic_link_enabled: s.magic_link_enabled,
        phone_enabled: s.phone_enabled,
        min_password_length: s.min_password_length,
        require_email_confirmation: s.require_email_confirmation,
        // Enabled implies configured: the settings refuse `enabled` without the credentials.
        providers: enabledProviders(s.providers),
        oidc_providers: s.oidc_providers.filter((p) => p.enabled).map((p) => ({ id: p.id, name: p.name })),
        passkeys: s.passkey_enabled,
        mfa_totp_enabled: s.mfa_totp_enabled,
      };
    },
    /** GET /v1/auth/.well-known/jwks.json */
    jwks: async () => tokens.jwks(),
  };
}
