import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../../test/db.js';
import { type Db, migrateSystem } from '../../db/index.js';
import { ApiError } from '../../http/index.js';
import { fakeClock } from '../../lib/clock.js';
import { createTokenService, type TokenService } from './jwt.js';

// The token service (docs/api.md §5): access tokens and social sign-in states, signed with the
// project's ES256 key kept in the database for every instance. Each kind has its own typ and
// audience and is refused where the other belongs.
let db: Db;
let cleanup: () => Promise<void>;
const clock = fakeClock(Date.parse('2026-11-24T12:00:00Z'));
let tokens: TokenService;
beforeAll(async () => {
  ({ db, cleanup } = await openTestDb());
  await migrateSystem(db);
  tokens = await createTokenService(db, ISSUER, clock);
});
afterAll(() => cleanup());

const ISSUER = 'http://localhost:8080/v1/auth';
const sub = () => crypto.randomUUID();

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  return 'accepted';
}

/** The project's signing key as the database holds it. */
async function projectKey() {
  const { rows } = await db.query<{ kid: string; private_jwk: unknown }>(
    'select kid, private_jwk from auth.signing_keys where active order by created_at desc limit 1',
  );
  const jwk = typeof rows[0].private_jwk === 'string' ? JSON.parse(rows[0].private_jwk) : rows[0].private_jwk;
  return { kid: rows[0].kid, key: await importJWK(jwk, 'ES256') };
}

/** A token built like an access token, with any part changed. */
async function forged(
  o: { key?: CryptoKey | Uint8Array; kid?: string; alg?: string; typ?: string; aud?: string; iss?: string; exp?: number } = {},
) {
  const pk = await projectKey();
  const now = Math.floor(clock.now() / 1000);
  return new SignJWT({ role: 'authenticated' })
    .setProtectedHeader({ alg: o.alg ?? 'ES256', kid: o.kid ?? pk.kid, typ: o.typ ?? 'JWT' })
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? 'authenticated')
    .setSubject(sub())
    .setIssuedAt(now)
    .setExpirationTime(o.exp ?? now + 600)
    .sign(o.key ?? pk.key);
}

describe('access tokens', () => {
  it('are ES256 with the key id, typ JWT, the project as issuer and audience "authenticated"', async () => {
    const id = sub();
    const { token, exp } = await tokens.sign({ sub: id, email: 'a@example.com', session_id: 's' }, 3600);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: (await projectKey()).kid, typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      sub: id,
      role: 'authenticated',
      aud: 'authenticated',
      iss: ISSUER,
      email: 'a@example.com',
      session_id: 's',
    });
    expect(claims.iat).toBe(Math.floor(clock.now() / 1000));
    expect(claims.exp).toBe(exp);
    expect(exp - (claims.iat as number)).toBe(3600);
  });

  it('verify answers the claims and their JSON (what auth.jwt() reads)', async () => {
    const id = sub();
    const { token } = await tokens.sign({ sub: id }, 60);
    const v = await tokens.verify(token);
    expect(v.payload).toMatchObject({ sub: id, role: 'authenticated' });
    expect(JSON.parse(v.json)).toEqual(v.payload);
  });

  it('expire at exp, exactly: valid a second before, token_expired from then on (cached or not)', async () => {
    const { token, exp } = await tokens.sign({ sub: sub() }, 120);
    const fresh = (await tokens.sign({ sub: sub() }, 120)).token;
    clock.set(exp * 1000 - 1000);
    await expect(tokens.verify(token)).resolves.toBeTruthy(); // cached from now on
    clock.set(exp * 1000);
    expect(await rejection(tokens.verify(token))).toBe('token_expired');
    expect(await rejection(tokens.verify(fresh))).toBe('token_expired'); // never verified before
    clock.set(exp * 1000 - 120_000);
  });

  it.each<[string, () => Promise<string>]>([
    ['another audience', () => forged({ aud: 'service' })],
    ['another issuer', () => forged({ iss: 'https://evil.example/v1/auth' })],
    ['another ES256 key under the project kid', async () => forged({ key: (await generateKeyPair('ES256')).privateKey })],
    [
      'HS256 keyed with the public JWK',
      async () => forged({ alg: 'HS256', key: new TextEncoder().encode(JSON.stringify(tokens.jwks().keys[0])) }),
    ],
    ['another typ (a state signed like an access token)', () => forged({ typ: 'oauth-state+jwt' })],
    ['a social sign-in state', () => tokens.signState({ jti: 'x', p: 'github', r: 'https://app.example.com/' }, 600)],
    [
      'alg none',
      async () => {
        const [, body] = (await tokens.sign({ sub: sub() }, 60)).token.split('.');
        return `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${body}.`;
      },
    ],
    [
      'a tampered payload',
      async () => {
        const [head, body, sig] = (await tokens.sign({ sub: sub() }, 60)).token.split('.');
        const claims = { ...JSON.parse(Buffer.from(body, 'base64url').toString()), sub: sub() };
        return `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
      },
    ],
    ['garbage', async () => 'eyJhbGciOiJFUzI1NiJ9.e30.xx'],
  ])('refuse %s: invalid_token', async (_name, make) => {
    expect(await rejection(tokens.verify(await make()))).toBe('invalid_token');
  });

  it('a well-made token passes (the control of the refusals above)', async () => {
    await expect(tokens.verify(await forged())).resolves.toBeTruthy();
  });
});

describe('social sign-in states', () => {
  it('carry their own typ and audience and verify as states', async () => {
    const state = await tokens.signState({ jti: 'j1', p: 'github', r: 'https://app.example.com/' }, 600);
    expect(decodeProtectedHeader(state).typ).toBe('oauth-state+jwt');
    expect(decodeJwt(state).aud).toBe(`${ISSUER}/oauth/state`);
    expect(await tokens.verifyState(state)).toMatchObject({ jti: 'j1', p: 'github', r: 'https://app.example.com/' });
  });

  it('refuse an access token, an expired state and a tampered one (null)', async () => {
    expect(await tokens.verifyState((await tokens.sign({ sub: sub() }, 600)).token)).toBeNull();
    const state = await tokens.signState({ jti: 'j2' }, 600);
    const [head, body, sig] = state.split('.');
    const other = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), jti: 'j3' })).toString(
      'base64url',
    );
    expect(await tokens.verifyState(`${head}.${other}.${sig}`)).toBeNull();
    const t0 = clock.now();
    clock.advance(600_000);
    expect(await tokens.verifyState(state)).toBeNull();
    clock.set(t0);
  });
});

describe('keys', () => {
  it('publishes the public key as a JWKS, never the private part', () => {
    const { keys } = tokens.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) });
    expect(keys[0].d).toBeUndefined();
  });

  it('two instances on one database sign and verify alike', async () => {
    const other = await createTokenService(db, ISSUER, clock);
    expect(other.jwks()).toEqual(tokens.jwks());
    const { token } = await other.sign({ sub: sub() }, 60);
    await expect(tokens.verify(token)).resolves.toBeTruthy();
  });

  it('a key added by another instance (rotation) is picked up at the first token that names it, and signs from then on', async () => {
    const rotated = await createTokenService(db, ISSUER, clock);
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = `rotated-${Date.now()}`;
    await db.query(
      "insert into auth.signing_keys (kid, private_jwk, public_jwk, created_at) values ($1, $2, $3, now() + interval '1 second')",
      [
        kid,
        JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' }),
        JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }),
      ],
    );
    const signedElsewhere = await forged({ key: privateKey, kid });
    clock.advance(30_000); // past the reload interval of the service below
    await expect(rotated.verify(signedElsewhere)).resolves.toBeTruthy();
    expect(rotated.jwks().keys.map((k) => k.kid)).toContain(kid);
    expect(decodeProtectedHeader((await rotated.sign({ sub: sub() }, 60)).token).kid).toBe(kid);
    await db.query('update auth.signing_keys set active = false where kid = $1', [kid]);
  });

  it('tokens with unknown kids are refused without a database read each: keys are re-read at most every 30 s', async () => {
    // The real database, with reads of the keys counted.
    let reads = 0;
    const counted: Db = {
      ...db,
      transaction: (fn) => {
        reads++;
        return db.transaction(fn);
      },
    };
    const service = await createTokenService(counted, ISSUER, clock);
    const atStart = reads;
    const ghost = (await generateKeyPair('ES256')).privateKey;
    for (let i = 0; i < 20; i++)
      expect(await rejection(service.verify(await forged({ key: ghost, kid: `ghost-${i}` })))).toBe('invalid_token');
    expect(reads - atStart).toBe(1);
    clock.advance(30_000);
    await service.verify(await forged({ key: ghost, kid: 'ghost-late' })).catch(() => undefined);
    expect(reads - atStart).toBe(2);
  });
});
