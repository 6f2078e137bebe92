import fc from 'fast-check';
import { exportJWK, generateKeyPair, type JSONWebKeySet, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { withUserinfo } from '../providers/oidc.js';
import { allowedAlgs, checkMetadata, keyFits, OidcProblem } from './discovery.js';
import { freshness, MAX_FRESH_MS } from './http-cache.js';
import { IdTokenProblem, verifyIdToken } from './id-token.js';

// The pure parts of OpenID Connect sign-in: caching headers, the discovery document's checks,
// which keys may verify what, and the ID token's verification with a time of our choosing (the
// end-to-end runs against real providers are in ../oidc.test.ts).

describe('freshness (RFC 9111)', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');
  it.each([
    [{ 'cache-control': 'public, max-age=3600' }, 3_600_000],
    [{ 'cache-control': 'max-age=0' }, 0],
    [{ 'cache-control': 'no-cache, max-age=600' }, 0],
    [{ 'cache-control': 'no-store' }, 'no-store'],
    [{ 'cache-control': 'max-age=99999999' }, MAX_FRESH_MS],
    [{ 'cache-control': 'max-age=abc' }, 0],
    [{ expires: 'Fri, 01 May 2026 12:10:00 GMT', date: 'Fri, 01 May 2026 12:00:00 GMT' }, 600_000],
    [{ expires: '0' }, 0],
    [{ expires: 'Fri, 01 May 2026 11:00:00 GMT' }, 0],
    [{}, 3_600_000],
  ])('%j → %s', (headers, expected) => {
    expect(freshness(new Headers(headers), now)).toBe(expected);
  });

  it('never throws and stays within 0 and a day, whatever the headers', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (cc, expires, date) => {
        const h = new Headers();
        for (const [k, v] of [
          ['cache-control', cc],
          ['expires', expires],
          ['date', date],
        ]) {
          try {
            h.set(k, v);
          } catch {
            // not a header value
          }
        }
        const f = freshness(h, now);
        expect(f === 'no-store' || (f >= 0 && f <= MAX_FRESH_MS)).toBe(true);
      }),
    );
  });
});

describe('checkMetadata', () => {
  const issuer = 'https://sso.example.com/realms/acme';
  const doc = {
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/certs`,
    response_types_supported: ['code', 'id_token'],
  };
  const problem = (d: unknown, iss = issuer) => {
    try {
      checkMetadata(iss, d);
      return null;
    } catch (err) {
      expect(err).toBeInstanceOf(OidcProblem);
      return (err as OidcProblem).code;
    }
  };

  it('takes a minimal document', () => expect(problem(doc)).toBeNull());
  it.each([
    ['not an object', [], 'oidc_unreachable'],
    ['another issuer', { ...doc, issuer: `${issuer}/` }, 'oidc_issuer_mismatch'],
    ['an http endpoint of an https issuer', { ...doc, token_endpoint: 'http://sso.example.com/token' }, 'oidc_unsupported'],
    ['a relative endpoint', { ...doc, authorization_endpoint: '/auth' }, 'oidc_unsupported'],
    ['no response types', { ...doc, response_types_supported: undefined }, 'oidc_unsupported'],
    ['an http userinfo endpoint', { ...doc, userinfo_endpoint: 'http://sso.example.com/me' }, 'oidc_unsupported'],
  ])('refuses %s', (_name, d, expected) => expect(problem(d)).toBe(expected));

  it('takes plain http endpoints only for a plain http issuer on a loopback host', () => {
    const local = 'http://127.0.0.1:8081';
    const endpoints = { authorization_endpoint: `${local}/auth`, token_endpoint: `${local}/token`, jwks_uri: `${local}/jwks` };
    expect(problem({ ...doc, ...endpoints, issuer: local }, local)).toBeNull();
  });

  it('allows only asymmetric algorithms, RS256 when none is announced', () => {
    expect(allowedAlgs({})).toEqual(['RS256']);
    expect(allowedAlgs({ id_token_signing_alg_values_supported: ['none', 'HS256', 'HS512', 'ES256', 'EdDSA'] })).toEqual([
      'ES256',
      'EdDSA',
    ]);
  });
});

describe('keyFits', () => {
  it.each<[JWK, string, boolean]>([
    [{ kty: 'RSA', n: 'x', e: 'AQAB' }, 'RS256', true],
    [{ kty: 'RSA', n: 'x', e: 'AQAB', use: 'enc' }, 'RS256', false],
    [{ kty: 'RSA', n: 'x', e: 'AQAB', alg: 'PS256' }, 'RS256', false],
    [{ kty: 'RSA', n: 'x', e: 'AQAB', key_ops: ['encrypt'] }, 'RS256', false],
    [{ kty: 'RSA', n: 'x', e: 'AQAB', d: 'secret' }, 'RS256', false],
    [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, 'ES256', true],
    [{ kty: 'EC', crv: 'P-384', x: 'x', y: 'y' }, 'ES256', false],
    [{ kty: 'oct', k: 'c2VjcmV0' }, 'HS256', false],
    [{ kty: 'oct', k: 'c2VjcmV0' }, 'RS256', false],
    [{ kty: 'OKP', crv: 'Ed25519', x: 'x' }, 'EdDSA', true],
  ])('%j for %s: %s', (jwk, alg, fits) => expect(keyFits(jwk, alg)).toBe(fits));
});

describe('verifyIdToken', () => {
  const issuer = 'https://sso.example.com';
  const now = Date.parse('2026-05-01T12:00:00Z');
  const iat = Math.floor(now / 1000);
  const claims = { iss: issuer, aud: 'client-1', sub: 'u-1', nonce: 'n-1', iat, exp: iat + 600 };
  const expect1 = { issuer, clientId: 'client-1', nonce: 'n-1', now };
  let key: CryptoKey;
  let jwk: JWK;
  let other: CryptoKey;
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', use: 'sig' };
    other = (await generateKeyPair('ES256')).privateKey;
  });
  const sign = (c: Record<string, unknown>, header: Record<string, unknown> = { alg: 'ES256', kid: 'k1' }, k: CryptoKey = key) =>
    new SignJWT(c).setProtectedHeader(header as { alg: string }).sign(k);
  /** A provider whose key set is `sets[0]` until refetched, then `sets[1]`…; counts the fetches. */
  const keys = (...sets: JSONWebKeySet[]) => {
    let i = 0;
    const fetches = { n: 0 };
    return {
      fetches,
      keys: async (refresh: boolean) => {
        if (refresh) {
          fetches.n++;
          i = Math.min(i + 1, sets.length - 1);
        }
        return sets[i];
      },
    };
  };

  it('verifies a good token, and says which key', async () => {
    const k = keys({ keys: [jwk] });
    const out = await verifyIdToken(await sign(claims), { algorithms: ['ES256'], keys: k.keys, expect: expect1 });
    expect(out).toMatchObject({ alg: 'ES256', kid: 'k1', claims: { sub: 'u-1' } });
    expect(k.fetches.n).toBe(0);
  });

  it('a kid it does not know: fetches the set once more and finds the new key', async () => {
    const k = keys({ keys: [{ ...jwk, kid: 'old' }] }, { keys: [{ ...jwk, kid: 'old' }, jwk] });
    await verifyIdToken(await sign(claims), { algorithms: ['ES256'], keys: k.keys, expect: expect1 });
    expect(k.fetches.n).toBe(1);
  });

  it('a kid nobody publishes: one refetch, then refused', async () => {
    const k = keys({ keys: [jwk] });
    await expect(
      verifyIdToken(await sign(claims, { alg: 'ES256', kid: 'zzz' }), { algorithms: ['ES256'], keys: k.keys, expect: expect1 }),
    ).rejects.toThrow(/no key/);
    expect(k.fetches.n).toBe(1);
  });

  it.each<[string, () => Promise<string>, RegExp]>([
    ['another key', () => sign(claims, { alg: 'ES256', kid: 'k1' }, other), /signature/],
    [
      'HS256',
      () => sign(claims, { alg: 'HS256', kid: 'k1' }, new TextEncoder().encode('x'.repeat(32)) as unknown as CryptoKey),
      /algorithm/,
    ],
    [
      'alg none',
      async () => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`,
      /algorithm|valid/,
    ],
    ['expired', () => sign({ ...claims, exp: iat - 120 }), /expired/],
    ['not yet valid', () => sign({ ...claims, nbf: iat + 600 }), /nbf/],
    ['another issuer', () => sign({ ...claims, iss: 'https://evil.example' }), /iss/],
    ['another audience', () => sign({ ...claims, aud: 'client-2' }), /aud/],
    ['two audiences, no azp', () => sign({ ...claims, aud: ['client-1', 'client-2'] }), /azp/],
    ['another azp', () => sign({ ...claims, azp: 'client-2' }), /azp/],
    ['another nonce', () => sign({ ...claims, nonce: 'n-2' }), /nonce/],
    ['no nonce', () => sign({ ...claims, nonce: undefined }), /nonce/],
    ['no sub', () => sign({ ...claims, sub: undefined }), /sub/],
  ])('refuses %s', async (_name, token, why) => {
    const err = await verifyIdToken(await token(), { algorithms: ['ES256'], keys: keys({ keys: [jwk] }).keys, expect: expect1 }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(IdTokenProblem);
    expect(err.message).toMatch(why);
  });

  it('several keys fit and the token names no kid: refused', async () => {
    const err = await verifyIdToken(await sign(claims, { alg: 'ES256' }), {
      algorithms: ['ES256'],
      keys: keys({ keys: [jwk, { ...jwk, kid: 'k2' }] }).keys,
      expect: expect1,
    }).catch((e) => e);
    expect(err.message).toMatch(/several keys/);
  });
});

describe('withUserinfo', () => {
  it('fills what the ID token lacks, and takes email with its verification from one source', () => {
    expect(withUserinfo({ sub: 'a', name: 'A' }, { sub: 'a', email: 'a@x.io', email_verified: true, name: 'B', picture: 'p' })).toEqual({
      sub: 'a',
      name: 'A',
      email: 'a@x.io',
      email_verified: true,
      picture: 'p',
    });
    expect(withUserinfo({ sub: 'a', email_verified: true }, { sub: 'a', email: 'a@x.io' }).email_verified).toBeUndefined();
    expect(withUserinfo({ sub: 'a', email: 'a@x.io', email_verified: false }, { email: 'b@x.io', email_verified: true })).toMatchObject({
      email: 'a@x.io',
      email_verified: false,
    });
  });
});
