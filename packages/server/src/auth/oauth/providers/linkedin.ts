import * as oidc from 'openid-client';
import type { OAuthProviderSettings } from '../../../settings/index.js';
import { createDiscoveredClient, idClaims, type OAuthProvider, standardProfile, str } from '../provider.js';

const ISSUER = 'https://www.linkedin.com/oauth';

/**
 * LinkedIn: the "Sign In with LinkedIn using OpenID Connect" product must be requested for the
 * app in LinkedIn's developer console, or the `openid` scope is refused. No PKCE (LinkedIn
 * offers it to native apps only); the client secret goes in the form body.
 */
export const linkedin: OAuthProvider<OAuthProviderSettings> = {
  id: 'linkedin',
  pkce: false,
  oidc: true,
  authParams: { scope: 'openid profile email' },
  ...createDiscoveredClient(ISSUER),
  async profile(config, tokens) {
    let c = idClaims(tokens);
    // The ID token may lack email or picture: the userinfo endpoint has them.
    if (!str(c.email)) c = { ...c, ...(await oidc.fetchUserInfo(config, tokens.access_token, String(c.sub))) };
    return standardProfile(c);
  },
  idTokenProfile: standardProfile,
};
