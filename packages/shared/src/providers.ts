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
