import { createServer } from 'node:net';
import fc from 'fast-check';
import { decodeJwt, decodeProtectedHeader, exportSPKI, generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { startLocalServer } from '../../../test/local-server.js';
import { type OidcIdp, signInAt, startOidcIdp } from '../../../test/oidc-provider.js';

// Sign-in with any OpenID Connect provider (docs/oidc.md), end to end against two real OpenID
// Providers (npm oidc-provider) with different settings:
// - "corp": public subjects, the email in the ID token, RS256, client_secret_basic, and a
//   discovery document that also announces HS256 (so only our allowlist stands in its way);
// - "pair": pairwise subjects, the email only at the userinfo endpoint, ES256, client_secret_post.
// The browser steps at the provider are driven from Node here (signInAt); the Chromium run of
// the same flows is packages/sdk/test/e2e/oidc-browser.test.ts.

const APP = 'https://app.example.com/auth/callback';
const CALLBACK = (id: string) => `http://localhost:8080/v1/auth/oauth/${id}/callback`;

let t: TestServer;
let corp: OidcIdp;
let pair: OidcIdp;
let n = 0;

const corpEntry = () => ({
  id: 'corp',
  name: 'Corp SSO',
  issuer: corp.issuer,
  client_id: corp.clientId,
  client_secret: corp.clientSecret,
  enabled: true,
});
const pairEntry = () => ({
  id: 'pair',
  name: 'Pairwise',
  issuer: pair.issuer,
  client_id: pair.clientId,
  client_secret: pair.clientSecret,
  token_endpoint_auth_method: 'client_secret_post',
  enabled: true,
});

function patchSettings(payload: unknown) {
  return t.app.inject({ method: 'PATCH', url: '/api/v1/settings/auth', headers: t.as.service, payload: payload as object });
}

beforeAll(async () => {
  corp = await startOidcIdp({ name: 'corp', redirectUris: [CALLBACK('corp')], idTokenAlgs: ['RS256', 'HS256'] });
  pair = await startOidcIdp({
    name: 'pair',
    redirectUris: [CALLBACK('pair')],
    pairwise: true,
    claimsOnlyAtUserinfo: true,
    alg: 'ES256',
    tokenAuthMethod: 'client_secret_post',
  });
  t = await createAuthServer();
  const res = await patchSettings({ allowed_redirect_urls: ['https://app.example.com/auth'], oidc_providers: [corpEntry(), pairEntry()] });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await t?.stop();
  await corp?.stop();
  await pair?.stop();
});

/** A new account at `idp`; the returned name is what its sign-in page takes. */
function account(idp: OidcIdp, claims: Record<string, unknown>): string {
  const name = `user${++n}`;
  idp.accounts.set(name, claims);
  return name;
}

/** GET /v1/auth/oauth/{provider}: the provider URL and the browser's binding cookie. */
async function start(provider: string) {
  const res = await t.app.inject({ url: `/v1/auth/oauth/${provider}?redirect_url=${encodeURIComponent(APP)}` });
  expect(res.statusCode, res.body).toBe(302);
  return {
    location: new URL(String(res.headers.location)),
    cookie: /plinth_oauth=([A-Za-z0-9_-]{43})/.exec(String(res.headers['set-cookie']))?.[1] ?? '',
  };
}

/** The whole sign-in as a browser does it: the final redirect's fragment. */
async function signIn(provider: string, idp: OidcIdp, who: string) {
  const { location, cookie } = await start(provider);
  const cb = await signInAt(idp, location, who);
  expect(`${cb.origin}${cb.pathname}`).toBe(CALLBACK(provider));
  const res = await t.app.inject({
    url: `${cb.pathname}${cb.search}`,
    headers: { cookie: `plinth_oauth=${cookie}`, 'user-agent': 'vitest' },
  });
  expect(res.statusCode, res.body).toBe(302);
  const back = new URL(String(res.headers.location));
  expect(`${back.origin}${back.pathname}`).toBe(APP);
  return new URLSearchParams(back.hash.slice(1));
}

async function me(fragment: URLSearchParams) {
  expect(fragment.get('error_description')).toBeNull();
  const res = await call(t, 'GET', 'user', undefined, asUser(t, fragment.get('access_token') ?? ''));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function userCount(): Promise<number> {
  const res = await t.sql('select count(*)::int as n from auth.users');
  return res.json().results[0].rows[0].n;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('the oidc_providers setting', () => {
  it('is listed with its secret masked, and a masked secret sent back keeps the stored one', async () => {
    const got = (await t.app.inject({ url: '/api/v1/settings/auth', headers: t.as.service })).json();
    expect(got.oidc_providers[0]).toEqual({
      ...corpEntry(),
      client_secret: '********',
      scopes: ['openid', 'email', 'profile'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(JSON.stringify(got)).not.toContain(corp.clientSecret);
    // The console saves the whole object it read: the secrets must survive it.
    const saved = await patchSettings(got);
    expect(saved.statusCode, saved.body).toBe(200);
    expect(t.settings.auth().oidc_providers.map((p) => p.client_secret)).toEqual([corp.clientSecret, pair.clientSecret]);
  });

  it('offers the enabled providers in GET /v1/auth/settings, by id and name, without secrets', async () => {
    await patchSettings({ oidc_providers: [corpEntry(), { ...pairEntry(), enabled: false }] });
    try {
      const res = await call(t, 'GET', 'settings');
      expect(res.json().oidc_providers).toEqual([{ id: 'corp', name: 'Corp SSO' }]);
      expect(res.body).not.toContain('secret');
      expect(code(await t.app.inject({ url: `/v1/auth/oauth/pair?redirect_url=${encodeURIComponent(APP)}` }))).toEqual([
        403,
        'provider_disabled',
      ]);
    } finally {
      await patchSettings({ oidc_providers: [corpEntry(), pairEntry()] });
    }
  });

  it.each([
    ['a built-in name as id', { id: 'github' }, 'oidc_providers[0].id'],
    ['an identity name as id', { id: 'email' }, 'oidc_providers[0].id'],
    ['an id with capitals', { id: 'Corp' }, 'oidc_providers[0].id'],
    ['plain http off loopback', { issuer: 'http://sso.example.com' }, 'oidc_providers[0].issuer'],
    ['an issuer with a query', { issuer: 'https://sso.example.com/?realm=x' }, 'oidc_providers[0].issuer'],
    ['scopes without openid', { scopes: ['email'] }, 'oidc_providers[0].scopes'],
    ['an unknown auth method', { token_endpoint_auth_method: 'private_key_jwt' }, 'oidc_providers[0].token_endpoint_auth_method'],
    ['no secret', { client_secret: '' }, 'oidc_providers[0].client_secret'],
    ['a mask for a new id', { id: 'fresh', client_secret: '********' }, 'oidc_providers[0].client_secret'],
    // The stored secret never goes to another issuer without being typed again.
    [
      'a mask with another issuer',
      { client_secret: '********', issuer: 'https://sso.example.com/elsewhere' },
      'oidc_providers[0].client_secret',
    ],
    ['an unknown field', { tenant: 'x' }, 'oidc_providers[0].tenant'],
  ])('refuses %s (400 invalid_settings naming the field), saving nothing', async (_name, change, field) => {
    const res = await patchSettings({ oidc_providers: [{ ...corpEntry(), ...change }], cors_origins: ['http://localhost:*'] });
    expect(code(res)).toEqual([400, 'invalid_settings']);
    expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    expect(t.settings.auth().cors_origins).toEqual([]);
    expect(t.settings.auth().oidc_providers.map((p) => p.id)).toEqual(['corp', 'pair']);
  });

  it('refuses two providers with one id', async () => {
    const res = await patchSettings({ oidc_providers: [corpEntry(), { ...pairEntry(), id: 'corp' }] });
    expect(res.json().details).toEqual([expect.objectContaining({ field: 'oidc_providers[1].id' })]);
  });
});

describe('checked at save against the provider', () => {
  it('an unreachable issuer: 400 invalid_settings, the field and oidc_unreachable, nothing saved', async () => {
    const issuer = `http://127.0.0.1:${await closedPort()}`;
    const res = await patchSettings({ oidc_providers: [corpEntry(), pairEntry(), { ...corpEntry(), id: 'down', issuer }] });
    expect(code(res)).toEqual([400, 'invalid_settings']);
    expect(res.json().details).toEqual([
      {
        field: 'oidc_providers[2].issuer',
        code: 'oidc_unreachable',
        message: expect.stringContaining(`${issuer}/.well-known/openid-configuration`),
      },
    ]);
    expect(t.settings.auth().oidc_providers).toHaveLength(2);
  });

  it('an issuer that is not exactly the one its discovery document names: oidc_issuer_mismatch', async () => {
    const res = await patchSettings({ oidc_providers: [{ ...corpEntry(), issuer: `${corp.issuer}/` }] });
    expect(res.json().details).toEqual([
      { field: 'oidc_providers[0].issuer', code: 'oidc_issuer_mismatch', message: expect.stringContaining(`"${corp.issuer}"`) },
    ]);
  });

  it.each([
    ['no jwks_uri', { jwks_uri: undefined }, 'jwks_uri'],
    ['no code flow', { response_types_supported: ['id_token'] }, 'authorization code'],
    ['no authorization_code grant', { grant_types_supported: ['implicit'] }, 'authorization_code'],
    ['only HS256 and none', { id_token_signing_alg_values_supported: ['HS256', 'none'] }, 'signs ID tokens'],
    ['PKCE without S256', { code_challenge_methods_supported: ['plain'] }, 'S256'],
  ])('a provider with %s: oidc_unsupported', async (_name, change, says) => {
    const doc = (await (await fetch(`${corp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const server = await startLocalServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...doc, issuer: server.origin, ...change }));
    });
    try {
      const res = await patchSettings({ oidc_providers: [{ ...corpEntry(), issuer: server.origin }] });
      expect(res.json().details).toEqual([
        { field: 'oidc_providers[0].issuer', code: 'oidc_unsupported', message: expect.stringContaining(says) },
      ]);
    } finally {
      await server.close();
    }
  });

  it('a key set without a key for its algorithms, and an auth method it does not offer: oidc_unsupported on their fields', async () => {
    const doc = (await (await fetch(`${corp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const hmac = { kty: 'oct', k: 'c2VjcmV0', kid: 'h' };
    const server = await startLocalServer((req, res) => {
      const body =
        req.url === '/keys'
          ? { keys: [hmac] }
          : {
              ...doc,
              issuer: server.origin,
              jwks_uri: `${server.origin}/keys`,
              token_endpoint_auth_methods_supported: ['client_secret_basic'],
            };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      const noKeys = await patchSettings({ oidc_providers: [{ ...corpEntry(), issuer: server.origin }] });
      expect(noKeys.json().details).toEqual([
        { field: 'oidc_providers[0].issuer', code: 'oidc_unsupported', message: expect.stringContaining('no public key') },
      ]);
      const post = await patchSettings({
        oidc_providers: [{ ...corpEntry(), issuer: server.origin, token_endpoint_auth_method: 'client_secret_post' }],
      });
      expect(post.json().details).toEqual([
        {
          field: 'oidc_providers[0].token_endpoint_auth_method',
          code: 'oidc_unsupported',
          message: expect.stringContaining('client_secret_post'),
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('only new, changed or newly enabled providers are asked: one that is down does not block other changes', async () => {
    const before = corp.hits.discovery;
    const res = await patchSettings({ min_password_length: 9, oidc_providers: [corpEntry(), pairEntry()] });
    expect(res.statusCode, res.body).toBe(200);
    expect(corp.hits.discovery).toBe(before);
    await patchSettings({ min_password_length: 8 });
  });
});

describe('sign-up and sign-in', () => {
  it('corp: sends PKCE S256, a nonce, the state and the scopes; makes the user from the ID token', async () => {
    const addr = email('corp');
    const who = account(corp, { email: addr, email_verified: true, name: 'Ada Corp', picture: 'https://img.example/ada.png' });
    const { location } = await start('corp');
    expect(`${location.origin}${location.pathname}`).toBe(`${corp.issuer}/auth`);
    const q = Object.fromEntries(location.searchParams);
    expect(q).toMatchObject({
      client_id: corp.clientId,
      redirect_uri: CALLBACK('corp'),
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(q.nonce.length).toBeGreaterThan(20);
    expect(decodeJwt(q.state)).toMatchObject({ p: 'corp', r: APP });

    const before = corp.hits.userinfo;
    const user = await me(await signIn('corp', corp, who));
    expect(user).toMatchObject({ email: addr, name: 'Ada Corp', avatar: 'https://img.example/ada.png' });
    expect(user.email_confirmed_at).not.toBeNull();
    expect(user.identities).toEqual([expect.objectContaining({ provider: 'corp', email: addr })]);
    // The email was in the ID token: no userinfo call.
    expect(corp.hits.userinfo).toBe(before);
    // The identity is bound to the issuer: its subject means nothing at another issuer.
    const ids = await t.sql(`select provider_user_id from auth.identities where user_id = '${user.id}'`);
    expect(ids.json().results[0].rows[0].provider_user_id).toBe(`${corp.issuer}#${who}`);

    const again = await me(await signIn('corp', corp, who));
    expect(again.id).toBe(user.id);
  });

  it('pair: pairwise subject, the email from the userinfo endpoint, client_secret_post', async () => {
    const addr = email('pair');
    const who = account(pair, { email: addr, email_verified: true, name: 'Bo Pair' });
    const before = pair.hits.userinfo;
    const user = await me(await signIn('pair', pair, who));
    expect(user).toMatchObject({ email: addr, name: 'Bo Pair' });
    expect(user.email_confirmed_at).not.toBeNull();
    expect(pair.hits.userinfo).toBe(before + 1);
    // No email in the ID token, and a subject that is not the account's own name.
    expect(pair.lastIdToken?.email).toBeUndefined();
    expect(pair.lastIdToken?.sub).toBe(pair.subjectOf(who));
    expect(pair.lastIdToken?.sub).not.toBe(who);
    expect((await me(await signIn('pair', pair, who))).id).toBe(user.id);
  });

  it('links to an account with the same email only when the provider says email_verified: true', async () => {
    const addr = email('link');
    const owner = await signUp(t, addr);
    // Unverified: an account of its own, without the address; the owner's stays as it was.
    const stranger = await me(await signIn('corp', corp, account(corp, { email: addr, email_verified: false })));
    expect(stranger.id).not.toBe(owner.user.id);
    expect(stranger.email).toBeNull();
    // No email_verified at all (the userinfo of "pair" sends none): the same.
    const silent = await me(await signIn('pair', pair, account(pair, { email: addr })));
    expect(silent.id).not.toBe(owner.user.id);
    expect(silent.email).toBeNull();
    // Verified: the same account.
    const linked = await me(await signIn('pair', pair, account(pair, { email: addr.toUpperCase(), email_verified: true })));
    expect(linked.id).toBe(owner.user.id);
    expect(linked.identities.map((i: { provider: string }) => i.provider).sort()).toEqual(['email', 'pair']);
  });

  it('the email and its verification come from one source: an ID token email_verified never vouches for a userinfo email', async () => {
    const addr = email('mixed');
    const owner = await signUp(t, addr);
    const who = account(pair, { email: addr });
    // The ID token says email_verified: true, without an email; the userinfo endpoint has the email, unverified.
    pair.tamperNext(async (idToken) => pair.sign({ ...decodeJwt(idToken), email_verified: true }));
    const user = await me(await signIn('pair', pair, who));
    expect(user.id).not.toBe(owner.user.id);
    expect(user.email).toBeNull();
  });
});

describe('ID tokens that are refused (#error=oauth_failed, nobody signed in)', () => {
  const attacker = generateKeyPair('RS256', { extractable: true });
  const reSign = (claims: Record<string, unknown>, header: Record<string, unknown>, key: CryptoKey | Uint8Array) =>
    new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
  const cases: Array<[string, (idToken: string) => Promise<string>]> = [
    [
      'a claim changed, the signature kept',
      async (tok) => {
        const [h, , s] = tok.split('.');
        const claims = { ...decodeJwt(tok), email: 'mallory@evil.example', email_verified: true };
        return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
      },
    ],
    ['alg none', async (tok) => `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${tok.split('.')[1]}.`],
    [
      'HS256 with the provider public key as the secret (announced by its discovery document)',
      async (tok) => {
        const pem = await exportSPKI((await importJWK(corp.publicJwk(), 'RS256')) as CryptoKey);
        return reSign(decodeJwt(tok), { alg: 'HS256', kid: decodeProtectedHeader(tok).kid }, new TextEncoder().encode(pem));
      },
    ],
    [
      'signed by another key under the provider kid',
      async (tok) => reSign(decodeJwt(tok), { alg: 'RS256', kid: decodeProtectedHeader(tok).kid }, (await attacker).privateKey),
    ],
    [
      'signed by another key with its own kid',
      async (tok) => reSign(decodeJwt(tok), { alg: 'RS256', kid: 'mallory' }, (await attacker).privateKey),
    ],
    ['for another audience', async (tok) => corp.sign({ ...decodeJwt(tok), aud: 'another-client' })],
    ['from another issuer', async (tok) => corp.sign({ ...decodeJwt(tok), iss: 'https://evil.example' })],
    [
      'expired',
      async (tok) => corp.sign({ ...decodeJwt(tok), iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }),
    ],
    ['for several audiences without azp', async (tok) => corp.sign({ ...decodeJwt(tok), aud: [corp.clientId, 'another-client'] })],
    ['with another azp', async (tok) => corp.sign({ ...decodeJwt(tok), aud: [corp.clientId, 'x'], azp: 'another-client' })],
  ];

  it.each(cases)('%s', async (_name, tamper) => {
    const who = account(corp, { email: email('forged'), email_verified: true });
    corp.tamperNext(tamper);
    const users = await userCount();
    const fragment = await signIn('corp', corp, who);
    expect(Object.fromEntries(fragment)).toEqual({
      error: 'oauth_failed',
      error_description: 'corp sign-in could not be completed; try again.',
    });
    expect(await userCount()).toBe(users);
  });

  it('a key the provider never published makes the server fetch its JWKS once more, not on and on', async () => {
    const who = account(corp, { email: email('kid'), email_verified: true });
    corp.tamperNext(async (tok) => reSign(decodeJwt(tok), { alg: 'RS256', kid: 'unknown-kid' }, (await attacker).privateKey));
    const before = corp.hits.jwks;
    expect((await signIn('corp', corp, who)).get('error')).toBe('oauth_failed');
    expect(corp.hits.jwks).toBe(before + 1);
  });

  it('a nonce that is not the one this sign-in sent (a token issued for another sign-in)', async () => {
    const who = account(corp, { email: email('nonce'), email_verified: true });
    corp.nonceNext = 'a-nonce-of-another-sign-in';
    const users = await userCount();
    expect((await signIn('corp', corp, who)).get('error')).toBe('oauth_failed');
    expect(corp.lastIdToken?.nonce).toBe('a-nonce-of-another-sign-in');
    expect(await userCount()).toBe(users);
  });
});

describe('keys and discovery', () => {
  it('follows a key rotation at the provider: the new kid is fetched once, then known', async () => {
    corp.cacheControl = 'public, max-age=86400';
    try {
      const who = account(corp, { email: email('rotate'), email_verified: true });
      const user = await me(await signIn('corp', corp, who));
      const oldKid = decodeProtectedHeader(await corp.sign({})).kid;
      await corp.rotateKeys();
      const jwks = corp.hits.jwks;
      const after = await me(await signIn('corp', corp, who));
      expect(after.id).toBe(user.id);
      expect(corp.lastIdToken).toBeTruthy();
      expect(decodeProtectedHeader(await corp.sign({})).kid).not.toBe(oldKid);
      expect(corp.hits.jwks).toBe(jwks + 1);
      await me(await signIn('corp', corp, who));
      expect(corp.hits.jwks).toBe(jwks + 1);
    } finally {
      corp.cacheControl = null;
    }
  });

  it('keeps the discovery document as long as its Cache-Control says, and not at all with no-store', async () => {
    pair.cacheControl = 'max-age=300';
    try {
      t.clock.advance(25 * 60 * 60 * 1000); // past anything cached before
      await start('pair');
      const fetched = pair.hits.discovery;
      await start('pair');
      await start('pair');
      expect(pair.hits.discovery).toBe(fetched);
      t.clock.advance(301_000);
      await start('pair');
      expect(pair.hits.discovery).toBe(fetched + 1);
      pair.cacheControl = 'no-store';
      t.clock.advance(301_000);
      await start('pair');
      await start('pair');
      expect(pair.hits.discovery).toBe(fetched + 3);
    } finally {
      pair.cacheControl = null;
    }
  });

  it('rides out a provider outage on its cached document for a day, then answers 502 oidc_unreachable', async () => {
    const gone = await startOidcIdp({ name: 'gone', redirectUris: [CALLBACK('gone')] });
    const entry = { ...corpEntry(), id: 'gone', issuer: gone.issuer, client_id: gone.clientId, client_secret: gone.clientSecret };
    try {
      expect((await patchSettings({ oidc_providers: [corpEntry(), pairEntry(), entry] })).statusCode).toBe(200);
      await gone.stop();
      t.clock.advance(2 * 60 * 60 * 1000); // stale (an hour without caching headers), within a day
      expect((await start('gone')).location.origin).toBe(gone.issuer);
      t.clock.advance(24 * 60 * 60 * 1000);
      const res = await t.app.inject({ url: `/v1/auth/oauth/gone?redirect_url=${encodeURIComponent(APP)}` });
      expect(code(res)).toEqual([502, 'oidc_unreachable']);
      expect(res.json().message).toContain(`${gone.issuer}/.well-known/openid-configuration`);
    } finally {
      await patchSettings({ oidc_providers: [corpEntry(), pairEntry()] });
    }
  });
});

describe('test sign-in (management)', () => {
  async function runTest(id: string, idp: OidcIdp, who: string) {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/settings/auth/oidc/${id}/test`, headers: t.as.service });
    expect(res.statusCode, res.body).toBe(200);
    const { url, test_id, result_url } = res.json();
    const pending = await t.app.inject({ url: `/api/v1/settings/auth/oidc/${id}/tests/${test_id}`, headers: t.as.service });
    expect(pending.json()).toMatchObject({ status: 'pending', provider: id, claims: [] });
    // Any browser may finish a test sign-in (no binding cookie): it signs nobody in.
    const cb = await signInAt(idp, new URL(url), who);
    const back = await t.app.inject({ url: `${cb.pathname}${cb.search}` });
    expect(back.statusCode, back.body).toBe(302);
    expect(back.headers.location).toBe(result_url);
    expect(result_url).toBe(`http://localhost:8080/console/auth/oidc-test?provider=${id}&test=${test_id}`);
    const result = await t.app.inject({ url: `/api/v1/settings/auth/oidc/${id}/tests/${test_id}`, headers: t.as.service });
    expect(result.statusCode, result.body).toBe(200);
    return result.json();
  }

  it('lists every claim received with its source, names the missing ones, and signs nobody in', async () => {
    const addr = email('test');
    const users = await userCount();
    const full = await runTest('corp', corp, account(corp, { email: addr, email_verified: true, name: 'Tess' }));
    expect(full).toMatchObject({ status: 'done', issuer: corp.issuer, missing: [], error: null });
    expect(full.claims).toEqual(
      expect.arrayContaining([
        { name: 'email', value: addr, source: 'id_token' },
        { name: 'email_verified', value: true, source: 'id_token' },
        { name: 'nonce', value: expect.any(String), source: 'id_token' },
        { name: 'email', value: addr, source: 'userinfo' },
      ]),
    );
    expect(full.profile).toEqual({ subject: expect.any(String), email: addr, email_verified: true, name: 'Tess', avatar: null });

    const bare = await runTest('pair', pair, account(pair, { name: 'No Mail' }));
    expect(bare).toMatchObject({ status: 'done', missing: ['email', 'email_verified'] });
    expect(bare.claims).toEqual(expect.arrayContaining([{ name: 'name', value: 'No Mail', source: 'userinfo' }]));
    expect(await userCount()).toBe(users);
    // Starting a test sign-in is an admin action: the audit log has both, by provider.
    const audit = await t.app.inject({ url: '/api/v1/admin/audit?limit=1000', headers: t.as.service });
    const tests = (audit.json() as Array<{ action: string; target: string | null }>).filter((e) => e.action === 'settings.auth.oidc.test');
    expect(tests.map((e) => e.target)).toEqual(expect.arrayContaining(['corp', 'pair']));
  });

  it('a test whose ID token is refused says why', async () => {
    corp.tamperNext(async (tok) => corp.sign({ ...decodeJwt(tok), aud: 'another-client' }));
    const result = await runTest('corp', corp, account(corp, { email: email('bad'), email_verified: true }));
    expect(result).toMatchObject({ status: 'failed', claims: [], error: { code: 'oauth_failed', message: expect.stringMatching(/aud/i) } });
  });

  it('needs the secret key or an admin, and a provider of oidc_providers', async () => {
    expect(code(await t.app.inject({ method: 'POST', url: '/api/v1/settings/auth/oidc/corp/test' }))[0]).toBe(401);
    expect(code(await t.app.inject({ method: 'POST', url: '/api/v1/settings/auth/oidc/corp/test', headers: t.as.anon }))[0]).toBe(403);
    expect(code(await t.app.inject({ method: 'POST', url: '/api/v1/settings/auth/oidc/nope/test', headers: t.as.service }))).toEqual([
      404,
      'provider_not_found',
    ]);
    expect(code(await t.app.inject({ method: 'POST', url: '/api/v1/settings/auth/oidc/github/test', headers: t.as.service }))).toEqual([
      404,
      'provider_not_found',
    ]);
    expect(code(await t.app.inject({ url: '/api/v1/settings/auth/oidc/corp/tests/nope', headers: t.as.service }))).toEqual([
      404,
      'not_found',
    ]);
  });
});

describe('no input makes a 500', () => {
  it('random oidc_providers entries answer 200 or 400', async () => {
    const entry = fc.record(
      {
        id: fc.oneof(fc.constantFrom('corp', 'x', 'github', 'a-b'), fc.string()),
        name: fc.oneof(fc.string(), fc.integer()),
        // Loopback only: a valid entry is fetched, and tests talk to this machine alone.
        issuer: fc.oneof(
          fc.constant(corp.issuer),
          fc.constantFrom('http://127.0.0.1:1', 'https://localhost:1/realms/x'),
          fc.string(),
          fc.constant(null),
        ),
        client_id: fc.oneof(fc.string(), fc.constant(null)),
        client_secret: fc.oneof(fc.string(), fc.constant('********')),
        scopes: fc.oneof(fc.array(fc.string()), fc.constant(['openid']), fc.string()),
        token_endpoint_auth_method: fc.oneof(fc.constantFrom('client_secret_basic', 'client_secret_post'), fc.string()),
        enabled: fc.oneof(fc.boolean(), fc.string()),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.array(fc.oneof(entry, fc.anything()), { maxLength: 3 }), fc.anything()), async (list) => {
        const res = await patchSettings({ oidc_providers: list });
        expect([200, 400]).toContain(res.statusCode);
        if (res.statusCode === 400) expect(res.json().code).toBe('invalid_settings');
      }),
      { numRuns: 60 },
    );
    await patchSettings({ oidc_providers: [corpEntry(), pairEntry()] });
  });

  it('random callbacks of an oidc provider answer 302, 400 or 404', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('corp', 'pair', 'gone'),
        fc.record({ state: fc.string(), code: fc.string() }),
        async (provider, params) => {
          const res = await t.app.inject({ url: `/v1/auth/oauth/${provider}/callback?${new URLSearchParams(params)}` });
          expect([302, 400, 404]).toContain(res.statusCode);
        },
      ),
      { numRuns: 30 },
    );
  });
});
