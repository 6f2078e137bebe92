/**
 * Social sign-in (docs/api.md §5): Google, GitHub, LinkedIn, Microsoft, Apple.
 * - endpoints: GET /v1/auth/oauth/{provider}?redirect_url= (302 to the provider),
 *   GET and POST /v1/auth/oauth/{provider}/callback (302 back to the app with the session, or
 *   the error, in the fragment);
 * - tables: auth.oauth_flows (migration 0009): flows in progress, single use;
 * - error codes: provider_not_found, provider_disabled, redirect_not_allowed, invalid_state,
 *   oauth_failed, email_exists (in the fragment);
 * - config: OAUTH_<PROVIDER>_URL, OAUTH_GITHUB_API_URL (config.oauth: local servers in tests).
 */
export { PROVIDER_IDS, type ProviderId } from './provider.js';
export { acceptForms, createOAuthHandlers, StartQuery } from './routes.js';
export { createOAuthService, type OAuthService } from './service.js';
