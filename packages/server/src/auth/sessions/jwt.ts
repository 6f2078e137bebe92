import { type JWK, SignJWT, createLocalJWKSet, errors, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import type { Db } from '../../db/index.js';
import { ApiError, type VerifiedToken } from '../../http/index.js';
import { type Clock, randomToken } from '../../lib/index.js';

const KEY_LOCK = 726_354_010;
const CACHE_MAX = 10_000;
const RELOAD_EVERY_MS = 30_000;
const STATE_TYP = 'oauth-state+jwt';
const ACCESS_TYP = 'JWT';
const OBJECT_URL_TYP = 'storage-url+jwt';

export interface AccessClaims {
  sub: string;
  email?: string | null;
  phone?: string | null;
  session_id?: string;
  [claim: string]: unknown;
}

export interface TokenService {
  /** Signs an access token for a user (ES256, `kid` header). */
  sign(claims: AccessClaims, ttlSeconds: number): Promise<{ token: string; exp: number }>;
  /** Verifies a user token, caching its claims until it expires. */
  verify(token: string): Promise<VerifiedToken>;
  /** The public keys, for `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] };
  /**
   * Signs the `state` of a social sign-in (its own `typ` and audience: never accepted as an
   * access token, and an access token is never accepted as a state).
   */
  signState(payload: Record<string, unknown>, ttlSeconds: number): Promise<string>;
  /** The payload of a state this project signed and that has not expired, else null. */
  verifyState(state: string): Promise<Record<string, unknown> | null>;
  /**
   * Signs the token of a signed storage URL (its own `typ` and audience, like the state: never
   * an access token, and an access token is never one of these).
   */
  signObjectUrl(payload: Record<string, unknown>, ttlSeconds: number): Promise<string>;
  /** The payload of a signed-URL token this project signed and that has not expired, else null. */
  verifyObjectUrl(token: string): Promise<Record<string, unknown> | null>;
  issuer: string;
}

interface StoredKey {
  kid: string;
  private_jwk: JWK;
  public_jwk: JWK;
}

/** Loads the project's signing key from the database, making one at first start (once across instances). */
async function loadKeys(db: Db): Promise<StoredKey[]> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [KEY_LOCK]);
    const rows = (
      await tx.query<StoredKey>('select kid, private_jwk, public_jwk from auth.signing_keys where active order by created_at desc')
    ).rows;
    if (rows.length) return rows.map((r) => ({ ...r, private_jwk: parseJson(r.private_jwk), public_jwk: parseJson(r.public_jwk) }));
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = randomToken(12);
    const priv = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
    const pub = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
    await tx.query('insert into auth.signing_keys (kid, private_jwk, public_jwk) values ($1, $2, $3)', [
      kid,
      JSON.stringify(priv),
      JSON.stringify(pub),
    ]);
    return [{ kid, private_jwk: priv, public_jwk: pub }];
  });
}

function parseJson(v: unknown): JWK {
  return (typeof v === 'string' ? JSON.parse(v) : v) as JWK;
}

/**
 * The project's access-token service. Every instance on one database signs and verifies alike.
 * @example const tokens = await createTokenService(db, 'http://localhost:8080/v1/auth', systemClock);
 */
export async function createTokenService(db: Db, issuer: string, clock: Clock): Promise<TokenService> {
  let keys = await loadKeys(db);
  let jwkSet = createLocalJWKSet({ keys: keys.map((k) => k.public_jwk) });
  let signingKey = await importJWK(keys[0].private_jwk, 'ES256');
  let signingKid = keys[0].kid;
  const cache = new Map<string, VerifiedToken & { expMs: number }>();
  let reloadedAt = Number.NEGATIVE_INFINITY;
  const stateAudience = `${issuer}/oauth/state`;
  const objectUrlAudience = `${issuer}/storage/object`;

  /** A JWT of another kind than the access token: its own `typ` and audience. */
  async function signKind(typ: string, audience: string, payload: Record<string, unknown>, ttlSeconds: number) {
    const now = Math.floor(clock.now() / 1000);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: signingKid, typ })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(signingKey);
  }

  async function verifyKind(typ: string, audience: string, token: string): Promise<Record<string, unknown> | null> {
    try {
      const { payload } = await jwtVerify(token, jwkSet, {
        algorithms: ['ES256'],
        audience,
        issuer,
        typ,
        currentDate: new Date(clock.now()),
      });
      return payload as Record<string, unknown>;
    } catch {
      return null;
    }
  }

  /** Reads the keys again, at most every 30 s: tokens with made-up kids must not each cost a query. */
  async function reload(): Promise<boolean> {
    const now = clock.now();
    if (now - reloadedAt < RELOAD_EVERY_MS) return false;
    reloadedAt = now;
    keys = await loadKeys(db);
    jwkSet = createLocalJWKSet({ keys: keys.map((k) => k.public_jwk) });
    signingKey = await importJWK(keys[0].private_jwk, 'ES256');
    signingKid = keys[0].kid;
    return true;
  }

  async function verifyUncached(token: string, retry: boolean): Promise<VerifiedToken & { expMs: number }> {
    try {
      const { payload } = await jwtVerify(token, jwkSet, {
        algorithms: ['ES256'],
        audience: 'authenticated',
        issuer,
        // Its own typ, as every token kind here: a token of another kind is never an access token.
        typ: ACCESS_TYP,
        currentDate: new Date(clock.now()),
      });
      return { payload: payload as Record<string, unknown>, json: JSON.stringify(payload), expMs: (payload.exp ?? 0) * 1000 };
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new ApiError('token_expired', 'The access token has expired; refresh the session.');
      if (err instanceof errors.JWKSNoMatchingKey && retry && (await reload())) {
        // Another instance may have rotated the key.
        return verifyUncached(token, false);
      }
      throw new ApiError('invalid_token', 'The access token is invalid.');
    }
  }

  return {
    issuer,
    async sign(claims, ttlSeconds) {
      const now = Math.floor(clock.now() / 1000);
      const exp = now + ttlSeconds;
      const token = await new SignJWT({ role: 'authenticated', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: signingKid, typ: ACCESS_TYP })
        .setIssuer(issuer)
        .setAudience('authenticated')
        .setSubject(claims.sub)
        .setIssuedAt(now)
        .setExpirationTime(exp)
        .sign(signingKey);
      return { token, exp };
    },
    async verify(token) {
      const hit = cache.get(token);
      const now = clock.now();
      if (hit) {
        if (hit.expMs > now) return hit;
        cache.delete(token);
        throw new ApiError('token_expired', 'The access token has expired; refresh the session.');
      }
      const v = await verifyUncached(token, true);
      if (cache.size >= CACHE_MAX) {
        // Drop the oldest entries (Map keeps insertion order).
        let n = CACHE_MAX / 10;
        for (const k of cache.keys()) {
          cache.delete(k);
          if (--n <= 0) break;
        }
      }
      cache.set(token, v);
      return v;
    },
    jwks: () => ({ keys: keys.map((k) => k.public_jwk) }),
    async signState(payload, ttlSeconds) {
      const now = Math.floor(clock.now() / 1000);
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'ES256', kid: signingKid, typ: STATE_TYP })
        .setIssuer(issuer)
        .setAudience(stateAudience)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .sign(signingKey);
    },
    async verifyState(state) {
      try {
        const { payload } = await jwtVerify(state, jwkSet, {
          algorithms: ['ES256'],
          audience: stateAudience,
          issuer,
          typ: STATE_TYP,
          currentDate: new Date(clock.now()),
        });
        return payload as Record<string, unknown>;
      } catch {
        return null;
      }
    },
    signObjectUrl: (payload, ttlSeconds) => signKind(OBJECT_URL_TYP, objectUrlAudience, payload, ttlSeconds),
    verifyObjectUrl: (token) => verifyKind(OBJECT_URL_TYP, objectUrlAudience, token),
  };
}
