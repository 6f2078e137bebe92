import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastToken, mailsTo, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

// Magic links end to end: the request, the real email in an SMTP sink, the link's token.
const PAGE = 'https://app.example.com/auth/magic';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, {
    allowed_redirect_urls: ['https://app.example.com/auth', 'https://other.example.com/welcome'],
    magic_link_url: PAGE,
    magic_link_enabled: true,
  });
});
afterAll(() => t?.stop());

const request = (addr: string, extra: Record<string, unknown> = {}) => call(t, 'POST', 'request-magic-link', { email: addr, ...extra });
const signInWith = (token: string) => call(t, 'POST', 'signin-magic-link', { token });

async function linkFor(addr: string): Promise<string> {
  const res = await request(addr);
  expect(res.statusCode, res.body).toBe(200);
  return lastToken(t, addr, 'magic_link');
}

describe('request-magic-link', () => {
  it('mails a link to magic_link_url?token= with 32 random bytes, and answers {} for a new address', async () => {
    const addr = email('new');
    const res = await request(addr);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const mails = await mailsTo(t, addr);
    expect(mails).toHaveLength(1);
    expect(mails[0].kind).toBe('magic_link');
    const link = new URL(mails[0].link);
    expect(`${link.origin}${link.pathname}`).toBe(PAGE);
    expect(Buffer.from(link.searchParams.get('token') ?? '', 'base64url')).toHaveLength(32);
    const subject = t.mail!.received.find((m) => m.to.includes(addr))?.subject;
    expect(subject).toBe('Your Plinth project sign-in link');
  });

  it('answers known and unknown addresses alike', async () => {
    const known = email('known');
    await signUp(t, known);
    const a = await request(known);
    const b = await request(email('unknown'));
    expect([a.statusCode, a.body]).toEqual([b.statusCode, b.body]);
  });

  it('allows one email a minute per address (429 with Retry-After), for unknown addresses too', async () => {
    const addr = email('limit');
    expect((await request(addr)).statusCode).toBe(200);
    const again = await request(addr);
    expect(code(again)).toEqual([429, 'rate_limited']);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    expect(await mailsTo(t, addr)).toHaveLength(1);
    t.clock.advance(61_000);
    expect((await request(addr)).statusCode).toBe(200);
  });

  it('sends the link to an allowed emailRedirectTo, and refuses one outside the allowlist', async () => {
    const addr = email('redirect');
    expect((await request(addr, { emailRedirectTo: 'https://other.example.com/welcome/magic' })).statusCode).toBe(200);
    expect((await mailsTo(t, addr))[0].link.startsWith('https://other.example.com/welcome/magic?token=')).toBe(true);
    for (const bad of ['https://other.example.com/welcomex', 'https://evil.example.com/', 'javascript:alert(1)']) {
      expect(code(await request(email('bad'), { emailRedirectTo: bad })), bad).toEqual([400, 'redirect_not_allowed']);
    }
  });

  it.each([
    [{ email: 'not an email' }, 400, 'invalid_email'],
    [{}, 400, 'invalid_request'],
    [{ email: 42 }, 400, 'invalid_request'],
  ])('%j → %i %s', async (body, status, errorCode) => {
    expect(code(await call(t, 'POST', 'request-magic-link', body))).toEqual([status, errorCode]);
  });
});

describe('signin-magic-link', () => {
  it('a link for an unknown address makes the user, confirms the email and signs in', async () => {
    const addr = email('fresh');
    const token = await linkFor(addr);
    const res = await signInWith(token);
    expect(res.statusCode, res.body).toBe(200);
    const session = res.json();
    expect(session).toMatchObject({ token_type: 'bearer', expires_in: 3600, user: { email: addr, phone: null } });
    expect(session.user.email_confirmed_at).toMatch(/Z$/);
    expect(session.user.identities).toMatchObject([{ provider: 'email', email: addr }]);
    expect(typeof session.refresh_token).toBe('string');
    const me = await call(t, 'GET', 'user', undefined, asUser(t, session.access_token));
    expect(me.json().id).toBe(session.user.id);
    // A second link for the same address signs the same user in.
    t.clock.advance(61_000);
    const again = await signInWith(await linkFor(addr));
    expect(again.json().user.id).toBe(session.user.id);
  });

  it('a link works once: a second use, an unknown token and an expired one answer 401 magic_link_invalid', async () => {
    const addr = email('once');
    const token = await linkFor(addr);
    expect((await signInWith(token)).statusCode).toBe(200);
    expect(code(await signInWith(token))).toEqual([401, 'magic_link_invalid']);
    expect(code(await signInWith('x'.repeat(43)))).toEqual([401, 'magic_link_invalid']);
    expect(code(await signInWith(''))).toEqual([401, 'magic_link_invalid']);

    const late = email('late');
    const lateToken = await linkFor(late);
    t.clock.advance(15 * 60_000 - 1000);
    t.clock.advance(1001);
    expect(code(await signInWith(lateToken))).toEqual([401, 'magic_link_invalid']);
  });

  it('is still valid just before 15 minutes', async () => {
    const addr = email('in-time');
    const token = await linkFor(addr);
    t.clock.advance(15 * 60_000 - 1000);
    expect((await signInWith(token)).statusCode).toBe(200);
  });

  it('a fresh link voids the earlier one', async () => {
    const addr = email('fresh-link');
    const first = await linkFor(addr);
    t.clock.advance(61_000);
    const second = await linkFor(addr);
    expect(code(await signInWith(first))).toEqual([401, 'magic_link_invalid']);
    expect((await signInWith(second)).statusCode).toBe(200);
  });

  it('two simultaneous sign-ins with one token give exactly one session', async () => {
    const addr = email('race');
    const token = await linkFor(addr);
    const results = await Promise.all(Array.from({ length: 4 }, () => signInWith(token)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
    const { rows } = await t.db.query<{ n: number }>(
      'select count(*)::int as n from auth.sessions s join auth.users u on u.id = s.user_id where u.email = $1',
      [addr],
    );
    expect(rows[0].n).toBe(1);
  });

  it('confirms an unconfirmed password account, drops the password set before and ends its sessions', async () => {
    const addr = email('prehijack');
    const { session: squatter } = await signUp(t, addr, 'password of a squatter');
    expect(squatter.user.email_confirmed_at).toBeNull();
    const res = await signInWith(await linkFor(addr));
    expect(res.statusCode).toBe(200);
    expect(res.json().user.id).toBe(squatter.user.id);
    expect(res.json().user.email_confirmed_at).toMatch(/Z$/);
    expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'password of a squatter' }))).toEqual([
      400,
      'invalid_credentials',
    ]);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: squatter.refresh_token }))[0]).toBe(401);
    // The owner, signed in by the link, keeps the session and can set a password of their own.
    const own = res.json();
    expect((await call(t, 'PATCH', 'user', { password: 'owner chose this one' }, asUser(t, own.access_token))).statusCode).toBe(200);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'owner chose this one' })).statusCode).toBe(200);
  });

  it('keeps the password of an account whose email was already confirmed', async () => {
    const addr = email('confirmed');
    const { user } = await signUp(t, addr);
    await t.sql(`update users set email_confirmed_at = now() where id = '${user.id}'`);
    expect((await signInWith(await linkFor(addr))).statusCode).toBe(200);
    expect((await signIn(t, addr)).user.email).toBe(addr);
  });

  it('a link for an address the account no longer has does not sign in', async () => {
    const addr = email('moved');
    const { session } = await signUp(t, addr);
    const token = await linkFor(addr);
    await t.sql(`update users set email = 'moved-${Date.now()}@example.com' where id = '${session.user.id}'`);
    expect(code(await signInWith(token))).toEqual([401, 'magic_link_invalid']);
  });

  it('only the SHA-256 of the token is stored, and the outbox keeps no copy once sent', async () => {
    const addr = email('hashed');
    const token = await linkFor(addr);
    const { rows } = await t.db.query<{ n: number }>(
      `select (select count(*) from auth.one_time_tokens where hash = $1 or payload::text like '%' || $1 || '%')::int
        + (select count(*) from plinth.outbox where payload::text like '%' || $1 || '%')::int as n`,
      [token],
    );
    expect(rows[0].n).toBe(0);
    const hashed = await t.db.query<{ n: number }>(
      `select count(*)::int as n from auth.one_time_tokens where hash = encode(sha256(convert_to($1, 'UTF8')), 'hex') and kind = 'magic_link'`,
      [token],
    );
    expect(hashed.rows[0].n).toBe(1);
  });
});

describe('switched off', () => {
  it('answers 403 provider_disabled on both endpoints; email and password keep working beside it', async () => {
    const addr = email('off');
    const token = await linkFor(addr);
    await setAuth(t, { magic_link_enabled: false });
    try {
      expect(code(await request(email('off2')))).toEqual([403, 'provider_disabled']);
      expect(code(await signInWith(token))).toEqual([403, 'provider_disabled']);
      const pw = email('pw');
      await signUp(t, pw);
      expect((await signIn(t, pw)).user.email).toBe(pw);
    } finally {
      await setAuth(t, { magic_link_enabled: true });
    }
    expect((await signInWith(token)).statusCode).toBe(200);
  });

  it('cannot be switched on without a magic_link_url', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings/auth',
      headers: t.as.service,
      payload: { magic_link_url: null },
    });
    expect(code(res)).toEqual([400, 'invalid_settings']);
    expect(res.json().details).toContainEqual({ field: 'magic_link_url', message: 'is required when magic_link_enabled is on' });
  });
});
