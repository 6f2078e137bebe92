import * as oidc from 'openid-client';
import type { OAuthProviderSettings } from '../../../settings/index.js';
import { type OAuthProvider, type ProviderContext, secretClientKey, staticConfig, str } from '../provider.js';

const WEB = 'https://github.com';
const API = 'https://api.github.com';

/**
 * GitHub: plain OAuth 2 (no OpenID Connect), PKCE supported. Quirks:
 * - the token endpoint answers JSON only when asked (openid-client sends Accept: application/json),
 *   and reports a bad code with status 200 and an `error` field;
 * - the API wants a User-Agent;
 * - `/user` has the email only when the user made it public: the primary verified one is read
 *   from `/user/emails` (scope `user:email`).
 */
export const github: OAuthProvider<OAuthProviderSettings> = {
  id: 'github',
  pkce: true,
  oidc: false,
  authParams: { scope: 'read:user user:email' },
  clientKey: secretClientKey,
  async configure(s, ctx) {
    const web = (ctx.baseUrl ?? WEB).replace(/\/+$/, '');
    return staticConfig(
      { issuer: web, authorization_endpoint: `${web}/login/oauth/authorize`, token_endpoint: `${web}/login/oauth/access_token` },
      s.client_id ?? '',
      oidc.ClientSecretPost(s.client_secret ?? ''),
    );
  },
  async profile(_config, tokens, _params, ctx) {
    const user = (await api(ctx, '/user', tokens.access_token)) as Record<string, unknown>;
    const emails = (await api(ctx, '/user/emails', tokens.access_token)) as unknown;
    const primary = Array.isArray(emails)
      ? (emails as Array<Record<string, unknown>>).find((e) => e.primary === true && e.verified === true)
      : undefined;
    if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new Error('GitHub /user answered without an id');
    return {
      id: String(user.id),
      email: str(primary?.email) ?? str(user.email),
      // Only the primary verified address is vouched for; a public profile email may not be.
      emailVerified: primary !== undefined,
      name: str(user.name) ?? str(user.login),
      avatar: str(user.avatar_url),
    };
  },
};

async function api(ctx: ProviderContext, path: string, token: string): Promise<unknown> {
  const base = (ctx.apiUrl ?? API).replace(/\/+$/, '');
  const res = await fetch(`${base}${path}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'Plinth',
    },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`GitHub ${path} answered ${res.status}`);
  return res.json();
}
