import { type JWK, SignJWT, createLocalJWKSet, errors, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import type { Db } from '../../db/index.js';
import { ApiError, type VerifiedToken } from '../../http/index.js';
import { type Clock, iso, randomToken } from '../../lib/index.js';
import type { SessionState } from './state.js';

const KEY_LOCK = 726_354_010;
/** NOTIFY channel of a signing-key rotation: `rotate`, or `revoke` (the old keys are gone). */
export const KEYS_CHANNEL = 'plinth_keys';
/**
 * How long a rotated key stays in the JWKS: the longest a token it signed can live (an access
 * token, at most 30 days by session_duration_seconds; a signed URL, 7 days).
 */
export const RETIRE_AFTER_MS = 30 * 24 * 3600_000;
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
  /**
   * Reads the keys again now (a rotation was made here or heard of); `revoked`: tokens checked
   * before are checked again (their key may be gone).
   */
  reloadKeys(revoked: boolean): Promise<void>;
  /** Stops listening for rotations. */
  close(): Promise<void>;
}

interface StoredKey {
  kid: string;
  private_jwk: JWK;
  public_jwk: JWK;
  /** Epoch ms after which a rotated key leaves the JWKS; null for the key that signs. */
  retire_at?: number | null;
}

/** A fresh ES256 key pair as stored: the private and public JWK under one random kid. */
async function newKey(): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomToken(12);
  return {
    kid,
    private_jwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' },
    public_jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
  };
}

/**
 * Loads the project's signing keys from the database, making one at first start (once across
 * instances): the one that signs first, then the rotated ones still in the JWKS.
 */
async function loadKeys(db: Db, now: number): Promise<StoredKey[]> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [KEY_LOCK]);
    const rows = (
      await tx.query<StoredKey>(
        `select kid, private_jwk, public_jwk, (extract(epoch from retire_at) * 1000)::float8 as retire_at from auth.signing_keys
         where active and (retire_at is null or retire_at > $1::timestamptz) order by (retire_at is null) desc, created_at desc`,
        [iso(now)],
      )
    ).rows;
    if (rows.length) return rows.map((r) => ({ ...r, private_jwk: parseJson(r.private_jwk), public_jwk: parseJson(r.public_jwk) }));
    const key = await newKey();
    await tx.query('insert into auth.signing_keys (kid, private_jwk, public_jwk) values ($1, $2, $3)', [
      key.kid,
      JSON.stringify(key.private_jwk),
      JSON.stringify(key.public_jwk),
    ]);
    return [key];
  });
}

/** What a rotation did: the key that signs from now on, and the keys it retired or removed. */
export interface Rotation {
  kid: string;
  /** The old keys: still in the JWKS until `retire_at` (rotate), or gone at once (`revoked`). */
  previous: string[];
  revoked: boolean;
  /** When the old keys leave the JWKS (null when revoked). */
  retire_at: string | null;
  /** Sessions ended by a revocation (every session: their tokens were signed with the old keys). */
  sessions_ended: number;
}

/**
 * Rotates the project's signing key: a new ES256 key signs from now on; the old ones stay in
 * the JWKS until the longest life of a token they signed has passed (RETIRE_AFTER_MS), or with
 * `revoke` are removed at once, and every session ends (every token they signed is refused:
 * access tokens, signed URLs, OAuth states under way). Every instance hears of it (NOTIFY).
 * @example const r = await rotateSigningKey(db, clock, { revoke: false }, createSessionState(gate)); // r.kid signs from now on
 */
export async function rotateSigningKey(db: Db, clock: Clock, options: { revoke: boolean }, sessions: SessionState): Promise<Rotation> {
  const key = await newKey();
  const now = clock.now();
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [KEY_LOCK]);
    // Keys whose time is over are dropped for good.
    await tx.query('delete from auth.signing_keys where retire_at is not null and retire_at <= $1::timestamptz', [iso(now)]);
    const { rows } = await tx.query<{ kid: string }>('select kid from auth.signing_keys where active order by created_at');
    const retireAt = options.revoke ? null : iso(now + RETIRE_AFTER_MS);
    if (options.revoke) await tx.query('delete from auth.signing_keys');
    else await tx.query('update auth.signing_keys set retire_at = $1::timestamptz where retire_at is null', [retireAt]);
    await tx.query('insert into auth.signing_keys (kid, private_jwk, public_jwk, created_at) values ($1, $2, $3, $4::timestamptz)', [
      key.kid,
      JSON.stringify(key.private_jwk),
      JSON.stringify(key.public_jwk),
      iso(now),
    ]);
    const ended = options.revoke ? await sessions.revokeEverySession(tx, now) : 0;
    await tx.query('select pg_notify($1, $2)', [KEYS_CHANNEL, options.revoke ? 'revoke' : 'rotate']);
    return { kid: key.kid, previous: rows.map((r) => r.kid), revoked: options.revoke, retire_at: retireAt, sessions_ended: ended };
  });
}

function parseJson(v: unknown): JWK {
  return v as JWK;
}

/**
 * The project's access-token service. Every instance on one database signs and verifies alike.
 * @example const tokens = await createTokenService(db, 'http://localhost:8080/v1/auth', systemClock);
 */
export async function createTokenService(db: Db, issuer: string, clock: Clock): Promise<TokenService> {
  let keys = await loadKeys(db, clock.now());
  let jwkSet = createLocalJWKSet({ keys: keys.map((k) => k.public_jwk) });
  let signingKey = await importJWK(keys[0].private_jwk, 'ES256');
  let signingKid = keys[0].kid;
  const firstRetire = () => Math.min(...keys.map((k) => (k.retire_at == null ? Number.POSITIVE_INFINITY : Number(k.retire_at))));
  let nextRetire = firstRetire();
  /** A rotated key whose time is over leaves the JWKS and verifies nothing more, without a database read. */
  const retire = () => {
    const now = clock.now();
    if (now < nextRetire) return;
    keys = keys.filter((k) => k.retire_at == null || Number(k.retire_at) > now);
    jwkSet = createLocalJWKSet({ keys: keys.map((k) => k.public_jwk) });
    nextRetire = firstRetire();
  };
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

  async function verifyKind(typ: string, audience: string, token: string, retry = true): Promise<Record<string, unknown> | null> {
    retire();
    try {
      const { payload } = await jwtVerify(token, jwkSet, {
        algorithms: ['ES256'],
        audience,
        issuer,
        typ,
        currentDate: new Date(clock.now()),
      });
      return payload as Record<string, unknown>;
    } catch (err) {
      // Signed by a key another instance has just made (its NOTIFY not heard yet).
      if (err instanceof errors.JWKSNoMatchingKey && retry && (await reload())) return verifyKind(typ, audience, token, false);
      return null;
    }
  }

  /** Reads the keys again, at most every 30 s (unless `now`): tokens with made-up kids must not each cost a query. */
  async function reload(force = false): Promise<boolean> {
    const now = clock.now();
    if (!force && now - reloadedAt < RELOAD_EVERY_MS) return false;
    reloadedAt = now;
    keys = await loadKeys(db, now);
    jwkSet = createLocalJWKSet({ keys: keys.map((k) => k.public_jwk) });
    signingKey = await importJWK(keys[0].private_jwk, 'ES256');
    signingKid = keys[0].kid;
    nextRetire = firstRetire();
    return true;
  }

  const reloadKeys = async (revoked: boolean) => {
    await reload(true);
    // Verified tokens are cached until they expire: a revoked key's must be checked again.
    if (revoked) cache.clear();
  };
  // Another instance rotated: sign with the new key at once, and drop a revoked key's tokens.
  const unlisten = await db.listen(KEYS_CHANNEL, (payload) => {
    reloadKeys(payload === 'revoke').catch(() => undefined);
  });

  async function verifyUncached(token: string, retry: boolean): Promise<VerifiedToken & { expMs: number }> {
    retire();
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
    reloadKeys,
    close: () => unlisten(),
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
    jwks: () => {
      retire();
      return { keys: keys.map((k) => k.public_jwk) };
    },
    signState: (payload, ttlSeconds) => signKind(STATE_TYP, stateAudience, payload, ttlSeconds),
    verifyState: (state) => verifyKind(STATE_TYP, stateAudience, state),
    signObjectUrl: (payload, ttlSeconds) => signKind(OBJECT_URL_TYP, objectUrlAudience, payload, ttlSeconds),
    verifyObjectUrl: (token) => verifyKind(OBJECT_URL_TYP, objectUrlAudience, token),
  };
}
