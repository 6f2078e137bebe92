import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../index.js';
import { type FakeServer, makeUser, PUBLIC_KEY, startFakeServer } from '../../test/fake-server.js';
import { clientOf, clientTracker, recordEvents, settle } from '../../test/helpers.js';

let fake: FakeServer;
const { track, disposeAll } = clientTracker();

beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.close());
afterEach(() => {
  disposeAll();
});

describe('email and password', () => {
  it('signs up, signs in, sends the token, signs out', async () => {
    const client = track(clientOf(fake));
    const rec = recordEvents(client);
    const up = await client.auth.signUp({ email: 'ada@example.com', password: 'secret-123', data: { name: 'Ada' } });
    expect(up.error).toBeNull();
    expect(up.data?.user.email).toBe('ada@example.com');
    expect(up.data?.session?.access_token).toMatch(/^eyFake\./);
    expect(fake.requests.at(-1)?.body).toEqual({ email: 'ada@example.com', password: 'secret-123', data: { name: 'Ada' } });

    const dup = await client.auth.signUp({ email: 'ada@example.com', password: 'x' });
    expect(dup).toEqual({ data: null, error: { code: 'email_exists', message: 'email_exists', status: 409 } });

    const bad = await client.auth.signIn({ email: 'ada@example.com', password: 'nope' });
    expect(bad.error).toEqual({ code: 'invalid_credentials', message: 'Wrong email or password.', status: 400 });

    const inRes = await client.auth.signIn({ email: 'ada@example.com', password: 'secret-123' });
    expect(inRes.data?.access_token).toBe(inRes.data?.session.access_token);
    await client.from('todos').select();
    const dbReq = fake.requests.at(-1);
    expect(dbReq?.headers.apikey).toBe(PUBLIC_KEY);
    expect(dbReq?.headers.authorization).toBe(`Bearer ${inRes.data?.access_token}`);

    expect((await client.auth.signOut()).error).toBeNull();
    expect(fake.requests.at(-1)?.path).toBe('/v1/auth/signout');
    expect((await client.auth.getSession()).data?.session).toBeNull();
    await client.from('todos').select();
    expect(fake.requests.at(-1)?.headers.authorization).toBeUndefined();
    await settle();
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'SIGNED_IN', 'SIGNED_IN', 'SIGNED_OUT']);
  });

  it('verifies email, resends, forgets and resets the password', async () => {
    const client = track(clientOf(fake));
    const rec = recordEvents(client);
    await client.auth.signUp({ email: 'bo@example.com', password: 'secret-123' });
    expect((await client.auth.verifyEmail('wrong')).error?.code).toBe('token_invalid');
    expect((await client.auth.verifyEmail('good-bo@example.com')).data?.user.email).toBe('bo@example.com');
    expect(await client.auth.resendVerification('bo@example.com')).toEqual({ data: null, error: null });
    expect(await client.auth.forgotPassword('bo@example.com')).toEqual({ data: null, error: null });
    expect((await client.auth.resetPassword('good-bo@example.com', 'new-secret-1')).error).toBeNull();
    expect(fake.requests.at(-1)?.body).toEqual({ token: 'good-bo@example.com', password: 'new-secret-1' });
    await rec.next('PASSWORD_RECOVERY');
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'SIGNED_IN', 'USER_UPDATED', 'PASSWORD_RECOVERY']);
  });

  it('gets and updates the user', async () => {
    const client = track(clientOf(fake));
    expect((await client.auth.getUser()).error?.code).toBe('session_missing');
    await client.auth.signUp({ email: 'cy@example.com', password: 'secret-123' });
    const rec = recordEvents(client);
    expect((await client.auth.getUser()).data?.user.email).toBe('cy@example.com');
    const upd = await client.auth.updateUser({ name: 'Cy' });
    expect(upd.data?.user.name).toBe('Cy');
    expect((await client.auth.getSession()).data?.session?.user.name).toBe('Cy');
    await rec.next('USER_UPDATED');
  });
});

describe('magic link, phone and OAuth', () => {
  it('signs in with a magic link and a phone code', async () => {
    const client = track(clientOf(fake));
    expect(await client.auth.requestMagicLink('m@example.com')).toEqual({ data: null, error: null });
    expect(fake.requests.at(-1)?.body).toEqual({ email: 'm@example.com' });
    expect((await client.auth.signInWithMagicLink('stale')).error).toMatchObject({ code: 'magic_link_invalid', status: 401 });
    const magic = await client.auth.signInWithMagicLink('magic');
    expect(magic.data?.user.email).toBe('magic@example.com');
    expect((await client.auth.sendPhoneCode('0701')).error?.code).toBe('invalid_phone');
    expect((await client.auth.sendPhoneCode('+46701234567')).data).toEqual({ sent: true });
    expect((await client.auth.verifyPhoneCode('+46701234567', '000000')).error?.code).toBe('invalid_code');
    const phone = await client.auth.verifyPhoneCode('+46701234567', '123456');
    expect(phone.data?.user.phone).toBe('+46701234567');
    expect((await client.auth.getSession()).data?.session?.access_token).toBe(phone.data?.access_token);
  });

  it("sends requestMagicLink's emailRedirectTo and reports the server refusing it", async () => {
    const client = track(clientOf(fake));
    const ok = await client.auth.requestMagicLink('m@example.com', { emailRedirectTo: 'https://app.example.com/magic' });
    expect(ok).toEqual({ data: null, error: null });
    const sent = fake.requests.at(-1);
    expect([sent?.path, sent?.body]).toEqual([
      '/v1/auth/request-magic-link',
      { email: 'm@example.com', emailRedirectTo: 'https://app.example.com/magic' },
    ]);
    const refused = await client.auth.requestMagicLink('m@example.com', { emailRedirectTo: 'https://evil.example.net/' });
    expect(refused).toEqual({ data: null, error: { code: 'redirect_not_allowed', message: 'redirect_not_allowed', status: 400 } });
    expect(fake.requests.at(-1)?.body).toEqual({ email: 'm@example.com', emailRedirectTo: 'https://evil.example.net/' });
    expect(await client.auth.requestMagicLink('m@example.com', {})).toEqual({ data: null, error: null });
    expect(fake.requests.at(-1)?.body).toEqual({ email: 'm@example.com' });
  });

  it('builds the OAuth start URL outside a browser', async () => {
    const client = track(clientOf(fake));
    const res = await client.auth.signInWithOAuth('github', { redirectTo: 'https://app.example.com/cb?x=1' });
    const url = new URL(res.data?.url ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/v1/auth/oauth/github`);
    // The page keeps its own query and gets this sign-in's mark, which the callback checks.
    expect(url.searchParams.get('redirect_url')).toMatch(/^https:\/\/app\.example\.com\/cb\?x=1&plinth_flow=[0-9a-f]{32}$/);
  });

  it('handles the OAuth callback fragment', async () => {
    const client = track(clientOf(fake));
    const rec = recordEvents(client);
    const session = fake.issue(makeUser('oauth@example.com'));
    const fragment = `#access_token=${session.access_token}&refresh_token=${session.refresh_token}&token_type=bearer&expires_in=3600`;
    // Tokens for a sign-in this client never started (login CSRF): refused, nothing sent.
    const before = fake.requests.length;
    const csrf = await client.auth.handleOAuthCallback(`https://app.example.com/cb${fragment}`);
    expect(csrf.error).toMatchObject({ code: 'oauth_flow_mismatch', status: 0 });
    const foreign = await client.auth.handleOAuthCallback(`https://app.example.com/cb?plinth_flow=${'0'.repeat(32)}${fragment}`);
    expect(foreign.error?.code).toBe('oauth_flow_mismatch');
    expect(fake.requests.length).toBe(before);
    const started = await client.auth.signInWithOAuth('github', { redirectTo: 'https://app.example.com/cb' });
    const url = `${new URL(started.data?.url ?? '').searchParams.get('redirect_url')}${fragment}`;
    const res = await client.auth.handleOAuthCallback(url);
    expect(res.error).toBeNull();
    expect(res.data?.user.email).toBe('oauth@example.com');
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${session.access_token}`);
    expect((await client.auth.getSession()).data?.session?.refresh_token).toBe(session.refresh_token);
    await rec.next('SIGNED_IN');
    // A mark is used once: the same URL again is refused.
    expect((await client.auth.handleOAuthCallback(url)).error?.code).toBe('oauth_flow_mismatch');

    const err = await client.auth.handleOAuthCallback('https://app.example.com/cb#error=access_denied&error_description=User+cancelled');
    expect(err).toEqual({ data: null, error: { code: 'access_denied', message: 'User cancelled', status: 0 } });
    expect((await client.auth.handleOAuthCallback('https://app.example.com/cb')).error?.code).toBe('oauth_callback_missing');
    const next = await client.auth.signInWithOAuth('github', { redirectTo: 'https://app.example.com/cb' });
    const forged = await client.auth.handleOAuthCallback(
      `${new URL(next.data?.url ?? '').searchParams.get('redirect_url')}#access_token=eyJforged&refresh_token=r&expires_in=60`,
    );
    expect(forged.error).toMatchObject({ code: 'invalid_token', status: 401 });
  });
});

describe('errors', () => {
  it('reports a refused connection as network_error with status 0', async () => {
    const client = track(createClient('http://127.0.0.1:9', PUBLIC_KEY));
    const res = await client.auth.signIn({ email: 'a@example.com', password: 'x' });
    expect(res.data).toBeNull();
    expect(res.error).toMatchObject({ code: 'network_error', status: 0 });
    const db = await client.from('todos').select();
    expect(db).toMatchObject({ data: null, count: null, status: 0, error: { code: 'network_error' } });
  });

  it('passes server error bodies through and handles non-JSON answers', async () => {
    const client = track(clientOf(fake));
    const res = await client.from('nope').select();
    expect(res.error).toEqual({ code: 'table_not_found', message: 'No table "nope".', status: 404 });
    const html = track(
      createClient(fake.url, PUBLIC_KEY, { fetch: async () => new Response('<html>Bad gateway</html>', { status: 502 }) }),
    );
    expect((await html.auth.signIn({ email: 'a', password: 'b' })).error).toMatchObject({ code: 'unexpected_response', status: 502 });
  });
});
