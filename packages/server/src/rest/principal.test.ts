import { type JWK, type JWTPayload, SignJWT, decodeJwt, generateKeyPair, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { email, signUp } from '../../test/auth.js';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Who is calling (docs/api.md §1), seen through /api/v1/db: the secret key in `apikey`, user
// tokens that are signed but not for this project, and the claims policies can read.
let t: TestServer;
const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';
let projectKey: { kid: string; jwk: JWK };
/** An open session of Alice's: the API refuses tokens of sessions that are not open. */
let aliceSession: string;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create table vault (id int primary key, secret text);
    insert into vault values (1, 'one'), (2, 'two');
    create table profiles (id int primary key, email text, note text);
    create policy by_email on profiles
      using (auth.role() = 'authenticated' and auth.jwt() ->> 'email' = email);
    insert into profiles values (1, 'alice@example.com', 'a'), (2, 'bob@example.com', 'b');
    create table notices (id int primary key, body text);
    create policy anon_only on notices using (auth.role() = 'anon');
    insert into notices values (1, 'hello');`);
  expect(res.statusCode, res.body).toBe(200);
  const key = await t.db.query<{ kid: string; private_jwk: JWK | string }>(
    'select kid, private_jwk from auth.signing_keys where active order by created_at desc limit 1',
  );
  const row = key.rows[0];
  projectKey = { kid: row.kid, jwk: typeof row.private_jwk === 'string' ? JSON.parse(row.private_jwk) : row.private_jwk };
  aliceSession = decodeJwt(await t.mintToken(ALICE)).session_id as string;
});
afterAll(() => t?.stop());

const get = (path: string, headers: Record<string, string>) => t.app.inject({ url: `/api/v1/db/${path}`, headers });

/** A token built like the server's own (ES256, kid, iss, aud), with any claim or key changed. */
async function forge(
  overrides: { aud?: string; iss?: string; claims?: JWTPayload; key?: CryptoKey | Uint8Array; kid?: string; alg?: string } = {},
) {
  const now = Math.floor(t.clock.now() / 1000);
  return new SignJWT({ role: 'authenticated', session_id: aliceSession, ...overrides.claims })
    .setProtectedHeader({ alg: overrides.alg ?? 'ES256', kid: overrides.kid ?? projectKey.kid, typ: 'JWT' })
    .setSubject(ALICE)
    .setIssuer(overrides.iss ?? t.tokens.issuer)
    .setAudience(overrides.aud ?? 'authenticated')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(overrides.key ?? (await importJWK(projectKey.jwk, 'ES256')));
}

function expectInvalidToken(res: { statusCode: number; body: string }) {
  expect(res.statusCode, res.body).toBe(401);
  expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_token', message: expect.any(String) });
}

describe('the secret key in the apikey header', () => {
  it('alone, it is the service role: every row, RLS bypassed', async () => {
    const res = await get('vault?order=id', { apikey: t.keys.secretKey });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { id: 1, secret: 'one' },
      { id: 2, secret: 'two' },
    ]);
    expect((await get('profiles?select=id&order=id', { apikey: t.keys.secretKey })).json()).toEqual([{ id: 1 }, { id: 2 }]);
    // The public key in the same header is anon: the table has RLS and no policy.
    expect((await get('vault', { apikey: t.keys.publicKey })).json()).toEqual([]);
  });
});

describe('user tokens that are not for this project', () => {
  it('a token forged the same way with the right claims is accepted (the control)', async () => {
    const res = await get('profiles?select=id', t.as.user(await forge({ claims: { email: 'alice@example.com' } })));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ id: 1 }]);
  });

  it('a well-signed token of a session that is not open is refused (signed out, revoked, or never opened)', async () => {
    const res = await get(
      'profiles?select=id',
      t.as.user(await forge({ claims: { email: 'alice@example.com', session_id: crypto.randomUUID() } })),
    );
    expectInvalidToken(res);
  });

  it('a wrong audience: 401 invalid_token', async () => {
    expectInvalidToken(await get('profiles', t.as.user(await forge({ aud: 'service' }))));
    expectInvalidToken(await get('profiles', t.as.user(await forge({ aud: 'https://other.example' }))));
  });

  it('a wrong issuer: 401 invalid_token', async () => {
    expectInvalidToken(await get('profiles', t.as.user(await forge({ iss: 'https://evil.example/v1/auth' }))));
    expectInvalidToken(await get('profiles', t.as.user(await forge({ iss: `${t.tokens.issuer}/` }))));
  });

  it("a token signed with another ES256 key under the project's kid: 401 invalid_token", async () => {
    const { privateKey } = await generateKeyPair('ES256');
    expectInvalidToken(await get('profiles', t.as.user(await forge({ key: privateKey }))));
    expectInvalidToken(await get('profiles', t.as.user(await forge({ key: privateKey, kid: 'someone-else' }))));
  });

  it('HS256 keyed with the public JWK, alg none, or a role other than authenticated: 401 invalid_token', async () => {
    // The classic confusion: the public key, which anyone can fetch, used as an HMAC secret.
    const jwks = await t.app.inject({ url: '/v1/auth/.well-known/jwks.json' });
    expect(jwks.json().keys[0].kid).toBe(projectKey.kid);
    const hs = await forge({ alg: 'HS256', key: new TextEncoder().encode(jwks.body) });
    expectInvalidToken(await get('profiles', t.as.user(hs)));
    const [, payload] = (await forge()).split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expectInvalidToken(await get('profiles', t.as.user(none)));
    expectInvalidToken(await get('vault', t.as.user(await forge({ claims: { role: 'service' } }))));
  });
});

describe('auth.role() and auth.jwt() in policies', () => {
  it('a policy on the email claim shows each signed-in user their own row', async () => {
    const alice = t.as.user(await t.mintToken(ALICE, { email: 'alice@example.com' }));
    const bob = t.as.user(await t.mintToken(BOB, { email: 'bob@example.com' }));
    expect((await get('profiles', alice)).json()).toEqual([{ id: 1, email: 'alice@example.com', note: 'a' }]);
    expect((await get('profiles', bob)).json()).toEqual([{ id: 2, email: 'bob@example.com', note: 'b' }]);
  });

  it('hides every row from anon and from a user whose token has no matching email', async () => {
    expect((await get('profiles', t.as.anon)).json()).toEqual([]);
    expect((await get('profiles', t.as.user(await t.mintToken(ALICE)))).json()).toEqual([]);
    expect((await get('profiles', t.as.user(await t.mintToken(ALICE, { email: 'carol@example.com' })))).json()).toEqual([]);
  });

  it("the policy also checks writes: a user cannot insert a row under another user's email", async () => {
    const alice = t.as.user(await t.mintToken(ALICE, { email: 'alice@example.com' }));
    const post = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/api/v1/db/profiles', headers: { ...alice, 'content-type': 'application/json' }, payload });
    const forged = await post({ id: 3, email: 'bob@example.com', note: 'x' });
    expect(forged.statusCode, forged.body).toBe(403);
    expect(forged.json().code).toBe('rls_violation');
    expect((await post({ id: 4, email: 'alice@example.com', note: 'mine' })).statusCode).toBe(201);
  });

  it("auth.role() is 'anon' for the public key and 'authenticated' for a user", async () => {
    expect((await get('notices', t.as.anon)).json()).toEqual([{ id: 1, body: 'hello' }]);
    expect((await get('notices', t.as.user(await t.mintToken(ALICE)))).json()).toEqual([]);
  });
});

describe('the auth schema through REST', () => {
  it.each(['users', 'passwords', 'refresh_tokens', 'one_time_tokens', 'sessions'])(
    'does not expose %s, even to the secret key',
    async (table) => {
      const res = await t.app.inject({ url: `/api/v1/db/${table}`, headers: t.as.service });
      expect([res.statusCode, res.json().code]).toEqual([404, 'table_not_found']);
    },
  );

  it("a real sign-in's access token is the authenticated role with auth.uid() = its user", async () => {
    const { user, session } = await signUp(t, email('visible'));
    const access = session.access_token;
    const setup = await t.sql(`create table notes (id serial primary key, body text, user_id uuid default auth.uid());
      create policy own on notes using (user_id = auth.uid()) with check (user_id = auth.uid());`);
    expect(setup.statusCode, setup.body).toBe(200);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/db/notes', headers: t.as.user(access), payload: { body: 'mine' } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().user_id).toBe(user.id);
    const other = await signUp(t, email('other'));
    const theirs = await t.app.inject({ url: '/api/v1/db/notes', headers: t.as.user(other.session.access_token) });
    expect(theirs.json()).toEqual([]);
    const mine = await t.app.inject({ url: '/api/v1/db/notes', headers: t.as.user(access) });
    expect(mine.json()).toEqual([expect.objectContaining({ body: 'mine', user_id: user.id })]);
  });
});
