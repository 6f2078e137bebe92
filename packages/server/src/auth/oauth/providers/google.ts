import type { OAuthProviderSettings } from '../../../settings/index.js';
import { createDiscoveredClient, idClaims, type OAuthProvider, str } from '../provider.js';

const ISSUER = 'https://accounts.google.com';

/** Google: OpenID Connect with PKCE; the ID token carries email, email_verified, name, picture. */
export const google: OAuthProvider<OAuthProviderSettings> = {
  id: 'google',
  pkce: true,
  oidc: true,
  authParams: { scope: 'openid email profile' },
  ...createDiscoveredClient(ISSUER),
  async profile(_config, tokens) {
    const c = idClaims(tokens);
    return {
      id: String(c.sub),
      email: str(c.email),
      emailVerified: c.email_verified === true,
      name: str(c.name),
      avatar: str(c.picture),
    };
  },
};
