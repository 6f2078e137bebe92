/**
 * The social sign-in providers (docs/api.md §4, §5): the one list every other list derives from.
 * Adding one is a provider file in the server (`auth/oauth/providers/<id>.ts`) and one entry here.
 */
export const OAUTH_PROVIDERS = ['google', 'github', 'linkedin', 'microsoft', 'apple'] as const;
export type OAuthProviderId = (typeof OAUTH_PROVIDERS)[number];

/**
 * Providers configured with a client id and secret; the others (Apple) have settings of their own.
 * @example CLIENT_SECRET_PROVIDERS.includes('github') // true
 */
export const CLIENT_SECRET_PROVIDERS = ['google', 'github', 'linkedin', 'microsoft'] as const satisfies readonly OAuthProviderId[];
export type ClientSecretProviderId = (typeof CLIENT_SECRET_PROVIDERS)[number];

/** @example isOAuthProvider('github') // true; isOAuthProvider('myspace') // false */
export function isOAuthProvider(name: string): name is OAuthProviderId {
  return (OAUTH_PROVIDERS as readonly string[]).includes(name);
}

/**
 * The ids an OpenID Connect provider of `oidc_providers` may not take: the built-in providers,
 * and the identity names of the other sign-in methods (`auth.identities.provider`).
 */
export const RESERVED_PROVIDER_IDS = [...OAUTH_PROVIDERS, 'email', 'phone'] as const;

/** How an `oidc_providers[].id` looks: lowercase letters, digits and `-`, 2 to 32 characters. */
export const OIDC_PROVIDER_ID = /^[a-z0-9-]{2,32}$/;

/**
 * What is wrong with an OpenID Connect provider id, or null (the console's form asks too).
 * @example oidcProviderIdProblem('corp-sso') // null; oidcProviderIdProblem('github') // 'is the name of a built-in provider …'
 */
export function oidcProviderIdProblem(id: unknown): string | null {
  if (typeof id !== 'string' || !OIDC_PROVIDER_ID.test(id)) return 'must be 2 to 32 lowercase letters, digits or -';
  if ((RESERVED_PROVIDER_IDS as readonly string[]).includes(id)) return `is reserved (${RESERVED_PROVIDER_IDS.join(', ')})`;
  return null;
}
