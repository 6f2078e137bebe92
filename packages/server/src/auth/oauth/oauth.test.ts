import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastCode, lastToken, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { type GitHubFake, type OidcProvider, socialSignIn, startGitHub, startOidcProvider } from '../../../test/oauth.js';

// Social sign-in end to end: our start route, a local provider speaking the real protocol
// (oauth2-mock-server for the OpenID Connect ones, a GitHub-shaped server for GitHub), our
// callback, and the session that comes back in the fragment.
const APP = 'https://app.example.com/auth/callback';
const APPLE_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const APPLE_PEM = APPLE_KEY.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

let t: TestServer;
let idp: OidcProvider;
let gh: GitHubFake;
beforeAll(async () => {
  idp = await startOidcProvider();
  gh = await startGitHub('gh-client', 'gh-secret');
  t = await createAuthServer(
    {
      OAUTH_GOOGLE_URL: idp.url,
      OAUTH_MICROSOFT_URL: idp.url,
      OAUTH_LINKEDIN_URL: idp.url,
      OAUTH_APPLE_URL: idp.url,
      OAUTH_GITHUB_URL: gh.url,
      OAUTH_GITHUB_API_URL: gh.url,
    },
    { sms: true },
  );
  // Every other sign-in method is on too: they must work side by side in one project.
  await t.settings.updateProject({ plan: 'pro' });
  await setAuth(t, {
    phone_enabled: true,
    magic_link_enabled: true,
    magic_link_url: 'https://app.example.com/auth/magic',
    allowed_redirect_urls: ['https://app.example.com/auth'],
    providers: {
      google: { enabled: true, client_id: 'google-client', client_secret: 'google-secret' },
      microsoft: { enabled: true, client_id: 'ms-client', client_secret: 'ms-secret' },
      linkedin: { enabled: true, client_id: 'li-client', client_secret: 'li-secret' },
      github: { enabled: true, client_id: 'gh-client', client_secret: 'gh-secret' },
      apple: { enabled: true, service_id: 'com.example.web', team_id: 'TEAM123456', key_id: 'KEY1234567', private_key: APPLE_PEM },
    },
  });
});
afterAll(async () => {
  await t?.stop();
  await idp?.stop();
  await gh?.stop();
});

const COOKIE = /^plinth_oauth=([A-Za-z0-9_-]{43});/;

/** GET /v1/auth/oauth/{provider}: the provider URL it redirects to and the browser's cookie. */
async function start(provider: string, redirect = APP, cookie?: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/v1/auth/oauth/${provider}?redirect_url=${encodeURIComponent(redirect)}`,
    headers: cookie ? { cookie: `plinth_oauth=${cookie}` } : {},
  });
  expect(res.statusCode, res.body).toBe(302);
  const set = res.headers['set-cookie'];
  const browserCookie = cookie ?? COOKIE.exec(String(set))?.[1] ?? '';
  return { location: new URL(String(res.headers.location)), cookie: browserCookie, res };
}

/** The provider's consent step (approves at once): the callback URL it sends the browser to. */
async function approve(providerUrl: URL): Promise<URL> {
  const res = await fetch(providerUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(String(res.headers.get('location')));
}

function callback(url: URL, cookie: string | null): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'GET',
    url: `${url.pathname}${url.search}`,
    headers: { 'user-agent': 'vitest-browser', ...(cookie ? { cookie: `plinth_oauth=${cookie}` } : {}) },
  });
}

/** Start, approve, come back: the final redirect's fragment. */
const signInWith = (provider: string) => socialSignIn(t, provider, APP);

async function me(accessToken: string) {
  const res = await call(t, 'GET', 'user', undefined, asUser(t, accessToken));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('public settings', () => {
  it('offers exactly the enabled providers', async () => {
    const res = await call(t, 'GET', 'settings');
    expect(res.json().providers).toEqual({ google: true, github: true, linkedin: true, microsoft: true, apple: true });
    expect(res.body).not.toContain('secret');
  });
});

describe('beside the other methods', () => {
  it('password, magic link, phone code and social sign-in all sign in, in one project', async () => {
    const addr = email('side');
    await signUp(t, addr);
    expect((await signIn(t, addr)).access_token).toBeTruthy();

    const magicAddr = email('side-magic');
    expect((await call(t, 'POST', 'request-magic-link', { email: magicAddr })).statusCode).toBe(200);
    const magic = await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, magicAddr, 'magic_link') });
    expect(magic.statusCode, magic.body).toBe(200);

    const phone = `+4670${String(process.pid % 10_000_000).padStart(7, '0')}`;
    expect((await call(t, 'POST', 'phone/send-otp', { phone })).statusCode).toBe(200);
    const byPhone = await call(t, 'POST', 'phone/verify', { phone, code: await lastCode(t, phone) });
    expect(byPhone.statusCode, byPhone.body).toBe(200);

    idp.claims = { sub: `g-side-${addr}`, email: email('side-google'), email_verified: true };
    expect((await signInWith('google')).fragment.get('access_token')).toBeTruthy();
    const methods = (await call(t, 'GET', 'settings')).json();
    expect(methods).toMatchObject({ email_password_enabled: true, magic_link_enabled: true, phone_enabled: true });
  });
});

describe('OpenAPI', () => {
  it('describes the social routes as redirects', async () => {
    const doc = (await t.app.inject({ url: '/api/v1/openapi.json', headers: t.as.service })).json();
    expect(Object.keys(doc.paths['/v1/auth/oauth/{provider}'].get.responses)).toContain('302');
    expect(Object.keys(doc.paths['/v1/auth/oauth/{provider}/callback'].post.responses)).toContain('302');
    expect(Object.keys(doc.paths['/v1/auth/signin'].post.responses)).toContain('200');
  });
});

describe('start', () => {
  it('redirects to the provider with state, nonce, PKCE S256, our callback and the scopes; sets an HttpOnly binding cookie', async () => {
    const { location, res } = await start('google');
    expect(`${location.origin}${location.pathname}`).toBe(`${idp.url}/authorize`);
    const q = Object.fromEntries(location.searchParams);
    expect(q).toMatchObject({
      client_id: 'google-client',
      response_type: 'code',
      redirect_uri: 'http://localhost:8080/v1/auth/oauth/google/callback',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.nonce.length).toBeGreaterThan(20);
    // The state is signed and names the redirect URL, but carries no verifier or nonce.
    const state = decodeJwt(q.state);
    expect(state).toMatchObject({ p: 'google', r: APP });
    expect(q.state).not.toContain(q.nonce);
    expect(decodeProtectedHeader(q.state).typ).toBe('oauth-state+jwt');
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(COOKIE);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('Path=/v1/auth/oauth');
    expect(cookie).toContain('SameSite=Lax');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('over http never adopts a cookie the browser brings (it may have been planted): a fresh binding each time', async () => {
    const planted = 'p'.repeat(43);
    const flow = await start('google', APP, planted);
    const fresh = COOKIE.exec(String(flow.res.headers['set-cookie']))?.[1];
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(planted);
    const url = await approve(flow.location);
    // The planted value does not finish the flow (login CSRF); the browser's real cookie does.
    expect(code(await callback(url, planted))).toEqual([400, 'invalid_state']);
    const back = await callback(url, fresh ?? '');
    expect(new URL(String(back.headers.location)).hash).toContain('access_token=');
  });

  it('over https the cookie is __Host- (Secure, Path=/, no Domain) and kept: two flows in one browser both work', async () => {
    const s = await createAuthServer({
      PUBLIC_URL: 'https://api.example.com',
      OAUTH_GOOGLE_URL: idp.url,
      OAUTH_GITHUB_URL: gh.url,
      OAUTH_GITHUB_API_URL: gh.url,
    });
    try {
      await setAuth(s, {
        allowed_redirect_urls: ['https://app.example.com/auth'],
        providers: {
          google: { enabled: true, client_id: 'google-client', client_secret: 'google-secret' },
          github: { enabled: true, client_id: 'gh-client', client_secret: 'gh-secret' },
        },
      });
      const begin = (provider: string, cookie?: string) =>
        s.app.inject({
          url: `/v1/auth/oauth/${provider}?redirect_url=${encodeURIComponent(APP)}`,
          headers: cookie ? { cookie: `__Host-plinth_oauth=${cookie}` } : {},
        });
      const first = await begin('google');
      const set = String(first.headers['set-cookie']);
      expect(set).toMatch(/^__Host-plinth_oauth=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; Secure; SameSite=None$/);
      const cookie = /=([A-Za-z0-9_-]{43});/.exec(set)?.[1] ?? '';
      const second = await begin('github', cookie);
      expect(second.headers['set-cookie']).toBeUndefined();
      for (const r of [first, second]) {
        const url = await approve(new URL(String(r.headers.location)));
        const back = await s.app.inject({ url: `${url.pathname}${url.search}`, headers: { cookie: `__Host-plinth_oauth=${cookie}` } });
        expect(back.statusCode, back.body).toBe(302);
        expect(new URL(String(back.headers.location)).hash).toContain('access_token=');
      }
    } finally {
      await s.stop();
    }
  });

  it.each([
    ['unknown provider', '/v1/auth/oauth/myspace?redirect_url=https://app.example.com/auth', 404, 'provider_not_found'],
    ['no redirect_url', '/v1/auth/oauth/google', 400, 'invalid_request'],
    [
      'lookalike host',
      `/v1/auth/oauth/google?redirect_url=${encodeURIComponent('https://app.example.com.evil.com/auth')}`,
      400,
      'redirect_not_allowed',
    ],
    [
      'path prefix',
      `/v1/auth/oauth/google?redirect_url=${encodeURIComponent('https://app.example.com/authx')}`,
      400,
      'redirect_not_allowed',
    ],
    ['javascript: URL', `/v1/auth/oauth/google?redirect_url=${encodeURIComponent('javascript:alert(1)')}`, 400, 'redirect_not_allowed'],
  ])('%s is refused', async (_name, url, status, errorCode) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(code(res)).toEqual([status, errorCode]);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('a disabled provider is 403 provider_disabled at the start and not offered', async () => {
    await setAuth(t, { providers: { linkedin: { enabled: false } } });
    try {
      const res = await t.app.inject({ method: 'GET', url: `/v1/auth/oauth/linkedin?redirect_url=${encodeURIComponent(APP)}` });
      expect(code(res)).toEqual([403, 'provider_disabled']);
      expect((await call(t, 'GET', 'settings')).json().providers.linkedin).toBe(false);
    } finally {
      await setAuth(t, { providers: { linkedin: { enabled: true } } });
    }
  });
});

describe('Google (OpenID Connect)', () => {
  it('creates a user with the verified email, name and picture and returns the session in the fragment', async () => {
    const addr = email('google');
    idp.claims = { sub: `g-${addr}`, email: addr, email_verified: true, name: 'Grace Hopper', picture: 'https://img.example/g.png' };
    const { fragment, location } = await signInWith('google');
    expect(`${location.origin}${location.pathname}`).toBe(APP);
    expect(fragment.get('token_type')).toBe('bearer');
    expect(Number(fragment.get('expires_in'))).toBe(3600);
    expect(fragment.get('refresh_token')).toBeTruthy();
    const user = await me(fragment.get('access_token') ?? '');
    expect(user).toMatchObject({ email: addr, name: 'Grace Hopper', avatar: 'https://img.example/g.png' });
    expect(user.email_confirmed_at).not.toBeNull();
    expect(user.identities.map((i: { provider: string }) => i.provider)).toEqual(['google']);
    // The PKCE verifier went to the token endpoint (the provider checked it against the challenge).
    expect(idp.tokenBodies.at(-1)?.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The refresh token works like any other.
    const refreshed = await call(t, 'POST', 'refresh', { refresh_token: fragment.get('refresh_token') });
    expect(refreshed.statusCode).toBe(200);
  });

  it('signs the same provider account into the same user the next time', async () => {
    const addr = email('again');
    idp.claims = { sub: `g-${addr}`, email: addr, email_verified: true, name: 'Again' };
    const first = await me((await signInWith('google')).fragment.get('access_token') ?? '');
    const second = await me((await signInWith('google')).fragment.get('access_token') ?? '');
    expect(second.id).toBe(first.id);
    expect(second.identities).toHaveLength(1);
  });

  it('links to an existing account with the same verified email: same id, and an unconfirmed one loses its password and sessions', async () => {
    const addr = email('link');
    const signedUp = await signUp(t, addr);
    const before = await signIn(t, addr);
    idp.claims = { sub: `g-${addr}`, email: addr.toUpperCase(), email_verified: true, name: 'Linked' };
    const user = await me((await signInWith('google')).fragment.get('access_token') ?? '');
    expect(user.id).toBe(signedUp.user.id);
    expect(user.email_confirmed_at).not.toBeNull();
    expect(user.identities.map((i: { provider: string }) => i.provider).sort()).toEqual(['email', 'google']);
    // The password was set by someone who never proved the address: gone, with its sessions.
    expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' }))).toEqual([400, 'invalid_credentials']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: before.refresh_token }))[0]).toBe(401);
  });

  it('never links through an email the provider does not verify: an account of its own, without that email', async () => {
    const addr = email('unverified');
    const owner = await signUp(t, addr);
    idp.claims = { sub: `g-${addr}`, email: addr, email_verified: false };
    const { fragment } = await signInWith('google');
    const other = await me(fragment.get('access_token') ?? '');
    expect(other.id).not.toBe(owner.user.id);
    expect(other.email).toBeNull();
    expect(other.identities).toEqual([expect.objectContaining({ provider: 'google', email: addr })]);
    const rows = await t.sql(`select count(*)::int as n from auth.identities where user_id = '${owner.user.id}'`);
    expect(rows.json().results[0].rows[0].n).toBe(1);
  });

  it('a provider refusal or a failed code exchange goes back to the app as #error=oauth_failed', async () => {
    const { location, cookie } = await start('google');
    const denied = new URL('http://localhost:8080/v1/auth/oauth/google/callback');
    denied.searchParams.set('error', 'access_denied');
    denied.searchParams.set('error_description', 'The user cancelled');
    denied.searchParams.set('state', location.searchParams.get('state') ?? '');
    const res = await callback(denied, cookie);
    const back = new URL(String(res.headers.location));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    expect(Object.fromEntries(new URLSearchParams(back.hash.slice(1)))).toEqual({
      error: 'oauth_failed',
      error_description: 'google did not authorize the sign-in: The user cancelled',
    });

    const next = await start('google');
    const cb = await approve(next.location);
    idp.failToken = 'invalid_grant';
    const failed = await callback(cb, next.cookie);
    expect(new URLSearchParams(new URL(String(failed.headers.location)).hash.slice(1)).get('error')).toBe('oauth_failed');
  });
});

describe('the state', () => {
  it('is single use: the same callback twice is 400 invalid_state the second time', async () => {
    idp.claims = { sub: 'g-replay', email: email('replay'), email_verified: true };
    const { location, cookie } = await start('google');
    const cb = await approve(location);
    expect((await callback(cb, cookie)).statusCode).toBe(302);
    expect(code(await callback(cb, cookie))).toEqual([400, 'invalid_state']);
  });

  it('two callbacks with one state at the same instant: exactly one session', async () => {
    idp.claims = { sub: 'g-race', email: email('race'), email_verified: true };
    const { location, cookie } = await start('google');
    const cb = await approve(location);
    const answers = await Promise.all([callback(cb, cookie), callback(cb, cookie), callback(cb, cookie)]);
    const won = answers.filter((r) => r.statusCode === 302);
    expect(won).toHaveLength(1);
    expect(new URL(String(won[0].headers.location)).hash).toContain('access_token=');
    expect(answers.filter((r) => code(r)[1] === 'invalid_state')).toHaveLength(2);
  });

  it('is bound to the browser that started the flow, and attempts from elsewhere do not use it up', async () => {
    idp.claims = { sub: 'g-bound', email: email('bound'), email_verified: true };
    const { location, cookie } = await start('google');
    const cb = await approve(location);
    expect(code(await callback(cb, null))).toEqual([400, 'invalid_state']);
    const other = await start('github');
    const refused = await callback(cb, other.cookie);
    expect(code(refused)).toEqual([400, 'invalid_state']);
    expect(refused.json().message).toContain('another browser');
    const own = await callback(cb, cookie);
    expect(own.statusCode).toBe(302);
    expect(new URL(String(own.headers.location)).hash).toContain('access_token=');
  });

  it('expires after 10 minutes', async () => {
    const { location, cookie } = await start('google');
    const cb = await approve(location);
    t.clock.advance(10 * 60 * 1000 + 1000);
    expect(code(await callback(cb, cookie))).toEqual([400, 'invalid_state']);
  });

  it('is refused when tampered with, or brought to another provider', async () => {
    const { location, cookie } = await start('google');
    const cb = await approve(location);
    const state = cb.searchParams.get('state') ?? '';
    const [h, p, s] = state.split('.');
    const forged = JSON.parse(Buffer.from(p, 'base64url').toString());
    forged.r = 'https://evil.example.com/';
    const tampered = new URL(cb);
    tampered.searchParams.set('state', `${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${s}`);
    expect(code(await callback(tampered, cookie))).toEqual([400, 'invalid_state']);
    const elsewhere = new URL(cb.href.replace('/google/', '/microsoft/'));
    expect(code(await callback(elsewhere, cookie))).toEqual([400, 'invalid_state']);
    // The genuine one still works afterwards: refusals consume nothing.
    expect((await callback(cb, cookie)).statusCode).toBe(302);
  });

  it('a user access token is not a state, and a state is not an access token', async () => {
    const { location, cookie } = await start('google');
    const cb = await approve(location);
    const token = await t.mintToken(crypto.randomUUID());
    const withToken = new URL(cb);
    withToken.searchParams.set('state', token);
    expect(code(await callback(withToken, cookie))).toEqual([400, 'invalid_state']);
    const asToken = await t.app.inject({ method: 'GET', url: '/v1/auth/user', headers: asUser(t, cb.searchParams.get('state') ?? '') });
    expect(asToken.statusCode).toBe(401);
  });
});

describe('Microsoft', () => {
  it('treats the email as unverified without xms_edov (nOAuth): no link, and with it: linked', async () => {
    const addr = email('ms');
    const owner = await signUp(t, addr);
    idp.claims = { sub: `ms-mallory-${addr}`, email: addr, name: 'Mallory' };
    const mallory = await me((await signInWith('microsoft')).fragment.get('access_token') ?? '');
    expect(mallory.id).not.toBe(owner.user.id);
    expect(mallory.email).toBeNull();
    idp.claims = { sub: `ms-${addr}`, email: addr, name: 'Mia', xms_edov: true };
    const user = await me((await signInWith('microsoft')).fragment.get('access_token') ?? '');
    expect(user.id).toBe(owner.user.id);
  });

  it("an unverified email nobody has is kept on the identity, not made the account's address", async () => {
    const addr = email('ms-new');
    idp.claims = { sub: `ms-${addr}`, email: addr, name: 'New' };
    const user = await me((await signInWith('microsoft')).fragment.get('access_token') ?? '');
    expect(user).toMatchObject({ email: null, email_confirmed_at: null, name: 'New' });
    expect(user.identities).toEqual([expect.objectContaining({ provider: 'microsoft', email: addr })]);
    // The address stays free for its owner.
    expect((await call(t, 'POST', 'signup', { email: addr, password: 'correct horse battery' })).statusCode).toBe(200);
  });
});

describe('LinkedIn', () => {
  it('sends no PKCE, and reads a missing email from the userinfo endpoint', async () => {
    const addr = email('li');
    idp.claims = { sub: `li-${addr}`, name: 'Lin Kedin' };
    idp.userinfo = { sub: `li-${addr}`, email: addr, email_verified: true, picture: 'https://media.example/li.jpg' };
    const { location, cookie } = await start('linkedin');
    expect(location.searchParams.get('code_challenge')).toBeNull();
    expect(location.searchParams.get('scope')).toBe('openid profile email');
    const res = await callback(await approve(location), cookie);
    const user = await me(new URLSearchParams(new URL(String(res.headers.location)).hash.slice(1)).get('access_token') ?? '');
    expect(user).toMatchObject({ email: addr, name: 'Lin Kedin', avatar: 'https://media.example/li.jpg' });
    expect(user.email_confirmed_at).not.toBeNull();
    idp.userinfo = {};
  });
});

describe('Apple', () => {
  it('asks for form_post, takes the POSTed callback with the first-time name, and signs its client secret with the .p8 key', async () => {
    const addr = email('apple');
    idp.claims = { sub: `apple-${addr}`, email: addr, email_verified: 'true', is_private_email: 'false' };
    const { location, cookie } = await start('apple');
    expect(location.searchParams.get('response_mode')).toBe('form_post');
    expect(location.searchParams.get('client_id')).toBe('com.example.web');
    const cb = await approve(location);
    const form = new URLSearchParams({
      code: cb.searchParams.get('code') ?? '',
      state: cb.searchParams.get('state') ?? '',
      user: JSON.stringify({ name: { firstName: 'Ada', lastName: 'Lovelace' }, email: addr }),
    });
    const res = await t.app.inject({
      method: 'POST',
      url: cb.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `plinth_oauth=${cookie}` },
      payload: form.toString(),
    });
    expect(res.statusCode, res.body).toBe(302);
    const user = await me(new URLSearchParams(new URL(String(res.headers.location)).hash.slice(1)).get('access_token') ?? '');
    expect(user).toMatchObject({ email: addr, name: 'Ada Lovelace' });
    expect(user.email_confirmed_at).not.toBeNull();

    const secret = idp.tokenBodies.at(-1)?.client_secret ?? '';
    const spki = APPLE_KEY.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const { payload, protectedHeader } = await jwtVerify(secret, await importSPKI(spki, 'ES256'), {
      audience: 'https://appleid.apple.com',
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'KEY1234567' });
    expect(payload).toMatchObject({ iss: 'TEAM123456', sub: 'com.example.web' });
  });
});

describe('GitHub (OAuth 2, GitHub API shape)', () => {
  it('uses PKCE, and takes the primary verified email from /user/emails when the profile hides it', async () => {
    gh.user = { ...gh.user, id: 9_000_001, email: null };
    const addr = email('gh');
    gh.emails = [
      { email: `other-${addr}`, primary: false, verified: true, visibility: null },
      { email: addr, primary: true, verified: true, visibility: 'private' },
    ];
    const { location, cookie } = await start('github');
    expect(`${location.origin}${location.pathname}`).toBe(`${gh.url}/login/oauth/authorize`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('scope')).toBe('read:user user:email');
    const res = await callback(await approve(location), cookie);
    const user = await me(new URLSearchParams(new URL(String(res.headers.location)).hash.slice(1)).get('access_token') ?? '');
    expect(user).toMatchObject({ email: addr, name: 'The Octocat', avatar: 'https://avatars.example/u/583231' });
    expect(user.identities[0]).toMatchObject({ provider: 'github', email: addr });
    expect(gh.tokenRequests.at(-1)).toMatchObject({ client_id: 'gh-client', client_secret: 'gh-secret' });
  });

  it('a code GitHub refuses (status 200 with error) ends in #error=oauth_failed', async () => {
    const { location, cookie } = await start('github');
    const cb = await approve(location);
    cb.searchParams.set('code', 'not-a-real-code');
    const res = await callback(cb, cookie);
    expect(new URLSearchParams(new URL(String(res.headers.location)).hash.slice(1)).get('error')).toBe('oauth_failed');
  });

  it('a user without a verified email gets an account without email', async () => {
    gh.user = { ...gh.user, id: 9_000_002, email: 'public@example.com' };
    gh.emails = [{ email: 'public@example.com', primary: true, verified: false, visibility: 'public' }];
    const res = await signInWith('github');
    const user = await me(res.fragment.get('access_token') ?? '');
    expect(user.email).toBeNull();
    expect(user.email_confirmed_at).toBeNull();
    expect(user.identities).toEqual([expect.objectContaining({ provider: 'github', email: 'public@example.com' })]);
  });
});

describe('no input makes a 500', () => {
  it('random providers, states, codes and form bodies answer 302, 400 or 404', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('google', 'github', 'apple', 'nope', '%00', '..', 'g%C3%BCgle'),
        fc.record({
          state: fc.string(),
          code: fc.string(),
          error: fc.option(fc.string(), { nil: undefined }),
          iss: fc.option(fc.string(), { nil: undefined }),
        }),
        fc.boolean(),
        async (provider, params, post) => {
          const qs = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined) as Array<[string, string]>).toString();
          const res = await t.app.inject(
            post
              ? {
                  method: 'POST',
                  url: `/v1/auth/oauth/${provider}/callback`,
                  headers: { 'content-type': 'application/x-www-form-urlencoded' },
                  payload: qs,
                }
              : { method: 'GET', url: `/v1/auth/oauth/${provider}/callback?${qs}` },
          );
          expect([302, 400, 404]).toContain(res.statusCode);
          if (res.statusCode !== 302) expect(res.json().code).toMatch(/^[a-z_]+$/);
        },
      ),
      { numRuns: 60 },
    );
  });
});
