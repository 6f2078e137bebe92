import type { OAuthProviderSettings } from '../../../settings/index.js';
import { createDiscoveredClient, idClaims, type OAuthProvider, str } from '../provider.js';

/**
 * Any Microsoft account (work, school or personal): the `common` endpoint. Its discovery
 * document names the issuer `…/{tenantid}/v2.0`; openid-client substitutes the token's `tid`.
 */
const ISSUER = 'https://login.microsoftonline.com/common/v2.0';

/**
 * Microsoft Entra ID: OpenID Connect with PKCE. Quirk: the `email` claim is whatever the
 * tenant's admin typed and is NOT verified ("nOAuth"); it counts as verified only with the
 * `xms_edov` (email domain owner verified) optional claim, so an unverified one never links
 * to an existing account.
 */
export const microsoft: OAuthProvider<OAuthProviderSettings> = {
  id: 'microsoft',
  pkce: true,
  oidc: true,
  authParams: { scope: 'openid email profile' },
  ...createDiscoveredClient(ISSUER),
  async profile(_config, tokens) {
    const c = idClaims(tokens);
    const email = str(c.email) ?? str(c.preferred_username);
    return {
      id: String(c.sub),
      email: email?.includes('@') ? email : null,
      emailVerified: c.xms_edov === true || c.xms_edov === '1' || c.email_verified === true,
      name: str(c.name),
      avatar: null, // the photo needs a Graph call with another scope: not asked
    };
  },
};
