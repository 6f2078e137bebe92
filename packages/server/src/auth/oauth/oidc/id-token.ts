import { errors, importJWK, type JSONWebKeySet, type JWK, type JWSHeaderParameters, type JWTPayload, jwtVerify } from 'jose';
import { OidcProblem, signingKeys } from './discovery.js';

/** An ID token that is refused, and why (logged, and shown by a test sign-in; never to end-users). */
export class IdTokenProblem extends Error {}

/** The claims an ID token must have for us, besides its signature. */
export interface IdTokenExpectations {
  /**
   * The configured issuer (or the issuers a provider signs as: Google's with and without
   * `https://`); null where openid-client alone checks it (the code flow's built-in providers).
   */
  issuer: string | string[] | null;
  /**
   * This client's id: the audience, and `azp` when present. null: the caller checks the audience
   * itself (the ID token grant, whose token was issued to an app of the project, maybe another
   * of its client ids, so `azp` names that app, not us).
   */
  clientId: string | null;
  /** The nonce this sign-in sent; null: the caller checks it (the ID token grant's hashed nonce). */
  nonce: string | null;
  /**
   * The time to check `exp` and `nbf` against; default the real clock: the provider issued the
   * token by its real clock, whatever time our tests pretend it is (openid-client does the same).
   */
  now?: number;
}

export interface VerifyOptions {
  /** The algorithms this provider may sign with (discovery.ts `allowedAlgs`: never `none`, never HS*). */
  algorithms: string[];
  /** The provider's key set; `refresh` asks the provider again (once, for a key it does not know yet). */
  keys: (refresh: boolean) => Promise<JSONWebKeySet>;
  expect: IdTokenExpectations;
}

/** Clocks of two servers disagree by a little (OpenID Connect Core §3.1.3.7 allows for it). */
const CLOCK_TOLERANCE_S = 60;
const imported = new WeakMap<JWK, Map<string, Promise<CryptoKey | Uint8Array>>>();

/**
 * Verifies an ID token with jose against the provider's JWKS: the signature (an allowed
 * algorithm, a key of the set chosen by `kid`; a `kid` the cached set lacks makes it fetch the
 * set once more, which is how a key rotation at the provider is followed), the issuer, the
 * audience, `azp`, expiry and not-before, and the nonce. Returns the claims; throws IdTokenProblem.
 * @example const claims = await verifyIdToken(tokens.id_token, { algorithms: ['RS256'], keys: (r) => discovery.keys(uri, { refresh: r }), expect });
 */
export async function verifyIdToken(idToken: string, o: VerifyOptions): Promise<{ claims: JWTPayload; alg: string; kid: string | null }> {
  const resolve = async (header: JWSHeaderParameters) => {
    const alg = header.alg ?? '';
    const matching = (jwks: JSONWebKeySet) => signingKeys(jwks, [alg]).filter((k) => header.kid === undefined || k.kid === header.kid);
    let found = matching(await o.keys(false));
    if (found.length === 0) found = matching(await o.keys(true));
    if (found.length === 0) {
      throw new IdTokenProblem(
        `no key of the provider's JWKS fits the ID token (alg ${alg}, kid ${header.kid ?? 'none'}), even after fetching the JWKS again`,
      );
    }
    if (found.length > 1) throw new IdTokenProblem('several keys of the JWKS fit and the ID token names no kid');
    const jwk = found[0];
    let byAlg = imported.get(jwk);
    if (!byAlg) imported.set(jwk, (byAlg = new Map()));
    let key = byAlg.get(alg);
    if (!key) byAlg.set(alg, (key = importJWK(jwk, alg)));
    return key;
  };
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    verified = await jwtVerify(idToken, resolve, {
      algorithms: o.algorithms,
      ...(o.expect.clientId !== null ? { audience: o.expect.clientId } : {}),
      ...(o.expect.issuer !== null ? { issuer: o.expect.issuer } : {}),
      ...(o.expect.now !== undefined ? { currentDate: new Date(o.expect.now) } : {}),
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    });
  } catch (err) {
    // The provider's keys could not be had (OidcProblem): an outage, not a bad token.
    if (err instanceof OidcProblem) throw err;
    throw err instanceof IdTokenProblem ? err : new IdTokenProblem(describe(err));
  }
  const { payload: claims, protectedHeader } = verified;
  // OpenID Connect Core §3.1.3.7: several audiences need an azp, and an azp must be us.
  if (o.expect.clientId !== null) {
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp === undefined)
      throw new IdTokenProblem('the ID token has several audiences and no azp');
    if (claims.azp !== undefined && claims.azp !== o.expect.clientId)
      throw new IdTokenProblem('the ID token was issued to another client (azp)');
  }
  if (o.expect.nonce !== null && claims.nonce !== o.expect.nonce)
    throw new IdTokenProblem('the ID token nonce is not the one this sign-in sent');
  if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255)
    throw new IdTokenProblem('the ID token sub is not a string of 1 to 255 characters');
  return { claims, alg: protectedHeader.alg, kid: protectedHeader.kid ?? null };
}

/** jose's error as a sentence about the ID token. */
function describe(err: unknown): string {
  if (err instanceof errors.JOSEAlgNotAllowed)
    return 'the ID token is signed with an algorithm that is not allowed (none, HS*, or one the provider does not announce)';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the ID token signature does not verify with the provider key';
  if (err instanceof errors.JWTExpired) return 'the ID token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the ID token ${err.claim} claim is wrong (${err.reason})`;
  if (err instanceof errors.JOSEError) return `the ID token is not a valid signed JWT (${err.code})`;
  return `the ID token could not be verified (${(err as Error).message})`;
}
