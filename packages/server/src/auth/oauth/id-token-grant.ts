import { createHash } from 'node:crypto';
import { decodeJwt, type JSONWebKeySet } from 'jose';
import type * as oidc from 'openid-client';
import { ApiError } from '../../http/index.js';
import { safeEqual, sha256 } from '../../lib/index.js';
import { allowedAlgs } from './oidc/discovery.js';
import { IdTokenProblem, verifyIdToken } from './oidc/id-token.js';
import type { Profile } from './provider.js';

/**
 * Why an ID token brought by an app was refused: GoTrue answers each in its own words (the
 * /auth/v1 face words them, supabase/auth/routes.ts); `details.reason` of the 400 oauth_failed.
 * - `token`: not a token of this provider (signature, issuer, expiry, not-before, `sub`);
 * - `audience`: issued to a client that is not this project's;
 * - `nonce_presence`: a nonce was given and the token has none, or the other way round;
 * - `nonce`: the token's nonce is not the SHA-256 (hex) of the nonce given;
 * - `access_token`: the token's `at_hash` does not match the access token given.
 */
export type IdTokenRefusal = 'token' | 'audience' | 'nonce_presence' | 'nonce' | 'access_token';

/** What POST /auth/v1/token?grant_type=id_token brings (auth-js's signInWithIdToken, linkIdentity with a token). */
export interface IdTokenGrant {
  /** A built-in provider's id or an `oidc_providers` entry's. */
  provider: string;
  idToken: string;
  /** The raw nonce the app made; the token carries its SHA-256 (hex), as GoTrue expects. */
  nonce: string | null;
  /** The provider's access token issued with the ID token: checked against `at_hash` when both are there. */
  accessToken: string | null;
  /** Attach the identity to this signed-in user's account (linkIdentity) instead of signing in. */
  link?: { userId: string; sessionId: string };
}

const MAX_TOKEN = 16 * 1024;
const refuse = (reason: IdTokenRefusal, message: string) => new ApiError('oauth_failed', message, { reason });

/** OpenID Connect Core §3.1.3.6: the left half of the access token's hash by the ID token's algorithm, base64url. */
function atHash(accessToken: string, alg: string): string | null {
  const bits = /(256|384|512)$/.exec(alg)?.[1] ?? (alg === 'EdDSA' || alg === 'Ed25519' ? '512' : null);
  if (!bits) return null;
  const digest = createHash(`sha${bits}`).update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/**
 * Verifies an ID token an app obtained from the provider itself (a native Google or Apple
 * sign-in, an OpenID Connect SDK) and answers its user, or throws 400 oauth_failed with the
 * `reason`. What is checked, as GoTrue's `IdTokenGrant` checks it and with the code flow's own
 * verifier (oidc/id-token.ts: the provider's JWKS by `kid`, its allowed algorithms, `exp`,
 * `nbf`, `iat`, `sub`): `iss` is the provider's (`issuers`), `aud` names the project's client
 * id for it, a nonce given is the preimage of the token's `nonce` (SHA-256, hex: the app gave
 * the provider the hash), and a nonce in the token needs one given (a token taken from another
 * app's sign-in cannot be replayed without its preimage).
 * @example const profile = await verifyGrantToken(input, { config, issuers, keys, toProfile });
 */
export async function verifyGrantToken(
  input: Pick<IdTokenGrant, 'idToken' | 'nonce' | 'accessToken'>,
  p: {
    config: oidc.Configuration;
    /** The issuers the token may name, from its unverified claims (Microsoft's tenant template). */
    issuers: (claims: Record<string, unknown>) => string[];
    keys: (jwksUri: string, refresh: boolean) => Promise<JSONWebKeySet>;
    toProfile: (claims: Record<string, unknown>) => Profile;
    log: (problem: string) => void;
  },
): Promise<Profile> {
  const bad = (problem: string) => {
    p.log(problem);
    return refuse('token', 'Bad ID token');
  };
  if (input.idToken.length > MAX_TOKEN) throw bad('the ID token is longer than 16 KiB');
  let unverified: Record<string, unknown>;
  try {
    unverified = decodeJwt(input.idToken) as Record<string, unknown>;
  } catch {
    throw bad('the ID token is not a JWT');
  }
  const meta = p.config.serverMetadata();
  const jwksUri = meta.jwks_uri;
  if (!jwksUri) throw bad('the provider has no jwks_uri to verify ID tokens with');
  const issuers = p.issuers(unverified);
  if (!issuers.length) throw bad('the ID token names no issuer of this provider');
  let verified: Awaited<ReturnType<typeof verifyIdToken>>;
  try {
    verified = await verifyIdToken(input.idToken, {
      algorithms: allowedAlgs(meta),
      keys: (refresh) => p.keys(jwksUri, refresh),
      expect: { issuer: issuers, clientId: null, nonce: null },
    });
  } catch (err) {
    if (err instanceof IdTokenProblem) throw bad(err.message);
    throw err;
  }
  const claims = verified.claims as Record<string, unknown>;
  const clientId = p.config.clientMetadata().client_id;
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!clientId || !audiences.includes(clientId)) {
    throw refuse('audience', `Unacceptable audience in id_token: [${audiences.map(String).join(' ').slice(0, 300)}]`);
  }
  const tokenNonce = typeof claims.nonce === 'string' && claims.nonce !== '' ? claims.nonce : null;
  if ((tokenNonce === null) !== (input.nonce === null)) {
    throw refuse('nonce_presence', 'Passed nonce and nonce in id_token should either both exist or not.');
  }
  if (tokenNonce !== null && input.nonce !== null && !safeEqual(sha256(input.nonce), tokenNonce)) {
    throw refuse('nonce', 'Nonces mismatch');
  }
  if (input.accessToken !== null && typeof claims.at_hash === 'string') {
    const expected = atHash(input.accessToken, verified.alg);
    if (expected !== null && !safeEqual(expected, claims.at_hash)) throw refuse('access_token', 'Bad ID token');
  }
  return p.toProfile(claims);
}
