import { OAUTH_PROVIDERS, type OAuthProviderId } from '@plinth/shared';
import { type Env, httpUrl } from './parse.js';

/** Per provider: the base URL to use instead of the provider's own (local servers in tests, a proxy). */
export type OAuthEndpoints = Record<OAuthProviderId, { baseUrl: string | null; apiUrl: string | null }>;

/**
 * `OAUTH_<PROVIDER>_URL` (the OpenID Connect issuer, or GitHub's web base) and
 * `OAUTH_GITHUB_API_URL`. Unset: the providers' own https endpoints.
 * @example parseOAuth({ OAUTH_GOOGLE_URL: 'http://127.0.0.1:9000' }).google.baseUrl // 'http://127.0.0.1:9000'
 */
export function parseOAuth(env: Env): OAuthEndpoints {
  return Object.fromEntries(
    OAUTH_PROVIDERS.map((id) => [
      id,
      {
        baseUrl: httpUrl(env, `OAUTH_${id.toUpperCase()}_URL`, { base: true }) ?? null,
        apiUrl: id === 'github' ? (httpUrl(env, 'OAUTH_GITHUB_API_URL', { base: true }) ?? null) : null,
      },
    ]),
  ) as OAuthEndpoints;
}
