import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastToken, mailsTo, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, { allowed_redirect_urls: ['https://app.example.com/'], email_verification_url: 'https://app.example.com/verify' });
});
afterAll(() => t?.stop());

const patch = (access: string, body: unknown) => call(t, 'PATCH', 'user', body, asUser(t, access));
const get = (access: string) => call(t, 'GET', 'user', undefined, asUser(t, access));

describe('GET /v1/auth/user', () => {
  it('answers the signed-in user', async () => {
    const addr = email();
    const { session } = await signUp(t, addr);
    const res = await get(session.access_token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(session.user);
  });

  it.each([
    ['no token', () => t.as.anon, 401, 'unauthorized'],
    ['the secret key', () => t.as.service, 401, 'unauthorized'],
    ['a garbage token', () => asUser(t, 'eyJhbGciOiJFUzI1NiJ9.e30.xx'), 401, 'invalid_token'],
    [
      'a token of no session',
      async () => asUser(t, (await t.tokens.sign({ sub: crypto.randomUUID(), session_id: crypto.randomUUID() }, 3600)).token),
      401,
      'invalid_token',
    ],
  ])('refuses %s', async (_name, headers, status, errorCode) => {
    const res = await t.app.inject({ url: '/v1/auth/user', headers: await headers() });
    expect(code(res)).toEqual([status, errorCode]);
  });
});

describe('PATCH /v1/auth/user', () => {
  it('changes name and avatar, and clears them with null', async () => {
    const { session } = await signUp(t, email());
    t.clock.advance(1000);
    const res = await patch(session.access_token, { name: 'Ann Lee', avatar: 'https://cdn.example.com/a.png' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Ann Lee', avatar: 'https://cdn.example.com/a.png' });
    expect(res.json().updated_at > session.user.updated_at).toBe(true);
    expect((await patch(session.access_token, { avatar: null })).json()).toMatchObject({ name: 'Ann Lee', avatar: null });
  });

  it('a password change keeps this session and ends the others', async () => {
    const addr = email();
    const { session: keep } = await signUp(t, addr);
    const other = await signIn(t, addr);
    expect(code(await patch(keep.access_token, { password: 'short' }))).toEqual([400, 'weak_password']);
    expect((await patch(keep.access_token, { password: 'a new long password' })).statusCode).toBe(200);
    expect((await get(keep.access_token)).statusCode).toBe(200);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: other.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'a new long password' })).statusCode).toBe(200);
  });

  it('an email change mails the new address first and applies when its link is used', async () => {
    const addr = email('old');
    const next = email('new');
    const { session } = await signUp(t, addr);
    const res = await patch(session.access_token, { email: next.toUpperCase() });
    expect(res.statusCode).toBe(200);
    expect(res.json().email).toBe(addr); // not yet
    expect(await mailsTo(t, addr)).toEqual([]);
    const mails = await mailsTo(t, next);
    expect(mails.map((m) => m.kind)).toEqual(['email_change']);
    expect(mails[0].link.startsWith('https://app.example.com/verify?token=')).toBe(true);
    const verified = await call(t, 'POST', 'verify-email', { token: await lastToken(t, next) });
    expect(verified.statusCode, verified.body).toBe(200);
    expect(verified.json().user).toMatchObject({ email: next, email_confirmed_at: expect.any(String) });
    expect(verified.json().user.identities).toEqual([expect.objectContaining({ provider: 'email', email: next })]);
    expect((await call(t, 'POST', 'signin', { email: next, password: 'correct horse battery' })).statusCode).toBe(200);
    expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' }))).toEqual([400, 'invalid_credentials']);
  });

  it('an email-change link fails with 409 email_exists if another account took the address meanwhile', async () => {
    const { session } = await signUp(t, email());
    const wanted = email('wanted');
    await patch(session.access_token, { email: wanted });
    await signUp(t, wanted);
    expect(code(await call(t, 'POST', 'verify-email', { token: await lastToken(t, wanted, 'email_change') }))).toEqual([
      409,
      'email_exists',
    ]);
    expect((await call(t, 'GET', 'user', undefined, asUser(t, session.access_token))).json().email).not.toBe(wanted);
  });

  it.each<[string, (taken: string) => unknown, number, string]>([
    ['a malformed email', () => ({ email: 'nope' }), 400, 'invalid_email'],
    ['an address list posing as one address', () => ({ email: 'root,victim@example.com' }), 400, 'invalid_email'],
    ['an avatar that is not an http(s) URL', () => ({ avatar: 'javascript:alert(1)' }), 400, 'invalid_request'],
    ['a data: avatar', () => ({ avatar: 'data:image/svg+xml,<svg onload=alert(1)>' }), 400, 'invalid_request'],
    [
      'an emailRedirectTo outside the allowlist',
      () => ({ email: email(), emailRedirectTo: 'https://evil.example/' }),
      400,
      'redirect_not_allowed',
    ],
    ['an unknown field', () => ({ role: 'service' }), 400, 'invalid_request'],
    ['a name that is not a string', () => ({ name: 42 }), 400, 'invalid_request'],
  ])('refuses %s', async (_name, body, status, errorCode) => {
    const taken = email('taken');
    await signUp(t, taken);
    const { session } = await signUp(t, email());
    expect(code(await patch(session.access_token, body(taken)))).toEqual([status, errorCode]);
  });

  it('an email of another account answers like a free one (no enumeration); its link then answers 409 email_exists', async () => {
    const taken = email('taken');
    await signUp(t, taken);
    const { session } = await signUp(t, email());
    const res = await patch(session.access_token, { email: taken });
    expect(res.statusCode, res.body).toBe(200);
    expect(code(await call(t, 'POST', 'verify-email', { token: await lastToken(t, taken, 'email_change') }))).toEqual([
      409,
      'email_exists',
    ]);
  });

  it('needs a verification page for an email change', async () => {
    const s = await createAuthServer();
    try {
      const { session } = await signUp(s, email());
      const res = await s.app.inject({
        method: 'PATCH',
        url: '/v1/auth/user',
        headers: s.as.user(session.access_token),
        payload: { email: email() },
      });
      expect(code(res)).toEqual([400, 'invalid_request']);
    } finally {
      await s.stop();
    }
  });
});
