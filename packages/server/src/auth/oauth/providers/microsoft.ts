import type { OAuthProviderSettings } from '../../../settings/index.js';
import { createDiscoveredClient, idClaims, type OAuthProvider, type Profile, str } from '../provider.js';

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
    return fromClaims(idClaims(tokens));
  },
  idTokenProfile: fromClaims,
  // The document's issuer is a template; a token names its tenant in `tid` (signed: jose then
  // checks that `iss` is the filled-in template, so a token cannot name another tenant's issuer).
  idTokenIssuers: (discovered, claims) => {
    const tid = typeof claims.tid === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(claims.tid) ? claims.tid : null;
    if (!discovered.includes('{tenantid}')) return [discovered];
    return tid ? [discovered.replace('{tenantid}', tid)] : [];
  },
};

function fromClaims(c: Record<string, unknown>): Profile {
  const email = str(c.email) ?? str(c.preferred_username);
  return {
    id: String(c.sub),
    email: email?.includes('@') ? email : null,
    emailVerified: c.xms_edov === true || c.xms_edov === '1' || c.email_verified === true,
    name: str(c.name),
    avatar: null, // the photo needs a Graph call with another scope: not asked
  };
}
