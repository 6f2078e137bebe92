import * as oidc from 'openid-client';
import type { OAuthProviderSettings } from '../../../settings/index.js';
import { discover, idClaims, type OAuthProvider, str } from '../provider.js';

const ISSUER = 'https://accounts.google.com';

/** Google: OpenID Connect with PKCE; the ID token carries email, email_verified, name, picture. */
export const google: OAuthProvider<OAuthProviderSettings> = {
  id: 'google',
  pkce: true,
  oidc: true,
  authParams: { scope: 'openid email profile' },
  clientKey: (s) => `${s.client_id}:${s.client_secret}`,
  configure: (s, ctx) => discover(ISSUER, s.client_id ?? '', oidc.ClientSecretPost(s.client_secret ?? ''), ctx.baseUrl),
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
