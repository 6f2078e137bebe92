import type { ErrorCode } from '@plinth/shared';
import * as oidc from 'openid-client';
import type { AppleProviderSettings, OAuthProviderSettings, OidcProviderSettings } from '../../settings/index.js';

import { OAUTH_PROVIDERS, type OAuthProviderId } from '@plinth/shared';

/** The built-in provider ids (packages/shared keeps the one list). */
export const PROVIDER_IDS = OAUTH_PROVIDERS;
export type ProviderId = OAuthProviderId;

/** What a provider tells us about its user: only these fields are kept (spec, item 12). */
export interface Profile {
  /** The provider's stable id of the user (`sub`, GitHub's numeric id). */
  id: string;
  email: string | null;
  /** Whether the provider vouches for the email: an unverified email is never used to link. */
  emailVerified: boolean;
  name: string | null;
  avatar: string | null;
}

/** Where a provider lives: its production URL, or a local server's in tests (`OAUTH_<NAME>_URL`). */
export interface ProviderContext {
  /** The issuer (OpenID Connect) or web base (GitHub) to use instead of the provider's own. */
  baseUrl: string | null;
  /** GitHub only: the REST API base instead of https://api.github.com (`OAUTH_GITHUB_API_URL`). */
  apiUrl: string | null;
  now(): number;
}

/**
 * One social provider (CONTRIBUTING.md convention 7): its endpoints as constants in its file,
 * its quirks commented where they happen. `configure` gives an openid-client Configuration
 * (discovered for OpenID Connect providers, static for GitHub); `profile` reads the user from
 * the token response.
 */
export interface OAuthProvider<S = OAuthProviderSettings> {
  /** A built-in provider's id, or an `oidc_providers` entry's. */
  id: string;
  /** Sends a PKCE challenge (S256) when the provider supports it. */
  pkce: boolean;
  /** OpenID Connect: a nonce is sent and the ID token checked against it. */
  oidc: boolean;
  /** Authorization parameters besides client_id, redirect_uri, state and PKCE: scope, response_mode. */
  authParams: Record<string, string>;
  /** The client id and a cache key for these settings (the key changes when a credential does). */
  clientKey(settings: S): string;
  configure(settings: S, ctx: ProviderContext): Promise<oidc.Configuration>;
  /** `params`: the callback's own parameters (Apple posts the user's name there). */
  profile(config: oidc.Configuration, tokens: TokenResponse, params: Record<string, string>, ctx: ProviderContext): Promise<Profile>;
  /**
   * The user of a verified ID token's claims alone (the same mapping `profile` makes of the code
   * flow's ID token, so both ways in reach the same identity): the providers that issue ID tokens
   * an app may bring to POST /auth/v1/token?grant_type=id_token. Absent: it issues none (GitHub).
   */
  idTokenProfile?(claims: Record<string, unknown>): Profile;
  /**
   * The issuers its ID tokens may name, from its discovery document's `issuer` and the token's
   * unverified claims (Microsoft's `{tenantid}` template); absent: the document's issuer.
   */
  idTokenIssuers?(discovered: string, claims: Record<string, unknown>): string[];
}

export type TokenResponse = Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
export type AnyProvider = OAuthProvider<OAuthProviderSettings> | OAuthProvider<AppleProviderSettings> | OAuthProvider<OidcProviderSettings>;

const TIMEOUT_SECONDS = 10;

/**
 * The client of an OpenID Connect provider, from its discovery document. Plain `http:` is
 * accepted only for an overridden (local test) issuer.
 * @example const config = await discover('https://accounts.google.com', id, oidc.ClientSecretPost(secret), null);
 */
export async function discover(
  issuer: string,
  clientId: string,
  auth: oidc.ClientAuth,
  override: string | null,
): Promise<oidc.Configuration> {
  const url = new URL(override ?? issuer);
  const insecure = url.protocol === 'http:';
  const config = await oidc.discovery(url, clientId, undefined, auth, {
    timeout: TIMEOUT_SECONDS,
    ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  config.timeout = TIMEOUT_SECONDS;
  return config;
}

/** The cache key of a provider's client: its credentials (every provider but Apple). */
export const secretClientKey = (s: OAuthProviderSettings) => `${s.client_id}:${s.client_secret}`;

/**
 * `clientKey` and `configure` of an OpenID Connect provider with a client id and secret (sent
 * in the form body), found by discovery at `issuer`: Google, Microsoft, LinkedIn.
 * @example export const google = { id: 'google', ...createDiscoveredClient('https://accounts.google.com'), … };
 */
export function createDiscoveredClient(issuer: string): Pick<OAuthProvider, 'clientKey' | 'configure'> {
  return {
    clientKey: secretClientKey,
    configure: (s, ctx) => discover(issuer, s.client_id ?? '', oidc.ClientSecretPost(s.client_secret ?? ''), ctx.baseUrl),
  };
}

/** A client from fixed endpoints (providers without discovery: GitHub). */
export function staticConfig(metadata: oidc.ServerMetadata, clientId: string, auth: oidc.ClientAuth): oidc.Configuration {
  const config = new oidc.Configuration(metadata, clientId, undefined, auth);
  if (new URL(metadata.issuer).protocol === 'http:') oidc.allowInsecureRequests(config);
  config.timeout = TIMEOUT_SECONDS;
  return config;
}

/** A string claim, or null (claims come from outside: never trust their types). */
export function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/**
 * A user from OpenID Connect's standard claims (`sub`, `email`, `email_verified` as true or
 * "true", `name`, `picture`): what LinkedIn sends, and Apple's claims before its own rules.
 * @example standardProfile({ sub: '42', email: 'a@b.c', email_verified: 'true' }).emailVerified // true
 */
export function standardProfile(c: Record<string, unknown>): Profile {
  return {
    id: String(c.sub),
    email: str(c.email),
    emailVerified: c.email_verified === true || c.email_verified === 'true',
    name: str(c.name),
    avatar: str(c.picture),
  };
}

/** The ID token's claims; OpenID Connect providers always send one with `openid` in scope. */
export function idClaims(tokens: TokenResponse): Record<string, unknown> {
  const claims = tokens.claims();
  if (!claims) throw new Error('the provider sent no ID token');
  return claims as Record<string, unknown>;
}

/** A failure after the state was trusted: it goes back to the app in the fragment. */
export class FlowError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}
