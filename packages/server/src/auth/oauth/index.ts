/**
 * Social sign-in (docs/api.md §5.3): Google, GitHub, LinkedIn, Microsoft, Apple, and any OpenID
 * Connect provider of the `oidc_providers` setting (docs/oidc.md).
 * - endpoints: GET /v1/auth/oauth/{provider}?redirect_url= (302 to the provider),
 *   GET and POST /v1/auth/oauth/{provider}/callback (302 back to the app with the session, or
 *   the error, in the fragment); the test sign-in of an `oidc_providers` entry
 *   (`startTest`, `testResult`: management routes in admin/routes.ts);
 *   GoTrue's face of the same flow (supabase/auth): `startFace` for GET /auth/v1/authorize and
 *   /auth/v1/user/identities/authorize (linkIdentity: PKCE only), `faceCallback` for
 *   /auth/v1/callback, `redeem` for POST /auth/v1/token?grant_type=pkce, `signInWithIdToken`
 *   for POST /auth/v1/token?grant_type=id_token (an ID token the app got from the provider:
 *   sign-in, or with `link` the signed-in user's link);
 * - tables: auth.oauth_flows (migration 0009, GoTrue's columns 0170): flows in progress, single
 *   use; auth.oauth_codes (0170): a PKCE flow's codes, five minutes, deleted at any exchange
 *   attempt; auth.oidc_tests (0090): test sign-ins' results, one hour;
 * - error codes: provider_not_found, provider_disabled, redirect_not_allowed, invalid_state,
 *   oauth_failed, email_exists (in the fragment; an ID token refused: `details.reason`); pkce_required, identity_exists (linking); oidc_unreachable, oidc_issuer_mismatch,
 *   oidc_unsupported (a provider of `oidc_providers` that cannot be used);
 * - the settings check of `oidc_providers` (`oidcSettingsCheck`, handed to the settings store);
 * - config: OAUTH_<PROVIDER>_URL, OAUTH_GITHUB_API_URL (config.oauth: local servers in tests).
 */
export { PROVIDER_IDS, type ProviderId } from './provider.js';
export { acceptForms, createOAuthHandlers, fields as formFields, StartQuery } from './routes.js';
export { createOAuthService, type FaceStart, type OAuthService, type Redeemed } from './service.js';
export type { IdTokenGrant, IdTokenRefusal } from './id-token-grant.js';
export { oidcDiscovery, type OidcDiscovery } from './oidc/discovery.js';
export { oidcSettingsCheck } from './oidc/check.js';
