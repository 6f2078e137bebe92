import { isLoopbackHttp, type OidcProviderSettings } from '@plinth/shared';
import * as oidc from 'openid-client';
import { checkClientFit, type OidcDiscovery } from '../oidc/discovery.js';
import { idClaims, type OAuthProvider, type Profile, str, type TokenResponse } from '../provider.js';

type Claims = Record<string, unknown>;

/** The claims of one sign-in, by source: the ID token's, the userinfo endpoint's when asked, and both as used. */
export interface ReceivedClaims {
  idToken: Claims;
  userinfo: Claims | null;
  merged: Claims;
}

/**
 * The userinfo endpoint fills what the ID token lacks. The email and whether it is verified
 * travel together, from the source that has the email: an ID token's `email_verified` never
 * vouches for an address that only the userinfo endpoint sent.
 * @example withUserinfo({ sub: 'a' }, { sub: 'a', email: 'a@b.c', email_verified: true }).email_verified // true
 */
export function withUserinfo(idToken: Claims, userinfo: Claims | null): Claims {
  if (!userinfo) return idToken;
  const merged = { ...userinfo, ...idToken };
  if (!str(idToken.email)) {
    merged.email = userinfo.email;
    merged.email_verified = userinfo.email_verified;
  }
  return merged;
}

/**
 * The ID token's claims and, when `userinfo` says so (always, or when the ID token has no
 * email), the userinfo endpoint's; openid-client checks that it speaks of the same `sub`.
 */
export async function readClaims(
  config: oidc.Configuration,
  tokens: TokenResponse,
  userinfo: 'always' | 'without-email',
): Promise<ReceivedClaims> {
  const idToken = idClaims(tokens);
  const ask = config.serverMetadata().userinfo_endpoint && (userinfo === 'always' || !str(idToken.email));
  const fromUserinfo = ask ? ((await oidc.fetchUserInfo(config, tokens.access_token, String(idToken.sub))) as Claims) : null;
  return { idToken, userinfo: fromUserinfo, merged: withUserinfo(idToken, fromUserinfo) };
}

/**
 * What a sign-in uses of the claims. The identity is the issuer with the `sub`: a subject is
 * unique only at its issuer (OpenID Connect Core §2), so pointing a provider id at another
 * issuer can never sign anyone into the accounts of the first one's users. `email_verified`
 * must be true (or "true", as some providers send it) for the email to link or be trusted.
 * @example profileOf('https://sso.example.com', { sub: '42', email: 'a@b.c', email_verified: true }).id // 'https://sso.example.com#42'
 */
export function profileOf(issuer: string, claims: Claims): Profile {
  return {
    id: `${issuer}#${String(claims.sub)}`,
    email: str(claims.email),
    emailVerified: claims.email_verified === true || claims.email_verified === 'true',
    name: str(claims.name) ?? str(claims.preferred_username),
    avatar: str(claims.picture),
  };
}

/**
 * A provider of `oidc_providers` (docs/oidc.md): found by discovery at its issuer (cached by the
 * document's HTTP caching headers, oidc/discovery.ts), PKCE S256, a nonce, the client secret
 * sent as the settings say (HTTP Basic by default), the userinfo endpoint asked when the ID
 * token has no email.
 * @example const provider = oidcProvider(settings.auth().oidc_providers[0], discovery);
 */
export function oidcProvider(conf: OidcProviderSettings, discovery: OidcDiscovery): OAuthProvider<OidcProviderSettings> {
  return {
    id: conf.id,
    pkce: true,
    oidc: true,
    authParams: { scope: conf.scopes.join(' ') },
    clientKey: (s) => [s.issuer, s.client_id, s.client_secret, s.token_endpoint_auth_method].join('\n'),
    async configure(s) {
      // Sign-in rides out an outage of the discovery endpoint on a copy up to a day old.
      const meta = await discovery.metadata(s.issuer, { allowStale: true });
      checkClientFit(meta, s);
      const auth =
        s.token_endpoint_auth_method === 'client_secret_post'
          ? oidc.ClientSecretPost(s.client_secret)
          : oidc.ClientSecretBasic(s.client_secret);
      const config = new oidc.Configuration(meta, s.client_id, undefined, auth);
      // Token and userinfo calls through the address guard, as discovery and the key set.
      config[oidc.customFetch] = discovery.fetch as oidc.CustomFetch;
      if (isLoopbackHttp(s.issuer)) oidc.allowInsecureRequests(config);
      config.timeout = 10;
      return config;
    },
    async profile(config, tokens) {
      return profileOf(conf.issuer, (await readClaims(config, tokens, 'without-email')).merged);
    },
    idTokenProfile: (claims) => profileOf(conf.issuer, claims),
  };
}
