import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, code, createAuthServer, email, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
});
afterAll(() => t?.stop());

describe('sign-up (confirmation off)', () => {
  it('creates the user and answers {user, session} with the §4 shapes and claims', async () => {
    const addr = email('new');
    const res = await call(t, 'POST', 'signup', {
      email: `  ${addr.toUpperCase()} `,
      password: 'correct horse battery',
      data: { plan: 'x' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { user, session } = res.json();
    expect(Object.keys(user).sort()).toEqual(
      [
        'avatar',
        'created_at',
        'email',
        'email_confirmed_at',
        'id',
        'identities',
        'last_sign_in_at',
        'name',
        'phone',
        'phone_confirmed_at',
        'updated_at',
      ].sort(),
    );
    expect(user).toMatchObject({ email: addr, email_confirmed_at: null, phone: null, name: null, avatar: null });
    expect(user.identities).toEqual([{ provider: 'email', email: addr, created_at: user.created_at }]);
    expect(user.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(user.last_sign_in_at).toBe(user.created_at); // sign-up signs in
    expect(Object.keys(session).sort()).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'next_aal',
      'refresh_token',
      'token_type',
      'user',
    ]);
    expect(session).toMatchObject({ token_type: 'bearer', expires_in: 3600, next_aal: 'aal1' });
    expect(session.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const claims = decodeJwt(session.access_token);
    expect(decodeProtectedHeader(session.access_token)).toMatchObject({ alg: 'ES256', kid: expect.any(String) });
    expect(claims).toMatchObject({
      sub: user.id,
      role: 'authenticated',
      aud: 'authenticated',
      iss: 'http://localhost:8080/v1/auth',
      email: addr,
      aal: 'aal1',
      amr: [{ method: 'password', timestamp: expect.any(Number) }],
    });
    // A user without a phone has no phone claim (docs/api.md §4; GoTrue's clients type it a string).
    expect(claims).not.toHaveProperty('phone');
    expect(claims.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
    expect(session.expires_at).toBe(claims.exp);
  });

  it('records the session with user agent and IP', async () => {
    const { session } = await signUp(t, email());
    const sid = decodeJwt(session.access_token).session_id as string;
    const { rows } = await t.db.query<{ user_agent: string; ip: string; revoked_at: string | null }>(
      'select user_agent, ip, revoked_at from auth.sessions where id = $1',
      [sid],
    );
    expect(rows[0]).toMatchObject({ user_agent: 'vitest-agent', ip: '127.0.0.1', revoked_at: null });
  });

  it('signs access tokens for session_duration_seconds', async () => {
    await setAuth(t, { session_duration_seconds: 7200 });
    try {
      const { session } = await signUp(t, email());
      const claims = decodeJwt(session.access_token);
      expect([session.expires_in, (claims.exp ?? 0) - (claims.iat ?? 0)]).toEqual([7200, 7200]);
    } finally {
      await setAuth(t, { session_duration_seconds: 3600 });
    }
  });

  const taken = email('taken');
  it.each<[string, () => unknown, number, string]>([
    ['a malformed email', () => ({ email: 'not-an-email', password: 'correct horse battery' }), 400, 'invalid_email'],
    ['an email with a space', () => ({ email: 'a b@example.com', password: 'correct horse battery' }), 400, 'invalid_email'],
    ['a 7-character password', () => ({ email: email(), password: '1234567' }), 400, 'weak_password'],
    ['a 129-character password', () => ({ email: email(), password: 'x'.repeat(129) }), 400, 'weak_password'],
    [
      'a taken email, differently cased',
      () => ({ email: ` ${taken.toUpperCase()}`, password: 'correct horse battery' }),
      409,
      'email_exists',
    ],
    [
      'an emailRedirectTo outside the allowlist',
      () => ({ email: email(), password: 'correct horse battery', emailRedirectTo: 'https://evil.example/cb' }),
      400,
      'redirect_not_allowed',
    ],
    ['no password', () => ({ email: email() }), 400, 'invalid_request'],
  ])('refuses %s', async (_name, body, status, errorCode) => {
    await signUp(t, taken).catch(() => undefined);
    const res = await call(t, 'POST', 'signup', body());
    expect(code(res)).toEqual([status, errorCode]);
    expect(res.json().message).toEqual(expect.any(String));
  });

  it('accepts exactly 128 characters and counts characters, not bytes', async () => {
    expect((await call(t, 'POST', 'signup', { email: email(), password: 'x'.repeat(128) })).statusCode).toBe(200);
    expect((await call(t, 'POST', 'signup', { email: email(), password: 'é'.repeat(8) })).statusCode).toBe(200);
  });

  it('follows min_password_length', async () => {
    await setAuth(t, { min_password_length: 12 });
    try {
      expect(code(await call(t, 'POST', 'signup', { email: email(), password: '12345678901' }))).toEqual([400, 'weak_password']);
      expect((await call(t, 'POST', 'signup', { email: email(), password: '123456789012' })).statusCode).toBe(200);
    } finally {
      await setAuth(t, { min_password_length: 8 });
    }
  });

  it('needs the project key', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      payload: { email: email(), password: 'correct horse battery' },
    });
    expect(code(res)).toEqual([401, 'unauthorized']);
  });

  it('stores an argon2id hash with the OWASP parameters, not the password', async () => {
    const addr = email();
    await signUp(t, addr, 'a very secret one');
    const { rows } = await t.db.query<{ hash: string }>(
      'select p.hash from auth.passwords p join auth.users u on u.id = p.user_id where u.email = $1',
      [addr],
    );
    expect(rows[0].hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(rows[0].hash).not.toContain('a very secret one');
  });
});

describe('sign-in', () => {
  const addr = email('signin');
  beforeAll(() => signUp(t, addr));

  it('answers a session for the right password, the email trimmed and lowercased', async () => {
    const session = await signIn(t, `  ${addr.toUpperCase()}  `);
    expect(session.user.email).toBe(addr);
    expect(decodeJwt(session.access_token).sub).toBe(session.user.id);
  });

  it('opens one session per sign-in', async () => {
    const a = await signIn(t, addr);
    const b = await signIn(t, addr);
    expect(decodeJwt(a.access_token).session_id).not.toBe(decodeJwt(b.access_token).session_id);
    expect(a.refresh_token).not.toBe(b.refresh_token);
  });

  it('answers the same for a wrong password and an unknown email', async () => {
    const wrong = await call(t, 'POST', 'signin', { email: addr, password: 'wrong password!' });
    const unknown = await call(t, 'POST', 'signin', { email: email('nobody'), password: 'wrong password!' });
    expect(code(wrong)).toEqual([400, 'invalid_credentials']);
    expect(wrong.body).toBe(unknown.body);
  });

  it('runs the password hasher for an unknown email too (timing equalisation)', async () => {
    const verify = vi.spyOn(t.auth.hasher, 'verify');
    try {
      await call(t, 'POST', 'signin', { email: email('ghost'), password: 'whatever it is' });
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls[0][0]).toBe(await t.auth.hasher.dummyHash());
      await call(t, 'POST', 'signin', { email: addr, password: 'whatever it is' });
      expect(verify).toHaveBeenCalledTimes(2);
      expect(verify.mock.calls[1][0]).not.toBe(await t.auth.hasher.dummyHash());
    } finally {
      verify.mockRestore();
    }
  });

  it('refuses a malformed email with invalid_email and a missing field with invalid_request', async () => {
    expect(code(await call(t, 'POST', 'signin', { email: 'nope', password: 'x' }))).toEqual([400, 'invalid_email']);
    expect(code(await call(t, 'POST', 'signin', { email: addr }))).toEqual([400, 'invalid_request']);
  });

  it('answers 403 provider_disabled while email and password is off', async () => {
    await setAuth(t, { email_password_enabled: false });
    try {
      expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' }))).toEqual([403, 'provider_disabled']);
      expect(code(await call(t, 'POST', 'signup', { email: email(), password: 'correct horse battery' }))).toEqual([
        403,
        'provider_disabled',
      ]);
      // Password recovery is part of the method: off too.
      expect(code(await call(t, 'POST', 'forgot-password', { email: addr }))).toEqual([403, 'provider_disabled']);
      expect(code(await call(t, 'POST', 'reset-password', { token: 'x'.repeat(43), password: 'a new password' }))).toEqual([
        403,
        'provider_disabled',
      ]);
    } finally {
      await setAuth(t, { email_password_enabled: true });
    }
  });
});

describe('rate limits', () => {
  let r: TestServer;
  beforeAll(async () => {
    r = await createAuthServer({ AUTH_RATE_SIGNIN_EMAIL: '3/900', AUTH_RATE_SIGNIN_IP: '5/900' });
  });
  afterAll(() => r?.stop());

  it('sign-in failures per email: 429 rate_limited with Retry-After, the right password included, until the window ends', async () => {
    const addr = email('limited');
    await signUp(r, addr);
    for (let i = 0; i < 3; i++)
      expect(code(await call(r, 'POST', 'signin', { email: addr, password: 'wrong wrong' }))).toEqual([400, 'invalid_credentials']);
    const limited = await call(r, 'POST', 'signin', { email: addr, password: 'correct horse battery' });
    expect(code(limited)).toEqual([429, 'rate_limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    r.clock.advance(900_000);
    expect((await call(r, 'POST', 'signin', { email: addr, password: 'correct horse battery' })).statusCode).toBe(200);
  });

  it('counts unknown emails like known ones (a 429 reveals nothing)', async () => {
    r.clock.advance(900_000);
    const ghost = email('ghost');
    for (let i = 0; i < 3; i++) await call(r, 'POST', 'signin', { email: ghost, password: 'wrong wrong' });
    expect(code(await call(r, 'POST', 'signin', { email: ghost, password: 'wrong wrong' }))).toEqual([429, 'rate_limited']);
  });

  it('sign-in failures per IP, across emails', async () => {
    r.clock.advance(900_000);
    for (let i = 0; i < 5; i++) await call(r, 'POST', 'signin', { email: email('spray'), password: 'wrong wrong' });
    const res = await call(r, 'POST', 'signin', { email: email('spray'), password: 'wrong wrong' });
    expect(code(res)).toEqual([429, 'rate_limited']);
    const other = await r.app.inject({
      method: 'POST',
      url: '/v1/auth/signin',
      remoteAddress: '203.0.113.9',
      headers: r.as.anon,
      payload: { email: email('spray'), password: 'wrong wrong' },
    });
    expect(code(other)).toEqual([400, 'invalid_credentials']);
    // A client cannot pick another IP by writing X-Forwarded-For (no proxy is trusted by default).
    const spoofed = await call(
      r,
      'POST',
      'signin',
      { email: email('spray'), password: 'wrong wrong' },
      { 'x-forwarded-for': '203.0.113.10' },
    );
    expect(code(spoofed)).toEqual([429, 'rate_limited']);
  });

  it('requests per IP on /v1/auth (@fastify/rate-limit)', async () => {
    const s = await createTestServer4();
    try {
      for (let i = 0; i < 4; i++) expect((await call(s, 'POST', 'resend-verification', { email: email() })).statusCode).toBe(200);
      const res = await call(s, 'POST', 'resend-verification', { email: email() });
      expect(code(res)).toEqual([429, 'rate_limited']);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      // Only /v1/auth is limited.
      expect((await s.app.inject({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

function createTestServer4() {
  return createAuthServer({ AUTH_RATE_REQUESTS_IP: '4/60' });
}
