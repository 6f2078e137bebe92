import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, lastToken } from '../../../test/auth.js';
import { setAuth } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { authClient } from '../../../test/supabase-auth.js';

// Email one-time codes (docs/auth.md, "Email codes"): each mailed link also carries a 6-digit
// code for the same token, on /v1/auth and on /auth/v1 (auth-js's verifyOtp({email, token})).
const PASSWORD = 'correct horse battery';
const PAGE = 'https://app.example.com/auth';
let t: TestServer;

beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, {
    allowed_redirect_urls: [PAGE],
    magic_link_url: `${PAGE}/magic`,
    magic_link_enabled: true,
    password_reset_url: `${PAGE}/reset`,
    email_verification_url: `${PAGE}/verify`,
  });
});
afterAll(() => t?.stop());

/** The 6-digit code of the newest mail of `kind` to `to`, read from its text and its HTML. */
async function lastCode(to: string, kind: string): Promise<string> {
  await t.auth.settled();
  await t.messaging.outbox.drain();
  const mail = t.mail!.received.filter((m) => m.to.includes(to) && m.kind === kind).at(-1);
  if (!mail) throw new Error(`no ${kind} mail to ${to}`);
  const text = /code: (\d{6})/.exec(mail.text)?.[1];
  expect(mail.html).toContain(`Or enter this code: ${text}<`);
  if (!text) throw new Error(`no code in ${mail.text}`);
  return text;
}

const wrong = (c: string) => String((Number(c) + 1) % 1_000_000).padStart(6, '0');

describe('email codes on /auth/v1', () => {
  it('signInWithOtp mails a link and a code; verifyOtp({email, token, type: email}) signs in once, and the link is used up with it', async () => {
    const addr = email('code');
    const client = authClient(t);
    expect((await client.signInWithOtp({ email: addr })).error).toBeNull();
    const c = await lastCode(addr, 'magic_link');
    const link = await lastToken(t, addr, 'magic_link');
    const { data, error } = await client.verifyOtp({ email: addr, token: c, type: 'email' });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email: addr });
    expect(decodeJwt(data.session!.access_token).sub).toBe(data.user!.id);
    const again = await authClient(t).verifyOtp({ email: addr, token: c, type: 'email' });
    expect([again.error?.status, again.error?.code]).toEqual([403, 'otp_expired']);
    const viaLink = await authClient(t).verifyOtp({ token_hash: link, type: 'magiclink' });
    expect([viaLink.error?.status, viaLink.error?.code]).toEqual([403, 'otp_expired']);
  });

  it('type magiclink takes the code too; a code for another address is refused', async () => {
    const [a, b] = [email('code-a'), email('code-b')];
    for (const x of [a, b]) expect((await authClient(t).signInWithOtp({ email: x })).error).toBeNull();
    const ca = await lastCode(a, 'magic_link');
    const cross = await authClient(t).verifyOtp({ email: b, token: ca, type: 'magiclink' });
    // (b's own code could be the same six digits, one time in a million.)
    if (ca !== (await lastCode(b, 'magic_link'))) expect([cross.error?.status, cross.error?.code]).toEqual([403, 'otp_expired']);
    const ok = await authClient(t).verifyOtp({ email: a, token: ca, type: 'magiclink' });
    expect(ok.error).toBeNull();
    expect(ok.data.user?.email).toBe(a);
  });

  it('a sign-up’s confirmation mail carries a code that verifies (type signup); a reset mail’s code (type recovery) signs in', async () => {
    await setAuth(t, { require_email_confirmation: true });
    try {
      const addr = email('signup-code');
      const client = authClient(t);
      const up = await client.signUp({ email: addr, password: PASSWORD });
      expect(up.data.session).toBeNull();
      const c = await lastCode(addr, 'verification');
      const verified = await client.verifyOtp({ email: addr, token: c, type: 'signup' });
      expect(verified.error).toBeNull();
      expect(verified.data.user?.email_confirmed_at).toEqual(expect.any(String));
      t.clock.advance(61_000); // the per-recipient mail limit
      expect((await client.resetPasswordForEmail(addr)).error).toBeNull();
      const r = await lastCode(addr, 'reset');
      const reset = await authClient(t).verifyOtp({ email: addr, token: r, type: 'recovery' });
      expect(reset.error).toBeNull();
      expect(reset.data.user?.email).toBe(addr);
    } finally {
      await setAuth(t, { require_email_confirmation: false });
    }
  });

  it('generateLink answers the link’s code as email_otp, which verifyOtp takes with the address', async () => {
    const addr = email('admin-otp');
    expect((await authClient(t).signUp({ email: addr, password: PASSWORD })).error).toBeNull();
    const admin = authClient(t, t.keys.secretKey);
    const { data, error } = await admin.admin.generateLink({ type: 'magiclink', email: addr });
    expect(error).toBeNull();
    const otp = data.properties?.email_otp ?? '';
    expect(otp).toMatch(/^\d{6}$/);
    const signedIn = await authClient(t).verifyOtp({ email: addr, token: otp, type: 'magiclink' });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data.user?.email).toBe(addr);
  });

  it('attacker: five wrong codes void the code (the right one is refused after), while the link still works; an expired code is refused', async () => {
    const addr = email('guess');
    expect((await authClient(t).signInWithOtp({ email: addr })).error).toBeNull();
    const c = await lastCode(addr, 'magic_link');
    for (let i = 0; i < 5; i++) {
      const guess = await authClient(t).verifyOtp({ email: addr, token: wrong(c), type: 'email' });
      expect([guess.error?.status, guess.error?.code]).toEqual([403, 'otp_expired']);
    }
    const late = await authClient(t).verifyOtp({ email: addr, token: c, type: 'email' });
    expect([late.error?.status, late.error?.code]).toEqual([403, 'otp_expired']);
    const link = await authClient(t).verifyOtp({ token_hash: await lastToken(t, addr, 'magic_link'), type: 'magiclink' });
    expect(link.error).toBeNull();

    const other = email('expired');
    expect((await authClient(t).signInWithOtp({ email: other })).error).toBeNull();
    const old = await lastCode(other, 'magic_link');
    t.clock.advance(15 * 60_000 + 1000); // a magic link's lifetime
    const expired = await authClient(t).verifyOtp({ email: other, token: old, type: 'email' });
    expect([expired.error?.status, expired.error?.code]).toEqual([403, 'otp_expired']);
  });
});

describe('email codes on /v1/auth', () => {
  it('signin-magic-link and reset-password take {email, code}', async () => {
    const addr = email('own');
    expect((await call(t, 'POST', 'request-magic-link', { email: addr })).statusCode).toBe(200);
    const c = await lastCode(addr, 'magic_link');
    expect(code(await call(t, 'POST', 'signin-magic-link', { email: addr, code: wrong(c) }))).toEqual([401, 'magic_link_invalid']);
    const res = await call(t, 'POST', 'signin-magic-link', { email: addr, code: c });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user.email).toBe(addr);
    expect(code(await call(t, 'POST', 'signin-magic-link', { email: addr, code: c }))).toEqual([401, 'magic_link_invalid']);

    t.clock.advance(61_000);
    expect((await call(t, 'POST', 'forgot-password', { email: addr })).statusCode).toBe(200);
    const r = await lastCode(addr, 'reset');
    const reset = await call(t, 'POST', 'reset-password', { email: addr, code: r, password: 'a new password 123' });
    expect(reset.statusCode, reset.body).toBe(200);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'a new password 123' })).statusCode).toBe(200);
  });

  it('verify-email takes the sign-up mail’s {email, code}', async () => {
    await setAuth(t, { require_email_confirmation: true });
    try {
      const addr = email('own-signup');
      expect((await call(t, 'POST', 'signup', { email: addr, password: PASSWORD })).statusCode).toBe(200);
      expect(code(await call(t, 'POST', 'signin', { email: addr, password: PASSWORD }))).toEqual([403, 'email_not_confirmed']);
      const c = await lastCode(addr, 'verification');
      const res = await call(t, 'POST', 'verify-email', { email: addr, code: c });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().user.email_confirmed_at).toEqual(expect.any(String));
      expect((await call(t, 'POST', 'signin', { email: addr, password: PASSWORD })).statusCode).toBe(200);
    } finally {
      await setAuth(t, { require_email_confirmation: false });
    }
  });

  it('a code without its address, or a code that is not six digits, is refused', async () => {
    expect(code(await call(t, 'POST', 'signin-magic-link', { code: '123456' }))).toEqual([400, 'invalid_request']);
    const addr = email('shape');
    expect((await call(t, 'POST', 'request-magic-link', { email: addr })).statusCode).toBe(200);
    const c = await lastCode(addr, 'magic_link');
    expect(code(await call(t, 'POST', 'signin-magic-link', { email: addr, code: `${c}0` }))).toEqual([401, 'magic_link_invalid']);
    expect((await call(t, 'POST', 'signin-magic-link', { email: addr, code: c })).statusCode).toBe(200);
  });
});
