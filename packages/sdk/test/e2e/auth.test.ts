import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processLock } from '../../src/auth/lock.js';
import type { Session } from '../../src/types.js';
import {
  APP,
  clientOf,
  type E2eServer,
  email,
  lastLink,
  mailCount,
  nextToken,
  record,
  refreshAs,
  startServer,
  storageKey,
  storageWith,
  tracker,
} from './server.js';

// Every auth method of the SDK against the real server (PGlite or PostgreSQL, real SMTP sink),
// from Node. The server's clock is the harness's fake one (frozen unless a test moves it);
// the SDK uses real time.

let s: E2eServer;
const { track, disposeAll } = tracker();
const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a new long secret';

beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.t.stop());
afterEach(() => disposeAll());

const client = (options: Parameters<typeof clientOf>[1] = {}) => track(clientOf(s, options));

/** A confirmed account (confirmation is off by default) and the client that created it, signed in. */
async function account(tag = 'user') {
  const addr = email(tag);
  const c = client();
  const { data, error } = await c.auth.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  return { addr, c, session: data!.session as Session, user: data!.user };
}

/** A second device of the same user. */
async function signedIn(addr: string, password = PASSWORD) {
  const c = client();
  const { data, error } = await c.auth.signIn({ email: addr, password });
  expect(error).toBeNull();
  return { c, session: data!.session };
}

async function withConfirmation<T>(fn: () => Promise<T>): Promise<T> {
  await s.t.settings.updateAuth({ require_email_confirmation: true });
  try {
    return await fn();
  } finally {
    await s.t.settings.updateAuth({ require_email_confirmation: false });
  }
}

describe('signUp', () => {
  it('with confirmation off signs in at once, with a session the server accepts; email_exists on a repeat', async () => {
    const addr = email('signup');
    const c = client();
    const rec = record(c);
    const { data, error } = await c.auth.signUp({ email: addr, password: PASSWORD });
    expect(error).toBeNull();
    expect(data!.user.email).toBe(addr);
    expect(data!.session).toMatchObject({ token_type: 'bearer', expires_in: 3600, user: { id: data!.user.id } });
    expect(data!.session!.expires_at).toBe(Math.floor(s.t.clock.now() / 1000) + 3600);

    expect((await c.auth.getSession()).data?.session?.access_token).toBe(data!.session!.access_token);
    const me = await c.auth.getUser();
    expect(me.error).toBeNull();
    expect(me.data!.user).toMatchObject({ id: data!.user.id, email: addr });
    await rec.until('SIGNED_IN');
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'SIGNED_IN']);
    expect(rec.events[0].session).toBeNull();
    expect(rec.last('SIGNED_IN')!.session!.refresh_token).toBe(data!.session!.refresh_token);

    const again = await client().auth.signUp({ email: addr, password: 'another password' });
    expect(again.data).toBeNull();
    expect(again.error).toMatchObject({ code: 'email_exists', status: 409 });
  });

  it('with confirmation on: no session, email_not_confirmed, verifyEmail with the mailed token, then signIn', async () => {
    await withConfirmation(async () => {
      const addr = email('confirm');
      const c = client();
      const rec = record(c);
      const { data, error } = await c.auth.signUp({ email: addr, password: PASSWORD, emailRedirectTo: `${APP}/welcome` });
      expect(error).toBeNull();
      expect(data!.session).toBeNull();
      expect(data!.user).toMatchObject({ email: addr, email_confirmed_at: null });
      expect((await c.auth.getSession()).data?.session).toBeNull();

      const refused = await c.auth.signIn({ email: addr, password: PASSWORD });
      expect(refused.error).toMatchObject({ code: 'email_not_confirmed', status: 403 });
      expect((await c.auth.getSession()).data?.session).toBeNull();

      const token = await nextToken(s, addr, 'verification');
      expect(await lastLink(s, addr, 'verification')).toMatch(new RegExp(`^${APP}/welcome\\?token=`));
      const verified = await c.auth.verifyEmail(token);
      expect(verified.error).toBeNull();
      expect(verified.data!.user.email).toBe(addr);
      expect(verified.data!.user.email_confirmed_at).not.toBeNull();
      const reused = await c.auth.verifyEmail(token);
      expect(reused.error).toMatchObject({ code: 'token_invalid', status: 400 });

      const ok = await c.auth.signIn({ email: addr, password: PASSWORD });
      expect(ok.error).toBeNull();
      expect(ok.data!.user.email_confirmed_at).not.toBeNull();
      await rec.until('SIGNED_IN');
      expect(rec.names()).toEqual(['INITIAL_SESSION', 'SIGNED_IN']);
    });
  });

  it('refuses an emailRedirectTo outside the allowlist (redirect_not_allowed) and a weak password, creating nobody', async () => {
    const addr = email('refused');
    const c = client();
    const evil = await c.auth.signUp({ email: addr, password: PASSWORD, emailRedirectTo: 'https://app.example.com.evil.net/verify' });
    expect(evil.data).toBeNull();
    expect(evil.error).toMatchObject({ code: 'redirect_not_allowed', status: 400 });
    const weak = await c.auth.signUp({ email: addr, password: 'seven77' });
    expect(weak.error).toMatchObject({ code: 'weak_password', status: 400 });
    expect((await c.auth.getSession()).data?.session).toBeNull();
    // Neither attempt created the account: the address is still free.
    const later = await c.auth.signUp({ email: addr, password: PASSWORD });
    expect(later.error).toBeNull();
    expect(later.data!.session).not.toBeNull();
  });
});

describe('signIn', () => {
  it('signs in with the right password; a wrong password and an unknown email are both invalid_credentials', async () => {
    const { addr, user } = await account('signin');
    const c = client();
    const rec = record(c);
    const wrong = await c.auth.signIn({ email: addr, password: 'not the password' });
    expect(wrong.data).toBeNull();
    expect(wrong.error).toMatchObject({ code: 'invalid_credentials', status: 400 });
    const unknown = await c.auth.signIn({ email: email('nobody'), password: PASSWORD });
    expect(unknown.error).toEqual(wrong.error);
    expect((await c.auth.getSession()).data?.session).toBeNull();

    const { data, error } = await c.auth.signIn({ email: addr, password: PASSWORD });
    expect(error).toBeNull();
    expect(data!.user.id).toBe(user.id);
    expect(data!.access_token).toBe(data!.session.access_token);
    expect((await c.auth.getUser()).data!.user.id).toBe(user.id);
    await rec.until('SIGNED_IN');
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'SIGNED_IN']);
  });

  it('answers rate_limited (429) after ten failures for one email, even for the right password, until the window passes', async () => {
    const { addr } = await account('limited');
    const c = client();
    for (let i = 0; i < 10; i++) {
      expect((await c.auth.signIn({ email: addr, password: `wrong ${i}` })).error?.code).toBe('invalid_credentials');
    }
    const limited = await c.auth.signIn({ email: addr, password: PASSWORD });
    expect(limited.error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect((await c.auth.getSession()).data?.session).toBeNull();
    s.t.clock.advance(901_000);
    expect((await c.auth.signIn({ email: addr, password: PASSWORD })).error).toBeNull();
  });
});

describe('signOut', () => {
  it('local ends this session only: its refresh token stops working, another device stays signed in', async () => {
    const { addr, c, session } = await account('local');
    const other = await signedIn(addr);
    const rec = record(c);
    await rec.until('INITIAL_SESSION');
    expect(await c.auth.signOut()).toEqual({ data: null, error: null });
    await rec.until('SIGNED_OUT');
    expect((await c.auth.getSession()).data?.session).toBeNull();
    expect((await c.auth.getUser()).error).toMatchObject({ code: 'session_missing', status: 0 });

    expect((await refreshAs(s, session)).error).toMatchObject({ code: 'invalid_refresh_token', status: 401 });
    expect((await other.c.auth.getUser()).error).toBeNull();
    const refreshed = await other.c.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    // Signing out while signed out sends nothing and is not an error.
    expect(await c.auth.signOut()).toEqual({ data: null, error: null });
  });

  it('global ends every session of the user; the other devices are signed out at their next refresh', async () => {
    const { addr, c: a, session: sa } = await account('global');
    const b = await signedIn(addr);
    const cc = await signedIn(addr);
    const recA = record(a);
    await recA.until('INITIAL_SESSION');
    expect(await b.c.auth.signOut({ scope: 'global' })).toEqual({ data: null, error: null });
    expect((await b.c.auth.getSession()).data?.session).toBeNull();

    expect((await refreshAs(s, sa)).error?.code).toBe('invalid_refresh_token');
    // The auth endpoints check the session, not only the token's signature.
    expect((await cc.c.auth.getUser()).error).toMatchObject({ code: 'invalid_token', status: 401 });
    // A refused refresh signs the client out.
    const refused = await a.auth.refreshSession();
    expect(refused.error).toMatchObject({ code: 'invalid_refresh_token', status: 401 });
    await recA.until('SIGNED_OUT');
    expect(recA.names()).toEqual(['INITIAL_SESSION', 'SIGNED_OUT']);
    expect((await a.auth.getSession()).data?.session).toBeNull();
  });
});

describe('refreshSession', () => {
  it('rotates the refresh token; inside the 10 s grace the old one gives the same token set, after it the family is revoked', async () => {
    const { c, session: s0 } = await account('rotate');
    const rec = record(c);
    await rec.until('INITIAL_SESSION');
    const { data, error } = await c.auth.refreshSession();
    expect(error).toBeNull();
    const s1 = data!.session;
    expect(s1.refresh_token).not.toBe(s0.refresh_token);
    expect(data!.user.id).toBe(s0.user.id);
    await rec.until('TOKEN_REFRESHED');
    expect(rec.last('TOKEN_REFRESHED')!.session!.refresh_token).toBe(s1.refresh_token);
    expect((await c.auth.getSession()).data!.session!.refresh_token).toBe(s1.refresh_token);
    expect((await c.auth.getUser()).error).toBeNull();

    // A second tab that still had s0 (it refreshed at the same moment): the same new refresh token.
    s.t.clock.advance(9_000);
    const grace = await refreshAs(s, s0);
    expect(grace.error).toBeNull();
    expect(grace.data!.session.refresh_token).toBe(s1.refresh_token);

    // s0 shows up again after the window: it was copied. The whole session ends.
    s.t.clock.advance(2_000);
    const reused = await refreshAs(s, s0);
    expect(reused.error).toMatchObject({ code: 'refresh_token_reused', status: 401 });
    expect((await refreshAs(s, s1)).error?.code).toBe('invalid_refresh_token');
    expect((await c.auth.getUser()).error?.code).toBe('invalid_token');
    const out = await c.auth.refreshSession();
    expect(out.error?.code).toBe('invalid_refresh_token');
    await rec.until('SIGNED_OUT');
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'TOKEN_REFRESHED', 'SIGNED_OUT']);
  });

  it('two tabs refreshing at once, the second before it sees the first one’s tokens, end on one session and each announce it once', async () => {
    const { session } = await account('tabs');
    // Two "tabs": one lock and one BroadcastChannel name, but each its own view of the storage,
    // which lags behind the other tab's writes (as Chromium's localStorage does, maximally).
    const lock = processLock();
    const key = `plinth.auth.tabs-${session.user.id}`;
    const tab = () => client({ auth: { storage: storageWith(s, session, key), storageKey: key, multiTab: true, lock } });
    const [a, b] = [tab(), tab()];
    const [ra, rb] = [record(a), record(b)];
    await ra.until('INITIAL_SESSION');
    await rb.until('INITIAL_SESSION');
    // B waits for the lock while A rotates, then presents the old refresh token: the server's grace answers it.
    const [x, y] = await Promise.all([a.auth.refreshSession(), b.auth.refreshSession()]);
    expect(x.error).toBeNull();
    expect(y.error).toBeNull();
    expect(y.data!.session.refresh_token).toBe(x.data!.session.refresh_token);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const rec of [ra, rb]) expect(rec.names()).toEqual(['INITIAL_SESSION', 'TOKEN_REFRESHED']);
    const [sa, sb] = [(await a.auth.getSession()).data!.session!, (await b.auth.getSession()).data!.session!];
    expect(sa.refresh_token).toBe(x.data!.session.refresh_token);
    expect(sb.refresh_token).toBe(sa.refresh_token);
    expect((await a.auth.getUser()).error).toBeNull();
    expect((await b.auth.getUser()).error).toBeNull();
  });

  it('a stored session that expired is refreshed when the client starts, before INITIAL_SESSION', async () => {
    const { session } = await account('expired');
    const stale = { ...session, expires_at: Math.floor(Date.now() / 1000) - 60 };
    const storage = storageWith(s, stale);
    const c = client({ auth: { storage } });
    const rec = record(c);
    await rec.until('INITIAL_SESSION');
    const initial = rec.events[0].session!;
    expect(initial.refresh_token).not.toBe(session.refresh_token);
    expect(initial.expires_at).toBeGreaterThan(Date.now() / 1000);
    expect(JSON.parse(String(await storage.getItem(storageKey(s)))).refresh_token).toBe(initial.refresh_token);
    expect((await c.auth.getUser()).data!.user.id).toBe(session.user.id);
    expect(rec.names()).toEqual(['INITIAL_SESSION']);
  });

  it('the timer refreshes a session 60 s before it expires, and getSession refreshes one that is about to', async () => {
    const { session } = await account('timer');
    const soon = { ...session, expires_at: Math.floor(Date.now() / 1000) + 62 };
    const c = client({ auth: { storage: storageWith(s, soon) } });
    const rec = record(c);
    await rec.until('TOKEN_REFRESHED');
    const refreshed = rec.last('TOKEN_REFRESHED')!.session!;
    expect(refreshed.refresh_token).not.toBe(session.refresh_token);
    expect((await c.auth.getSession()).data!.session!.refresh_token).toBe(refreshed.refresh_token);

    const { session: other } = await account('due');
    const due = { ...other, expires_at: Math.floor(Date.now() / 1000) + 5 };
    const manual = client({ auth: { storage: storageWith(s, due), autoRefreshToken: false } });
    const got = await manual.auth.getSession();
    expect(got.data!.session!.refresh_token).not.toBe(other.refresh_token);
    expect(got.data!.session!.expires_at).toBeGreaterThan(Date.now() / 1000 + 60);
  });
});

describe('getUser and updateUser', () => {
  it('changes name and avatar, stores the user, emits USER_UPDATED; another device reads the change from the server', async () => {
    const { addr, c } = await account('profile');
    const other = await signedIn(addr);
    const rec = record(c);
    await rec.until('INITIAL_SESSION');
    const { data, error } = await c.auth.updateUser({ name: 'Ada', avatar: 'https://cdn.example.com/ada.png' });
    expect(error).toBeNull();
    expect(data!.user).toMatchObject({ email: addr, name: 'Ada', avatar: 'https://cdn.example.com/ada.png' });
    await rec.until('USER_UPDATED');
    expect(rec.last('USER_UPDATED')!.session!.user.name).toBe('Ada');
    expect((await c.auth.getSession()).data!.session!.user.name).toBe('Ada');
    expect((await other.c.auth.getUser()).data!.user).toMatchObject({ name: 'Ada', avatar: 'https://cdn.example.com/ada.png' });

    const cleared = await c.auth.updateUser({ avatar: null });
    expect(cleared.data!.user).toMatchObject({ name: 'Ada', avatar: null });
    expect((await c.auth.getUser()).data!.user.avatar).toBeNull();
  });

  it('answers session_missing while signed out, without asking the server', async () => {
    const c = client();
    expect(await c.auth.getUser()).toEqual({ data: null, error: expect.objectContaining({ code: 'session_missing', status: 0 }) });
    expect((await c.auth.updateUser({ name: 'x' })).error).toMatchObject({ code: 'session_missing', status: 0 });
  });

  it('a password change keeps this session, ends the others, and only the new password signs in', async () => {
    const { addr, c } = await account('password');
    const other = await signedIn(addr);
    expect((await c.auth.updateUser({ password: 'short' })).error).toMatchObject({ code: 'weak_password', status: 400 });
    const { error } = await c.auth.updateUser({ password: NEW_PASSWORD });
    expect(error).toBeNull();
    expect((await c.auth.refreshSession()).error).toBeNull();
    expect((await c.auth.getUser()).error).toBeNull();
    expect((await refreshAs(s, other.session)).error?.code).toBe('invalid_refresh_token');
    expect((await client().auth.signIn({ email: addr, password: PASSWORD })).error?.code).toBe('invalid_credentials');
    expect((await client().auth.signIn({ email: addr, password: NEW_PASSWORD })).error).toBeNull();
  });

  it('an email change mails the new address first; email stays until verifyEmail, then the stored user has the new one', async () => {
    const { addr, c } = await account('old');
    const next = email('new');
    const rec = record(c);
    await rec.until('INITIAL_SESSION');
    const evil = await c.auth.updateUser({ email: next, emailRedirectTo: 'https://evil.example.net/x' });
    expect(evil.error).toMatchObject({ code: 'redirect_not_allowed', status: 400 });

    const { data, error } = await c.auth.updateUser({ email: next, emailRedirectTo: `${APP}/email-changed` });
    expect(error).toBeNull();
    expect(data!.user.email).toBe(addr);
    const token = await nextToken(s, next, 'email_change');
    expect(await lastLink(s, next, 'email_change')).toMatch(new RegExp(`^${APP}/email-changed\\?token=`));
    expect((await c.auth.getUser()).data!.user.email).toBe(addr);
    expect((await client().auth.signIn({ email: next, password: PASSWORD })).error?.code).toBe('invalid_credentials');

    const verified = await c.auth.verifyEmail(token);
    expect(verified.error).toBeNull();
    expect(verified.data!.user.email).toBe(next);
    await rec.until('USER_UPDATED', 2);
    expect(rec.last('USER_UPDATED')!.session!.user.email).toBe(next);
    expect((await c.auth.getSession()).data!.session!.user.email).toBe(next);
    expect((await client().auth.signIn({ email: next, password: PASSWORD })).error).toBeNull();
    expect((await client().auth.signIn({ email: addr, password: PASSWORD })).error?.code).toBe('invalid_credentials');
  });
});

describe('resendVerification', () => {
  it('sends a new link (one a minute per address, 429 before), which verifies; unknown emails get the same answer', async () => {
    await withConfirmation(async () => {
      const addr = email('resend');
      const c = client();
      expect((await c.auth.signUp({ email: addr, password: PASSWORD })).error).toBeNull();
      await nextToken(s, addr, 'verification');
      const tooSoon = await c.auth.resendVerification(addr);
      expect(tooSoon.error).toMatchObject({ code: 'rate_limited', status: 429 });

      s.t.clock.advance(61_000);
      expect(await c.auth.resendVerification(addr)).toEqual({ data: null, error: null });
      const token = await nextToken(s, addr, 'verification', 1);
      expect((await c.auth.verifyEmail(token)).data!.user.email_confirmed_at).not.toBeNull();
      expect((await c.auth.signIn({ email: addr, password: PASSWORD })).error).toBeNull();

      const nobody = email('nobody');
      expect(await c.auth.resendVerification(nobody)).toEqual({ data: null, error: null });
      expect(await mailCount(s, nobody, 'verification')).toBe(0);
    });
  });
});

describe('forgotPassword and resetPassword', () => {
  it('resets with the mailed token: PASSWORD_RECOVERY, every session ended, token_invalid on reuse, the new password signs in', async () => {
    const { addr, c: a, session: sa } = await account('reset');
    const b = await signedIn(addr);
    const c = client();
    const rec = record(c);
    expect(await c.auth.forgotPassword(addr)).toEqual({ data: null, error: null });
    const token = await nextToken(s, addr, 'reset');
    expect(await lastLink(s, addr, 'reset')).toMatch(new RegExp(`^${APP}/reset\\?token=`));

    expect((await c.auth.resetPassword(token, 'short')).error).toMatchObject({ code: 'weak_password', status: 400 });
    const { data, error } = await c.auth.resetPassword(token, NEW_PASSWORD);
    expect(error).toBeNull();
    expect(data!.user.email).toBe(addr);
    await rec.until('PASSWORD_RECOVERY');
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'PASSWORD_RECOVERY']);

    expect((await refreshAs(s, sa)).error?.code).toBe('invalid_refresh_token');
    expect((await refreshAs(s, b.session)).error?.code).toBe('invalid_refresh_token');
    expect((await a.auth.getUser()).error?.code).toBe('invalid_token');
    expect((await c.auth.resetPassword(token, 'yet another secret')).error).toMatchObject({ code: 'token_invalid', status: 400 });
    expect((await c.auth.signIn({ email: addr, password: PASSWORD })).error?.code).toBe('invalid_credentials');
    expect((await c.auth.signIn({ email: addr, password: NEW_PASSWORD })).error).toBeNull();
  });

  it('answers an unknown email like a known one, and mails nothing', async () => {
    const nobody = email('nobody');
    expect(await client().auth.forgotPassword(nobody)).toEqual({ data: null, error: null });
    expect(await mailCount(s, nobody, 'reset')).toBe(0);
  });
});

describe('onAuthStateChange', () => {
  it('delivers every event in order, with the session of each, to callbacks that may call the client', async () => {
    const addr = email('events');
    const c = client();
    const rec = record(c);
    const seenByCallback: string[] = [];
    c.auth.onAuthStateChange(async (event) => {
      // Awaiting a client method inside a callback must not deadlock on the SDK's lock.
      if (event === 'SIGNED_IN') seenByCallback.push((await c.auth.getUser()).data?.user.email ?? 'none');
    });
    const up = await c.auth.signUp({ email: addr, password: PASSWORD });
    await c.auth.updateUser({ name: 'Grace' });
    const refreshed = await c.auth.refreshSession();
    await c.auth.signOut();
    const again = await c.auth.signIn({ email: addr, password: PASSWORD });
    await c.auth.signOut({ scope: 'global' });
    await rec.until('SIGNED_OUT', 2);
    expect(rec.names()).toEqual([
      'INITIAL_SESSION',
      'SIGNED_IN',
      'USER_UPDATED',
      'TOKEN_REFRESHED',
      'SIGNED_OUT',
      'SIGNED_IN',
      'SIGNED_OUT',
    ]);
    const sessions = rec.events.map((e) => e.session?.refresh_token ?? null);
    expect(sessions).toEqual([
      null,
      up.data!.session!.refresh_token,
      up.data!.session!.refresh_token,
      refreshed.data!.session.refresh_token,
      null,
      again.data!.session.refresh_token,
      null,
    ]);
    expect(rec.events[2].session!.user.name).toBe('Grace');
    await expect.poll(() => seenByCallback.length).toBe(2);
    // The first callback ran while signed in; the second may see the user or the sign-out that followed.
    expect(seenByCallback[0]).toBe(addr);

    // A subscriber that arrives later first gets INITIAL_SESSION with the current state.
    const { session } = await signedIn(addr);
    const late = clientOf(s, { auth: { storage: storageWith(s, session) } });
    track(late);
    const lateRec = record(late);
    await lateRec.until('INITIAL_SESSION');
    expect(lateRec.events[0].session!.refresh_token).toBe(session.refresh_token);
  });
});
