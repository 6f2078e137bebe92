import { PROVIDER_IDS, type ProviderId } from './provider.js';

/** Per provider: the base URL to use instead of the provider's own (local servers in tests). */
export type OAuthEndpoints = Record<ProviderId, { baseUrl: string | null; apiUrl: string | null }>;

function url(env: Record<string, string | undefined>, name: string): string | null {
  const value = env[name];
  if (!value) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new Error(`config: ${name} is not a URL: "${value}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`config: ${name} must be an http(s) URL`);
  if (parsed.username || parsed.password || parsed.search || parsed.hash) throw new Error(`config: ${name} must be a bare base URL`);
  return value.replace(/\/+$/, '');
}

/**
 * `OAUTH_<PROVIDER>_URL` (the OpenID Connect issuer, or GitHub's web base) and
 * `OAUTH_GITHUB_API_URL`: for tests against local servers, or a proxy. Unset: the providers'
 * own https endpoints.
 * @example oauthEndpoints({ OAUTH_GOOGLE_URL: 'http://127.0.0.1:9000' }).google.baseUrl // 'http://127.0.0.1:9000'
 */
export function oauthEndpoints(env: Record<string, string | undefined>): OAuthEndpoints {
  return Object.fromEntries(
    PROVIDER_IDS.map((id) => [
      id,
      {
        baseUrl: url(env, `OAUTH_${id.toUpperCase()}_URL`),
        apiUrl: id === 'github' ? url(env, 'OAUTH_GITHUB_API_URL') : null,
      },
    ]),
  ) as OAuthEndpoints;
}
