import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, lastToken, mailsTo, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

const VERIFY_PAGE = 'https://app.example.com/auth/verify';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, {
    allowed_redirect_urls: ['https://app.example.com/auth', 'https://other.example.com/welcome'],
    email_verification_url: VERIFY_PAGE,
    require_email_confirmation: true,
  });
});
afterAll(() => t?.stop());

const verify = (token: string) => call(t, 'POST', 'verify-email', { token });
const signInRes = (addr: string, password = 'correct horse battery') => call(t, 'POST', 'signin', { email: addr, password });

describe('email confirmation required', () => {
  it('sign-up mails a link to the verification page; sign-in waits for it; the link confirms once', async () => {
    const addr = email('confirm');
    const res = await signUp(t, addr);
    expect(res.session).toBeNull();
    expect(res.user).toMatchObject({ email: addr, email_confirmed_at: null });
    const mails = await mailsTo(t, addr);
    expect(mails).toHaveLength(1);
    expect(mails[0].kind).toBe('verification');
    expect(mails[0].link.startsWith(`${VERIFY_PAGE}?token=`)).toBe(true);

    expect(code(await signInRes(addr))).toEqual([403, 'email_not_confirmed']);
    // A wrong password still answers invalid_credentials: the 403 needs the password.
    expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'wrong wrong' }))).toEqual([400, 'invalid_credentials']);

    const token = await lastToken(t, addr);
    const ok = await verify(token);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().user.email_confirmed_at).toMatch(/Z$/);
    expect(code(await verify(token))).toEqual([400, 'token_invalid']);
    expect((await signInRes(addr)).statusCode).toBe(200);
  });

  it('uses an allowed emailRedirectTo instead of the default page', async () => {
    const addr = email('redir');
    const res = await call(t, 'POST', 'signup', {
      email: addr,
      password: 'correct horse battery',
      emailRedirectTo: 'https://other.example.com/welcome/step?x=1',
    });
    expect(res.statusCode).toBe(200);
    const link = new URL((await mailsTo(t, addr))[0].link);
    expect(`${link.origin}${link.pathname}`).toBe('https://other.example.com/welcome/step');
    expect(link.searchParams.get('x')).toBe('1');
  });

  it.each(['https://evil.example.com/welcome', 'https://other.example.com/welcomeX', 'javascript:alert(1)'])(
    'refuses emailRedirectTo %s with redirect_not_allowed and sends nothing',
    async (url) => {
      const addr = email('bad');
      expect(code(await call(t, 'POST', 'signup', { email: addr, password: 'correct horse battery', emailRedirectTo: url }))).toEqual([
        400,
        'redirect_not_allowed',
      ]);
      expect(await mailsTo(t, addr)).toEqual([]);
    },
  );

  it('a duplicate sign-up answers like a new one (no 409, another id); while two are pending, a link keeps no password', async () => {
    const addr = email('dup');
    const first = await signUp(t, addr);
    const oldToken = await lastToken(t, addr);
    t.clock.advance(61_000); // past the per-recipient limit
    const again = await call(t, 'POST', 'signup', { email: addr, password: 'another password' });
    expect(again.statusCode).toBe(200);
    const body = again.json();
    expect(body.session).toBeNull();
    expect(Object.keys(body.user).sort()).toEqual(Object.keys(first.user).sort());
    expect(body.user.id).not.toBe(first.user.id);
    expect(await mailsTo(t, addr)).toHaveLength(2);
    // Two sign-ups chose two passwords for one unproven address: whoever proves it, with either
    // link, gets neither (docs/security.md, the proof rule); the other link dies with the proof.
    expect((await verify(await lastToken(t, addr))).statusCode).toBe(200);
    expect(code(await signInRes(addr, 'another password'))).toEqual([400, 'invalid_credentials']);
    expect(code(await signInRes(addr))).toEqual([400, 'invalid_credentials']);
    expect(code(await verify(oldToken))).toEqual([400, 'token_invalid']);
  });

  it('a sign-up after the first one’s link expired is the only one pending: its link carries its password', async () => {
    const addr = email('dup-late');
    await signUp(t, addr);
    t.clock.advance(24 * 3600_000 + 1);
    expect((await call(t, 'POST', 'signup', { email: addr, password: 'another password' })).statusCode).toBe(200);
    expect((await verify(await lastToken(t, addr))).statusCode).toBe(200);
    expect((await signInRes(addr, 'another password')).statusCode).toBe(200);
    expect(code(await signInRes(addr))).toEqual([400, 'invalid_credentials']);
  });

  it('a verification link expires after 24 hours', async () => {
    const addr = email('late');
    await signUp(t, addr);
    t.clock.advance(24 * 3600_000 + 1);
    expect(code(await verify(await lastToken(t, addr)))).toEqual([400, 'token_invalid']);
  });

  it('the same link used twice at the same instant: exactly one success', async () => {
    const addr = email('race');
    await signUp(t, addr);
    const token = await lastToken(t, addr);
    const results = await Promise.all([verify(token), verify(token), verify(token)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it.each([['garbage'], ['x'.repeat(43)], ['']])('refuses token %j with token_invalid', async (token) => {
    expect(code(await verify(token))).toEqual([400, 'token_invalid']);
  });
});

describe('resend-verification', () => {
  it('answers 200 {} for an unknown email and sends nothing', async () => {
    const ghost = email('ghost');
    const res = await call(t, 'POST', 'resend-verification', { email: ghost });
    expect([res.statusCode, res.json()]).toEqual([200, {}]);
    expect(await mailsTo(t, ghost)).toEqual([]);
  });

  it('sends a fresh link that voids the previous one; one email a minute per recipient', async () => {
    const addr = email('resend');
    await signUp(t, addr);
    const first = await lastToken(t, addr);
    t.clock.advance(60_000);
    expect((await call(t, 'POST', 'resend-verification', { email: addr.toUpperCase() })).statusCode).toBe(200);
    const second = await lastToken(t, addr);
    expect(second).not.toBe(first);
    expect(code(await verify(first))).toEqual([400, 'token_invalid']);
    const limited = await call(t, 'POST', 'resend-verification', { email: addr });
    expect(code(limited)).toEqual([429, 'rate_limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await verify(second)).statusCode).toBe(200);
  });

  it('limits unknown emails exactly like known ones', async () => {
    const ghost = email('ghost');
    expect((await call(t, 'POST', 'resend-verification', { email: ghost })).statusCode).toBe(200);
    expect(code(await call(t, 'POST', 'resend-verification', { email: ghost }))).toEqual([429, 'rate_limited']);
  });

  it('refuses a malformed email with invalid_email', async () => {
    expect(code(await call(t, 'POST', 'resend-verification', { email: 'nope' }))).toEqual([400, 'invalid_email']);
  });
});

describe('forgot and reset password', () => {
  const RESET_PAGE = 'https://app.example.com/auth/reset';
  let addr: string;
  beforeAll(async () => {
    await setAuth(t, { password_reset_url: RESET_PAGE });
    addr = email('reset');
    await signUp(t, addr);
    await verify(await lastToken(t, addr));
  });

  async function forgot(to: string) {
    t.clock.advance(60_000);
    const res = await call(t, 'POST', 'forgot-password', { email: to });
    expect([res.statusCode, res.json()]).toEqual([200, {}]);
    return lastToken(t, to, 'reset');
  }
  const reset = (token: string, password = 'a brand new password') => call(t, 'POST', 'reset-password', { token, password });

  it('answers 200 {} for an unknown email and sends nothing', async () => {
    const ghost = email('ghost');
    expect((await call(t, 'POST', 'forgot-password', { email: ghost })).json()).toEqual({});
    expect(await mailsTo(t, ghost)).toEqual([]);
  });

  it('mails a link to the reset page; the reset ends every session; the new password works; the link works once', async () => {
    const s1 = await signIn(t, addr);
    const s2 = await signIn(t, addr);
    const token = await forgot(addr);
    expect((await mailsTo(t, addr)).at(-1)?.link.startsWith(`${RESET_PAGE}?token=`)).toBe(true);
    expect(code(await reset(token, 'short'))).toEqual([400, 'weak_password']);
    const ok = await reset(token); // a weak password did not use the token up
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().user.email).toBe(addr);
    for (const s of [s1, s2])
      expect(code(await call(t, 'POST', 'refresh', { refresh_token: s.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    expect(code(await signInRes(addr))).toEqual([400, 'invalid_credentials']);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'a brand new password' })).statusCode).toBe(200);
    expect(code(await reset(token, 'yet another password'))).toEqual([400, 'token_invalid']);
  });

  it('a reset link expires after one hour', async () => {
    const token = await forgot(addr);
    t.clock.advance(3600_000 + 1);
    expect(code(await reset(token))).toEqual([400, 'token_invalid']);
  });

  it('a newer link voids the older one', async () => {
    const older = await forgot(addr);
    const newer = await forgot(addr);
    expect(code(await reset(older))).toEqual([400, 'token_invalid']);
    expect((await reset(newer, 'correct horse battery')).statusCode).toBe(200);
  });

  it('the same link used twice at the same instant: exactly one success', async () => {
    const token = await forgot(addr);
    const results = await Promise.all([reset(token, 'first racer pw'), reset(token, 'second racer pw')]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
  });

  it('one email a minute per recipient: 429 with Retry-After', async () => {
    await forgot(addr);
    const res = await call(t, 'POST', 'forgot-password', { email: addr });
    expect(code(res)).toEqual([429, 'rate_limited']);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it.each([['garbage'], ['x'.repeat(43)]])('refuses token %j with token_invalid', async (token) => {
    expect(code(await reset(token))).toEqual([400, 'token_invalid']);
  });
});
