import type { OAuthProviderSettings } from '../../../settings/index.js';
import { createDiscoveredClient, idClaims, type OAuthProvider, type Profile, str } from '../provider.js';

const ISSUER = 'https://accounts.google.com';

/** The user of Google's ID token: it carries email, email_verified, name, picture. */
function fromClaims(c: Record<string, unknown>): Profile {
  return {
    id: String(c.sub),
    email: str(c.email),
    emailVerified: c.email_verified === true,
    name: str(c.name),
    avatar: str(c.picture),
  };
}

/** Google: OpenID Connect with PKCE. */
export const google: OAuthProvider<OAuthProviderSettings> = {
  id: 'google',
  pkce: true,
  oidc: true,
  authParams: { scope: 'openid email profile' },
  ...createDiscoveredClient(ISSUER),
  async profile(_config, tokens) {
    return fromClaims(idClaims(tokens));
  },
  idTokenProfile: fromClaims,
  // Google's ID tokens name their issuer with or without the scheme (its OpenID Connect documentation).
  idTokenIssuers: (discovered) => (discovered === ISSUER ? [ISSUER, 'accounts.google.com'] : [discovered]),
};
