import { isLoopback, isLoopbackHttp, type OidcProviderSettings } from '@plinth/shared';
import type { JSONWebKeySet, JWK } from 'jose';
import type * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { type Clock, createGuardedFetch, type GuardedFetch } from '../../../lib/index.js';
import { FetchProblem, jsonCache } from './http-cache.js';

export type OidcProblemCode = 'oidc_unreachable' | 'oidc_issuer_mismatch' | 'oidc_unsupported';

/** Why a provider cannot be used, with the error code and the settings field it is about. */
export class OidcProblem extends Error {
  constructor(
    readonly code: OidcProblemCode,
    message: string,
    readonly field: keyof OidcProviderSettings = 'issuer',
  ) {
    super(message);
  }
}

/**
 * The ID token signature algorithms accepted: asymmetric only. `none` is never accepted, and no
 * HS* either: an HMAC "signed" with the provider's public key (which anyone has) would verify.
 */
export const ID_TOKEN_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** The discovery document's address (OpenID Connect Discovery §4: the issuer, then the well-known path). */
export const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

/**
 * The algorithms an ID token of this provider may use: ours that it announces, or RS256, the
 * OpenID Connect default, when it announces none.
 * @example allowedAlgs({ id_token_signing_alg_values_supported: ['RS256', 'HS256', 'none'] }) // ['RS256']
 */
export function allowedAlgs(meta: { id_token_signing_alg_values_supported?: unknown }): string[] {
  const announced = meta.id_token_signing_alg_values_supported;
  return Array.isArray(announced) ? ID_TOKEN_ALGS.filter((a) => announced.includes(a)) : ['RS256'];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A discovery document checked for what sign-in needs; throws OidcProblem (issuer mismatch, no
 * code flow, no JWKS, no allowed algorithm, no PKCE S256, an endpoint that is not https).
 * @example checkMetadata('https://sso.example.com', await (await fetch(discoveryUrl(issuer))).json())
 */
export function checkMetadata(issuer: string, doc: unknown): oidc.ServerMetadata {
  if (!isObject(doc)) throw new OidcProblem('oidc_unreachable', `${discoveryUrl(issuer)} is not a discovery document (a JSON object)`);
  if (doc.issuer !== issuer) {
    const named = typeof doc.issuer === 'string' ? `"${doc.issuer.slice(0, 300)}"` : 'no issuer';
    throw new OidcProblem(
      'oidc_issuer_mismatch',
      `the discovery document names ${named}; the issuer must be exactly that string (OpenID Connect Discovery §4.3)`,
    );
  }
  const unsupported = (why: string) => new OidcProblem('oidc_unsupported', why);
  const plainHttp = isLoopbackHttp(issuer);
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint']) {
    const v = doc[name];
    if (v === undefined && name === 'userinfo_endpoint') continue;
    if (typeof v !== 'string')
      throw unsupported(`the discovery document has no ${name}${name === 'jwks_uri' ? ' (the keys that sign ID tokens)' : ''}`);
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      throw unsupported(`its ${name} is not a URL`);
    }
    if (url.protocol !== 'https:' && !(plainHttp && url.protocol === 'http:')) throw unsupported(`its ${name} is not https`);
  }
  const types = doc.response_types_supported;
  if (!Array.isArray(types) || !types.includes('code'))
    throw unsupported('it does not offer the authorization code flow (response_types_supported lacks "code")');
  const grants = doc.grant_types_supported;
  if (grants !== undefined && !(Array.isArray(grants) && grants.includes('authorization_code')))
    throw unsupported('it does not offer the authorization_code grant (grant_types_supported)');
  if (allowedAlgs(doc).length === 0)
    throw unsupported(`it signs ID tokens with none of ${ID_TOKEN_ALGS.join(', ')} (id_token_signing_alg_values_supported)`);
  const pkce = doc.code_challenge_methods_supported;
  if (pkce !== undefined && !(Array.isArray(pkce) && pkce.includes('S256')))
    throw unsupported('it does not offer PKCE with S256 (code_challenge_methods_supported)');
  return doc as unknown as oidc.ServerMetadata;
}

/**
 * What this provider's settings need of its metadata besides sign-in itself: the client
 * authentication method. Throws OidcProblem on the field to change.
 */
export function checkClientFit(meta: oidc.ServerMetadata, conf: OidcProviderSettings): void {
  const methods = meta.token_endpoint_auth_methods_supported;
  // Absent, the OpenID Connect default applies: client_secret_basic only.
  const offered = Array.isArray(methods) ? methods : ['client_secret_basic'];
  if (!offered.includes(conf.token_endpoint_auth_method)) {
    throw new OidcProblem(
      'oidc_unsupported',
      `the provider does not take ${conf.token_endpoint_auth_method} (it offers ${offered.slice(0, 6).join(', ') || 'none'})`,
      'token_endpoint_auth_method',
    );
  }
}

/**
 * Keys of a key set that may verify a signature with one of `algs`: public keys of a matching
 * type, meant for signatures. Throws OidcProblem when it is not a key set.
 */
export function signingKeys(jwks: unknown, algs: readonly string[]): JWK[] {
  if (!isObject(jwks) || !Array.isArray(jwks.keys))
    throw new OidcProblem('oidc_unsupported', 'its jwks_uri does not answer a key set ({"keys": [...]})');
  return (jwks.keys as unknown[]).filter((k): k is JWK => isObject(k) && algs.some((alg) => keyFits(k as JWK, alg)));
}

/** Whether a JWK may verify a signature made with `alg` (RFC 7517 `use`, `key_ops`, `alg`; the curve). */
export function keyFits(jwk: JWK, alg: string): boolean {
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (Array.isArray(jwk.key_ops) && !jwk.key_ops.includes('verify')) return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if ('d' in jwk) return false; // a private key has no business in a public key set
  if (/^(RS|PS)/.test(alg)) return jwk.kty === 'RSA';
  if (alg === 'ES256') return jwk.kty === 'EC' && jwk.crv === 'P-256';
  if (alg === 'ES384') return jwk.kty === 'EC' && jwk.crv === 'P-384';
  if (alg === 'ES512') return jwk.kty === 'EC' && jwk.crv === 'P-521';
  if (alg === 'EdDSA' || alg === 'Ed25519') return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  return false;
}

const TIMEOUT_MS = 10_000;

/**
 * Discovery documents and key sets of OpenID Connect providers, cached by their HTTP caching
 * headers (http-cache.ts) and shared by sign-in, the test sign-in and the settings check. Every
 * request to a provider (these, and openid-client's token and userinfo calls through `fetch`)
 * goes through the address guard (lib/guarded-fetch.ts): no loopback, private, link-local or
 * metadata address, except loopback while `publicUrl` is itself loopback (a provider on the
 * developer's machine). A refused address is only "could not be reached" (docs/security.md).
 * @example const discovery = oidcDiscovery({ clock, log, publicUrl }); const meta = await discovery.metadata('https://sso.example.com');
 */
export function oidcDiscovery(opts: { clock: Clock; log: Logger; publicUrl: string; timeoutMs?: number; fetch?: GuardedFetch }) {
  const guarded = opts.fetch ?? createGuardedFetch({ allowLoopback: isLoopback(opts.publicUrl) });
  const cacheOf = (fetch?: GuardedFetch) =>
    jsonCache({
      clock: opts.clock,
      timeoutMs: opts.timeoutMs ?? TIMEOUT_MS,
      fetch,
      onStale: (url, err) => opts.log.warn({ url, err: err.message }, 'oidc: provider unreachable, using its cached document'),
    });
  const cache = cacheOf(guarded);
  // The built-in providers' key sets: their endpoints are the operator's (OAUTH_<PROVIDER>_URL), not a setting.
  const builtIn = cacheOf();
  const fetched = async (url: string, options: { refresh?: boolean; allowStale?: boolean; builtIn?: boolean }) => {
    try {
      return await (options.builtIn ? builtIn : cache).get(url, options);
    } catch (err) {
      if (err instanceof FetchProblem) throw new OidcProblem('oidc_unreachable', err.message);
      throw err;
    }
  };
  return {
    /** The guarded fetch every request to a provider goes through (openid-client's `customFetch`). */
    fetch: guarded,
    /** The provider's checked metadata. `allowStale`: sign-in rides out an outage of the provider on a copy up to a day old. */
    async metadata(issuer: string, options: { allowStale?: boolean } = {}): Promise<oidc.ServerMetadata> {
      return checkMetadata(issuer, await fetched(discoveryUrl(issuer), options));
    },
    /**
     * The key set at `jwksUri`; `refresh` asks the provider again even when the copy is fresh;
     * `builtIn`: a built-in provider's (Google, Microsoft…), whose URLs no setting chooses, unguarded.
     */
    async keys(jwksUri: string, options: { refresh?: boolean; allowStale?: boolean; builtIn?: boolean } = {}): Promise<JSONWebKeySet> {
      const jwks = await fetched(jwksUri, options);
      signingKeys(jwks, ID_TOKEN_ALGS);
      return jwks as JSONWebKeySet;
    },
  };
}

export type OidcDiscovery = ReturnType<typeof oidcDiscovery>;
