import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastToken, mailsTo, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

// A stolen access token is not a permanent takeover: without a recent sign-in, changing the
// password or the email needs the current password or a code sent to the owner.
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, { allowed_redirect_urls: ['https://app.example.com/'], email_verification_url: 'https://app.example.com/verify' });
});
afterAll(() => t?.stop());

const patch = (access: string, body: unknown) => call(t, 'PATCH', 'user', body, asUser(t, access));
/** A user whose session was opened more than the reauthentication window ago. */
async function staleSession(tag: string) {
  const addr = email(tag);
  const signedUp = await signUp(t, addr);
  t.clock.advance(t.auth.config.reauthWindowMs + 1000);
  return { addr, ...signedUp };
}
/** The 6-digit code of the newest reauthentication mail to `addr`. */
async function mailedCode(addr: string): Promise<string> {
  await t.auth.settled();
  await t.messaging.outbox.drain();
  const mail = t.mail?.received.filter((m) => m.to.includes(addr) && m.kind === 'reauthentication').at(-1);
  const found = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  if (!found) throw new Error(`no reauthentication code mailed to ${addr}`);
  return found;
}

describe('password change', () => {
  it('right after sign-in needs nothing more', async () => {
    const { session } = await signUp(t, email('fresh'));
    expect((await patch(session.access_token, { password: 'a brand new password' })).statusCode).toBe(200);
  });

  it('right after sign-in, a proof that is sent and wrong is refused all the same (issue 19)', async () => {
    const addr = email('fresh-wrong');
    const { session } = await signUp(t, addr);
    expect(code(await patch(session.access_token, { password: 'a brand new password', current_password: 'a guess' }))).toEqual([
      400,
      'invalid_credentials',
    ]);
    expect(code(await patch(session.access_token, { email: email('fresh-wrong-new'), nonce: '000000' }))).toEqual([400, 'invalid_code']);
    // Nothing changed.
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' })).statusCode).toBe(200);
    // The right one goes through.
    const ok = await patch(session.access_token, { password: 'a brand new password', current_password: 'correct horse battery' });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('long after sign-in: 403 reauthentication_required, 400 for a wrong current password, 200 with the right one', async () => {
    const { addr, session } = await staleSession('stale-pw');
    const other = await signIn(t, addr);
    expect(code(await patch(session.access_token, { password: 'stolen token password' }))).toEqual([403, 'reauthentication_required']);
    expect(code(await patch(session.access_token, { password: 'stolen token password', current_password: 'a guess' }))).toEqual([
      400,
      'invalid_credentials',
    ]);
    // Nothing changed meanwhile.
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' })).statusCode).toBe(200);
    const ok = await patch(session.access_token, { password: 'the owner changed it', current_password: 'correct horse battery' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'the owner changed it' })).statusCode).toBe(200);
    // The other sessions ended, on the REST API too.
    expect(code(await t.app.inject({ url: '/v1/auth/user', headers: t.as.user(other.access_token) }))).toEqual([401, 'invalid_token']);
  });

  it('guessing the current password is limited like sign-in', async () => {
    const s = await createAuthServer({ AUTH_RATE_SIGNIN_EMAIL: '3/900' });
    try {
      const { session } = await signUp(s, email('guess'));
      s.clock.advance(s.auth.config.reauthWindowMs + 1000);
      const guess = () =>
        call(s, 'PATCH', 'user', { password: 'whatever it is', current_password: 'guess guess' }, asUser(s, session.access_token));
      for (let i = 0; i < 3; i++) expect(code(await guess())).toEqual([400, 'invalid_credentials']);
      expect(code(await guess())).toEqual([429, 'rate_limited']);
    } finally {
      await s.stop();
    }
  });
});

describe('reauthentication code', () => {
  it('is mailed to the confirmed address and lets the email change go through; a wrong one is refused', async () => {
    const { addr, session } = await staleSession('code');
    // A code needs a confirmed address to go to: confirm this one first (magic link).
    await setAuth(t, { magic_link_enabled: true, magic_link_url: 'https://app.example.com/magic' });
    await call(t, 'POST', 'request-magic-link', { email: addr });
    const magic = (await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, addr, 'magic_link') })).json();
    t.clock.advance(t.auth.config.reauthWindowMs + 1000);
    const next = email('code-new');
    expect(code(await patch(magic.access_token, { email: next }))).toEqual([403, 'reauthentication_required']);
    t.clock.advance(61_000); // one mail a minute to this address
    const sent = await call(t, 'POST', 'reauthenticate', {}, asUser(t, magic.access_token));
    expect(sent.json()).toEqual({ sent: true, channel: 'email' });
    const right = await mailedCode(addr);
    const wrong = right === '000000' ? '111111' : '000000';
    expect(code(await patch(magic.access_token, { email: next, nonce: wrong }))).toEqual([400, 'invalid_code']);
    expect((await patch(magic.access_token, { email: next, nonce: right })).statusCode).toBe(200);
    // Used once.
    expect(code(await patch(magic.access_token, { email: email(), nonce: right }))).toEqual([400, 'invalid_code']);
    // The old session (from before the magic link) was ended by that first proof.
    expect(code(await t.app.inject({ url: '/v1/auth/user', headers: t.as.user(session.access_token) }))).toEqual([401, 'invalid_token']);
  });

  it('five wrong codes void it', async () => {
    const { addr, user, session } = await staleSession('void');
    await t.db.query('update auth.users set email_confirmed_at = now() where id = $1', [user.id]);
    t.clock.advance(61_000);
    await call(t, 'POST', 'reauthenticate', {}, asUser(t, session.access_token));
    const right = await mailedCode(addr);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) await patch(session.access_token, { password: 'new password here', nonce: wrong });
    expect(code(await patch(session.access_token, { password: 'new password here', nonce: right }))).toEqual([400, 'invalid_code']);
  });

  it('needs a confirmed address or phone to go to', async () => {
    const { session } = await staleSession('unconfirmed');
    expect(code(await call(t, 'POST', 'reauthenticate', {}, asUser(t, session.access_token)))).toEqual([400, 'invalid_request']);
  });
});

describe('email change', () => {
  it('tells the old (confirmed) address', async () => {
    const { addr, user, session } = await signUp(t, email('told')).then((r) => ({ addr: r.user.email as string, ...r }));
    await t.db.query('update auth.users set email_confirmed_at = now() where id = $1', [user.id]);
    const next = email('told-new');
    expect((await patch(session.access_token, { email: next })).statusCode).toBe(200);
    const old = await mailsTo(t, addr);
    expect(old.map((m) => m.kind)).toEqual(['email_change_notice']);
    const text = t.mail?.received.find((m) => m.to.includes(addr) && m.kind === 'email_change_notice')?.text ?? '';
    expect(text).toContain(next);
  });

  it('answers a taken and a free address alike, rate-limited before anything else', async () => {
    const taken = email('taken');
    await signUp(t, taken);
    for (const target of [taken, email('free')]) {
      const { session } = await signUp(t, email('asker'));
      expect((await patch(session.access_token, { email: target })).statusCode).toBe(200);
      const { session: again } = await signUp(t, email('asker'));
      expect(code(await patch(again.access_token, { email: target }))).toEqual([429, 'rate_limited']);
    }
  });

  it('a reset link mailed to the old address dies when the email changes', async () => {
    await setAuth(t, { password_reset_url: 'https://app.example.com/reset' });
    const addr = email('reset-old');
    const { session } = await signUp(t, addr);
    await call(t, 'POST', 'forgot-password', { email: addr });
    const resetToken = await lastToken(t, addr, 'reset');
    const next = email('reset-new');
    await patch(session.access_token, { email: next });
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, next, 'email_change') })).statusCode).toBe(200);
    expect(code(await call(t, 'POST', 'reset-password', { token: resetToken, password: 'via the old address' }))).toEqual([
      400,
      'token_invalid',
    ]);
  });
});
