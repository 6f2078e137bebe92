import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthServer, email } from '../../../test/auth.js';
import { functionsServer } from '../../../test/functions.js';
import type { TestServer } from '../../../test/harness.js';
import { type OidcIdp, signInAt, startOidcIdp } from '../../../test/oidc-provider.js';
import { authClient } from '../../../test/supabase-auth.js';

// GoTrue's social sign-in and identity linking on /auth/v1 (docs/supabase.md), end to end:
// auth-js's own signInWithOAuth, linkIdentity and exchangeCodeForSession, a real OpenID
// Provider (npm oidc-provider), and the browser's hops followed by hand (redirect: manual).

const SITE = 'https://app.example.com/';
const APP = 'https://app.example.com/auth/callback';
const CALLBACK = 'http://localhost:8080/auth/v1/callback';
const PASSWORD = 'correct horse battery';

let t: TestServer;
let corp: OidcIdp;
let n = 0;

beforeAll(async () => {
  corp = await startOidcIdp({ name: 'corp', redirectUris: [CALLBACK, 'http://localhost:8080/v1/auth/oauth/corp/callback'] });
  t = await createAuthServer();
  await t.settings.updateAuth({
    allowed_redirect_urls: [SITE, 'https://app.example.com/auth'],
    oidc_providers: [
      { id: 'corp', name: 'Corp SSO', issuer: corp.issuer, client_id: corp.clientId, client_secret: corp.clientSecret, enabled: true },
    ],
  });
});
afterAll(async () => {
  await t?.stop();
  await corp?.stop();
});

/** A new account at the provider, with a verified address; its login name. */
function account(addr = email('corp')): { login: string; addr: string } {
  const login = `user${++n}`;
  corp.accounts.set(login, { email: addr, email_verified: true, name: `User ${n}` });
  return { login, addr };
}

const local = (url: string | URL) => {
  const u = new URL(url);
  expect(u.origin).toBe('http://localhost:8080');
  return `${u.pathname}${u.search}`;
};

/** A browser opening auth-js's /authorize URL: the provider's URL and the binding cookie Plinth set. */
async function openAuthorize(url: string) {
  const res = await t.app.inject({ url: local(url) });
  expect(res.statusCode, res.body).toBe(302);
  const cookie = /plinth_oauth=([A-Za-z0-9_-]{43})/.exec(String(res.headers['set-cookie']))?.[1];
  expect(String(res.headers['set-cookie'])).toContain('Path=/auth/v1');
  return { provider: new URL(String(res.headers.location)), cookie: cookie ?? '' };
}

/** The provider's answer delivered to /auth/v1/callback by a browser with `cookie`: where it is sent next. */
async function deliver(callback: URL, cookie: string | null) {
  expect(`${callback.origin}${callback.pathname}`).toBe(CALLBACK);
  return t.app.inject({
    url: local(callback),
    headers: { 'user-agent': 'vitest', ...(cookie ? { cookie: `plinth_oauth=${cookie}` } : {}) },
  });
}

/** The whole browser trip of a sign-in from auth-js's URL: the final redirect. */
async function browse(url: string, login: string) {
  const { provider, cookie } = await openAuthorize(url);
  const callback = await signInAt(corp, provider, login);
  const res = await deliver(callback, cookie);
  expect(res.statusCode, res.body).toBe(302);
  return { back: new URL(String(res.headers.location)), callback, cookie, provider };
}

const errorOf = (e: unknown) => ({ status: (e as { status?: number })?.status, code: (e as { code?: string })?.code });

describe('signInWithOAuth on /auth/v1/authorize and /callback', () => {
  it('implicit: the session and provider_token in the fragment of redirect_to; scopes and queryParams reach the provider', async () => {
    const client = authClient(t);
    const { login, addr } = account();
    const { data, error } = await client.signInWithOAuth({
      provider: 'corp' as never,
      options: { redirectTo: APP, scopes: 'phone', queryParams: { login_hint: login }, skipBrowserRedirect: true },
    });
    expect(error).toBeNull();
    const { provider } = await openAuthorize(data.url!);
    expect(provider.origin).toBe(corp.issuer);
    expect(provider.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'email', 'phone']));
    expect(provider.searchParams.get('login_hint')).toBe(login);
    expect(provider.searchParams.get('redirect_uri')).toBe(CALLBACK);

    const { back } = await browse(data.url!, login);
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    const f = new URLSearchParams(back.hash.slice(1));
    expect(f.get('error_description')).toBeNull();
    expect(f.get('token_type')).toBe('bearer');
    expect(Number(f.get('expires_in'))).toBeGreaterThan(0);
    expect(Number(f.get('expires_at'))).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(f.get('provider_token')).toBeTruthy();
    const set = await client.setSession({ access_token: f.get('access_token')!, refresh_token: f.get('refresh_token')! });
    expect(set.error).toBeNull();
    const me = await client.getUser();
    expect(me.data.user?.email).toBe(addr);
    expect(me.data.user?.identities?.map((i) => i.provider)).toContain('corp');
  });

  it('PKCE: ?code= on redirect_to, exchanged by auth-js for the session (with provider_token)', async () => {
    const client = authClient(t, undefined, 'pkce');
    const { login, addr } = account();
    const { data } = await client.signInWithOAuth({ provider: 'corp' as never, options: { redirectTo: APP, skipBrowserRedirect: true } });
    expect(new URL(data.url!).searchParams.get('code_challenge')).toBeTruthy();
    const { back } = await browse(data.url!, login);
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    expect(back.hash).toBe('');
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();
    const out = await client.exchangeCodeForSession(code);
    expect(out.error).toBeNull();
    expect(out.data.user?.email).toBe(addr);
    expect(out.data.session?.provider_token).toBeTruthy();
    expect((await client.getUser()).data.user?.identities?.map((i) => i.provider)).toContain('corp');
  });

  it('attacker: a redirect_to off the allow-list is not followed; the browser lands on the site URL', async () => {
    const client = authClient(t);
    const { login } = account();
    const { data } = await client.signInWithOAuth({
      provider: 'corp' as never,
      options: { redirectTo: 'https://evil.example.net/steal', skipBrowserRedirect: true },
    });
    const { back } = await browse(data.url!, login);
    expect(back.origin).toBe('https://app.example.com');
    expect(back.href.startsWith(SITE)).toBe(true);
  });

  it('attacker: a PKCE code used twice, or with a wrong verifier, gives nothing (a wrong verifier voids it)', async () => {
    const client = authClient(t, undefined, 'pkce');
    const { login } = account();
    const start = async () => {
      const { data } = await client.signInWithOAuth({ provider: 'corp' as never, options: { redirectTo: APP, skipBrowserRedirect: true } });
      return (await browse(data.url!, login)).back.searchParams.get('code')!;
    };
    const token = (payload: object) =>
      t.app.inject({
        method: 'POST',
        url: '/auth/v1/token?grant_type=pkce',
        headers: { ...t.as.anon, 'x-supabase-api-version': '2024-01-01' },
        payload,
      });

    const first = await start();
    expect((await client.exchangeCodeForSession(first)).error).toBeNull();
    const again = await token({ auth_code: first, code_verifier: 'a'.repeat(43) });
    expect([again.statusCode, again.json().code]).toEqual([404, 'flow_state_not_found']);

    const second = await start();
    const wrong = await token({ auth_code: second, code_verifier: 'b'.repeat(43) });
    expect([wrong.statusCode, wrong.json().code]).toEqual([400, 'bad_code_verifier']);
    // The right verifier (in auth-js's storage) comes too late: the code is gone.
    const late = await client.exchangeCodeForSession(second);
    expect(errorOf(late.error)).toEqual({ status: 404, code: 'flow_state_not_found' });
  });

  it('attacker: a callback replayed, taken to another browser, or from a /v1/auth flow is 400 bad_oauth_state', async () => {
    const client = authClient(t);
    const { login } = account();
    const url = async () =>
      (await client.signInWithOAuth({ provider: 'corp' as never, options: { redirectTo: APP, skipBrowserRedirect: true } })).data.url!;

    // Replayed: the state is used up by the first delivery.
    const done = await browse(await url(), login);
    const replay = await deliver(done.callback, done.cookie);
    expect([replay.statusCode, replay.json().error_code]).toEqual([400, 'bad_oauth_state']);

    // Another browser (another cookie, or none) cannot finish this browser's sign-in; the owner still can.
    const { provider, cookie } = await openAuthorize(await url());
    const callback = await signInAt(corp, provider, login);
    const other = await openAuthorize(await url());
    for (const foreign of [other.cookie, null]) {
      const res = await deliver(callback, foreign);
      expect([res.statusCode, res.json().error_code]).toEqual([400, 'bad_oauth_state']);
    }
    const owner = await deliver(callback, cookie);
    expect(owner.statusCode).toBe(302);
    expect(new URLSearchParams(new URL(String(owner.headers.location)).hash.slice(1)).get('access_token')).toBeTruthy();

    // A flow of Plinth's own /v1/auth/oauth brought to GoTrue's callback.
    const own = await t.app.inject({ url: `/v1/auth/oauth/corp?redirect_url=${encodeURIComponent(APP)}` });
    const ownCookie = /plinth_oauth=([A-Za-z0-9_-]{43})/.exec(String(own.headers['set-cookie']))![1];
    const ownCallback = await signInAt(corp, new URL(String(own.headers.location)), login);
    const crossed = await t.app.inject({
      url: `/auth/v1/callback${ownCallback.search}`,
      headers: { cookie: `plinth_oauth=${ownCookie}` },
    });
    expect([crossed.statusCode, crossed.json().error_code]).toEqual([400, 'bad_oauth_state']);
  });

  it('attacker: queryParams cannot set the flow’s own parameters (redirect_uri, state, client_id, nonce, PKCE)', async () => {
    const forged = new URLSearchParams({
      provider: 'corp',
      redirect_to: APP,
      redirect_uri: 'https://evil.example.net/cb',
      state: 'forged',
      client_id: 'someone-else',
      nonce: 'forged',
      response_type: 'token',
      login_hint: 'kept',
    });
    const { provider } = await openAuthorize(`http://localhost:8080/auth/v1/authorize?${forged}`);
    expect(provider.searchParams.getAll('redirect_uri')).toEqual([CALLBACK]);
    expect(provider.searchParams.getAll('client_id')).toEqual([corp.clientId]);
    expect(provider.searchParams.getAll('response_type')).toEqual(['code']);
    expect(provider.searchParams.get('state')).not.toBe('forged');
    expect(provider.searchParams.get('nonce')).not.toBe('forged');
    expect(provider.searchParams.get('login_hint')).toBe('kept');
  });

  it('the provider’s refusal goes back to redirect_to as GoTrue’s error, error_code and error_description (PKCE: in the query)', async () => {
    const client = authClient(t, undefined, 'pkce');
    const { data } = await client.signInWithOAuth({ provider: 'corp' as never, options: { redirectTo: APP, skipBrowserRedirect: true } });
    const { provider, cookie } = await openAuthorize(data.url!);
    const state = provider.searchParams.get('state')!;
    const res = await t.app.inject({
      url: `/auth/v1/callback?error=access_denied&error_description=${encodeURIComponent('The user said no')}&state=${encodeURIComponent(state)}`,
      headers: { cookie: `plinth_oauth=${cookie}` },
    });
    expect(res.statusCode).toBe(302);
    const back = new URL(String(res.headers.location));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      error_code: 'access_denied',
      error_description: 'The user said no',
    });
  });

  it('an unknown or disabled provider is 400 validation_failed, in GoTrue’s shape', async () => {
    const res = await t.app.inject({ url: `/auth/v1/authorize?provider=nope&redirect_to=${encodeURIComponent(APP)}` });
    expect([res.statusCode, res.json().error_code]).toEqual([400, 'validation_failed']);
    expect(res.json().msg).toMatch(/Unsupported provider/);
    const github = await t.app.inject({ url: '/auth/v1/authorize?provider=github' });
    expect([github.statusCode, github.json().error_code]).toEqual([400, 'validation_failed']);
  });
});

describe('linkIdentity on /auth/v1/user/identities/authorize', () => {
  async function signedUp(flowType: 'pkce' | 'implicit' = 'pkce') {
    const client = authClient(t, undefined, flowType);
    const { data, error } = await client.signUp({ email: email('linker'), password: PASSWORD });
    expect(error).toBeNull();
    return { client, user: data.user! };
  }
  const providersOf = async (client: ReturnType<typeof authClient>) =>
    ((await client.getUserIdentities()).data?.identities ?? []).map((i) => i.provider).sort();

  it('PKCE: the provider page, then the code exchanged by the app that started it; getUserIdentities lists it', async () => {
    const { client, user } = await signedUp();
    const { login } = account(email('other-address'));
    const { data, error } = await client.linkIdentity({ provider: 'corp' as never, options: { redirectTo: APP } });
    expect(error).toBeNull();
    const url = new URL(data.url!);
    // Straight to the provider: auth-js opens it, no Plinth page sets a cookie on the way.
    expect(url.origin).toBe(corp.issuer);
    const callback = await signInAt(corp, url, login);
    const res = await deliver(callback, null);
    expect(res.statusCode, res.body).toBe(302);
    const code = new URL(String(res.headers.location)).searchParams.get('code')!;
    expect(await providersOf(client)).toEqual(['email']); // nothing attached before the exchange
    const out = await client.exchangeCodeForSession(code);
    expect(out.error).toBeNull();
    expect(out.data.user?.id).toBe(user.id);
    expect(await providersOf(client)).toEqual(['corp', 'email']);
  });

  it('is refused without PKCE (implicit flow): 400 validation_failed, Plinth is stricter than GoTrue here', async () => {
    const { client } = await signedUp('implicit');
    const { data, error } = await client.linkIdentity({ provider: 'corp' as never, options: { redirectTo: APP } });
    expect(data.url).toBeNull();
    expect(errorOf(error)).toEqual({ status: 400, code: 'validation_failed' });
    expect(error?.message).toMatch(/PKCE/);
  });

  it('attacker: a link URL handed to a victim attaches nothing (the victim lacks the verifier; a wrong try voids the code)', async () => {
    const attacker = await signedUp();
    const victim = await signedUp();
    const victimAtProvider = account();
    const { data } = await attacker.client.linkIdentity({ provider: 'corp' as never, options: { redirectTo: APP } });
    // The victim opens it and signs in at the provider: their browser is sent to the app with a code.
    const callback = await signInAt(corp, new URL(data.url!), victimAtProvider.login);
    const res = await deliver(callback, null);
    const code = new URL(String(res.headers.location)).searchParams.get('code')!;
    // The victim's app (its own PKCE client, with a verifier of its own flow) cannot use it…
    await victim.client.signInWithOAuth({ provider: 'corp' as never, options: { redirectTo: APP, skipBrowserRedirect: true } });
    const tried = await victim.client.exchangeCodeForSession(code);
    expect(errorOf(tried.error)).toEqual({ status: 400, code: 'bad_code_verifier' });
    // …and that try voided it: even the attacker, verifier and session in hand, gets nothing.
    const stolen = await attacker.client.exchangeCodeForSession(code);
    expect(errorOf(stolen.error)).toEqual({ status: 404, code: 'flow_state_not_found' });
    expect(await providersOf(attacker.client)).toEqual(['email']);
    expect(await providersOf(victim.client)).toEqual(['email']);
  });

  it('attacker: the code is worthless once the session that started the link has ended', async () => {
    const attacker = await signedUp();
    const { login } = account();
    const { data } = await attacker.client.linkIdentity({ provider: 'corp' as never, options: { redirectTo: APP } });
    const code = new URL(String((await deliver(await signInAt(corp, new URL(data.url!), login), null)).headers.location)).searchParams.get(
      'code',
    )!;
    // The session is ended (signed out elsewhere, revoked by an admin) before the code is exchanged.
    await t.db.query('update auth.sessions set revoked_at = now() where user_id = $1', [attacker.user.id]);
    const out = await attacker.client.exchangeCodeForSession(code);
    // GoTrue's 403 session_not_found, which auth-js reports as AuthSessionMissingError.
    expect(out.error?.name).toBe('AuthSessionMissingError');
    expect(out.data.session).toBeNull();
    const count = await t.db.query('select count(*)::int as n from auth.identities where user_id = $1', [attacker.user.id]);
    expect((count.rows[0] as { n: number }).n).toBe(1);
  });

  it('a provider account already linked to another user is refused: 422 identity_already_exists', async () => {
    // Its owner signed in with it first.
    const { login } = account();
    const owner = authClient(t);
    const started = await owner.signInWithOAuth({ provider: 'corp' as never, options: { redirectTo: APP, skipBrowserRedirect: true } });
    const f = new URLSearchParams((await browse(started.data.url!, login)).back.hash.slice(1));
    expect(f.get('access_token')).toBeTruthy();

    const { client } = await signedUp();
    const { data } = await client.linkIdentity({ provider: 'corp' as never, options: { redirectTo: APP } });
    const res = await deliver(await signInAt(corp, new URL(data.url!), login), null);
    const out = await client.exchangeCodeForSession(new URL(String(res.headers.location)).searchParams.get('code')!);
    expect(errorOf(out.error)).toEqual({ status: 422, code: 'identity_already_exists' });
    expect(await providersOf(client)).toEqual(['email']);
  });
});

describe('a Supabase folder: linking follows [auth] enable_manual_linking', () => {
  it('off by default: 404 manual_linking_disabled', async () => {
    const s = await functionsServer(
      { 'supabase/config.toml': 'project_id = "linking"\n' },
      { supabase: true, env: { NO_LOG_CAPTURE: '1' } },
    );
    try {
      const uid = '00000000-0000-4000-8000-0000000000c4';
      const res = await s.app.inject({
        url: '/auth/v1/user/identities/authorize?provider=google&skip_http_redirect=true&code_challenge=' + 'c'.repeat(43),
        headers: s.user(await s.mintToken(uid)),
      });
      expect([res.statusCode, res.json().error_code]).toEqual([404, 'manual_linking_disabled']);
    } finally {
      await s.stop();
    }
  });
});
