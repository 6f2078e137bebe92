import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Console admins (docs/api.md §4.1): setup link, login, cookie, CSRF rule, sessions' lifetime.

const PASSWORD = 'a long admin passphrase';
const OWN = 'http://localhost:8080'; // the harness's PUBLIC_URL
let t: TestServer;

beforeAll(async () => {
  t = await createTestServer({ AUTH_RATE_SIGNIN_EMAIL: '4/900', AUTH_RATE_SIGNIN_IP: '1000/900' });
});
afterAll(async () => {
  await t?.stop();
});

const cookieOf = (setCookie: string | string[] | undefined) => String(setCookie).match(/plinth_admin=([^;]*)/)?.[1] ?? '';
const SAME_ORIGIN = { 'x-plinth-admin': '1', origin: OWN, 'sec-fetch-site': 'same-origin' };

async function signedIn(email: string): Promise<string> {
  await t.admin.admins.upsert(email, PASSWORD);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { email, password: PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  return cookieOf(res.headers['set-cookie']);
}

describe('first admin from the setup link', () => {
  it('a start with no admin has a setup token; the link makes one admin and its session; the link works once', async () => {
    const fresh = await createTestServer();
    try {
      const token = fresh.admin.setupToken;
      expect(token).toMatch(/^[\w-]{43}$/);
      const stored = await fresh.db.query<{ hash: string }>('select hash from plinth.admin_setup_tokens');
      expect(stored.rows.map((r) => r.hash)).not.toContain(token); // only its hash

      // The setup page asks first whether its link is usable; asking does not use it.
      const check = async (t: string | null) =>
        (await fresh.app.inject({ method: 'POST', url: '/api/v1/admin/setup/check', payload: { token: t } })).json();
      expect(await check(token)).toEqual({ usable: true });
      expect(await check(token)).toEqual({ usable: true });
      expect(await check(`${String(token).slice(0, -1)}x`)).toEqual({ usable: false });
      const foreign = await fresh.app.inject({
        method: 'POST',
        url: '/api/v1/admin/setup/check',
        headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
        payload: { token },
      });
      expect([foreign.statusCode, foreign.json().code]).toEqual([403, 'csrf_rejected']);

      const weak = await fresh.app.inject({
        method: 'POST',
        url: '/api/v1/admin/setup',
        payload: { token, email: 'ops@example.com', password: 'short' },
      });
      expect([weak.statusCode, weak.json().code]).toEqual([400, 'weak_password']);

      // Two browsers racing on one link: exactly one admin.
      const [a, b] = await Promise.all(
        ['a@example.com', 'b@example.com'].map((email) =>
          fresh.app.inject({ method: 'POST', url: '/api/v1/admin/setup', payload: { token, email, password: PASSWORD } }),
        ),
      );
      expect([a.statusCode, b.statusCode].sort()).toEqual([200, 400]);
      const loser = a.statusCode === 400 ? a : b;
      expect(loser.json().code).toBe('setup_link_invalid');
      const admins = await fresh.db.query('select email from plinth.admins');
      expect(admins.rows).toHaveLength(1);

      const winner = a.statusCode === 200 ? a : b;
      const setCookie = String(winner.headers['set-cookie']);
      expect(setCookie).toMatch(/^plinth_admin=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800$/);
      const me = await fresh.app.inject({
        url: '/api/v1/admin/me',
        headers: { cookie: `plinth_admin=${cookieOf(setCookie)}`, 'x-plinth-admin': '1' },
      });
      expect(me.json().admin.email).toBe(admins.rows[0].email);

      const again = await fresh.app.inject({
        method: 'POST',
        url: '/api/v1/admin/setup',
        payload: { token, email: 'c@example.com', password: PASSWORD },
      });
      expect([again.statusCode, again.json().code]).toEqual([400, 'setup_link_invalid']);
      expect(await check(token)).toEqual({ usable: false });
    } finally {
      await fresh.stop();
    }
  });

  it('ADMIN_EMAIL and ADMIN_PASSWORD make that admin at start, with no setup link; a https PUBLIC_URL makes the cookie Secure', async () => {
    const s = await createTestServer({
      ADMIN_EMAIL: 'Boss@Example.com',
      ADMIN_PASSWORD: PASSWORD,
      PUBLIC_URL: 'https://console.example.com',
    });
    try {
      expect(s.admin.setupToken).toBeNull();
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/admin/login',
        payload: { email: 'boss@example.com', password: PASSWORD },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure$/);
    } finally {
      await s.stop();
    }
  });

  it('refuses half of the pair and a short ADMIN_PASSWORD at start, naming the variable', async () => {
    await expect(createTestServer({ ADMIN_EMAIL: 'ops@example.com' })).rejects.toThrow(
      /^config: ADMIN_EMAIL and ADMIN_PASSWORD go together/,
    );
    await expect(createTestServer({ ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'too short' })).rejects.toThrow(
      /^config: ADMIN_PASSWORD must be 12 to 128/,
    );
  });
});

describe('login, me, keys, logout', () => {
  it('answers the same for an unknown email and a wrong password, then rate-limits (429 Retry-After)', async () => {
    await t.admin.admins.upsert('known@example.com', PASSWORD);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/login',
      payload: { email: 'nobody@example.com', password: PASSWORD },
    });
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/login',
      payload: { email: 'known@example.com', password: 'wrong password!!' },
    });
    expect([unknown.statusCode, unknown.json()]).toEqual([wrong.statusCode, wrong.json()]);
    expect(wrong.json()).toEqual({ code: 'invalid_credentials', message: 'The email or password is wrong.' });
    for (let i = 0; i < 3; i++) {
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/admin/login',
        payload: { email: 'known@example.com', password: 'wrong password!!' },
      });
    }
    const limited = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/login',
      payload: { email: 'known@example.com', password: PASSWORD },
    });
    expect([limited.statusCode, limited.json().code]).toEqual([429, 'rate_limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('me and keys need the cookie (not the secret key); logout ends the session and clears the cookie', async () => {
    const cookie = await signedIn('keys@example.com');
    const keys = await t.app.inject({ url: '/api/v1/admin/keys', headers: { cookie: `plinth_admin=${cookie}`, 'x-plinth-admin': '1' } });
    expect(keys.json()).toEqual({ public_key: t.keys.publicKey, secret_key: t.keys.secretKey });
    expect(keys.headers['cache-control']).toBe('no-store');
    const withKey = await t.app.inject({ url: '/api/v1/admin/keys', headers: t.as.service });
    expect(withKey.statusCode).toBe(401);

    const noHeader = await t.app.inject({ method: 'POST', url: '/api/v1/admin/logout', headers: { cookie: `plinth_admin=${cookie}` } });
    expect([noHeader.statusCode, noHeader.json().code]).toEqual([403, 'csrf_rejected']);
    const out = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/logout',
      headers: { cookie: `plinth_admin=${cookie}`, ...SAME_ORIGIN },
    });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^plinth_admin=; .*Max-Age=0/);
    const me = await t.app.inject({ url: '/api/v1/admin/me', headers: { cookie: `plinth_admin=${cookie}`, 'x-plinth-admin': '1' } });
    expect(me.statusCode).toBe(401);
  });

  it('a session ends after 12 idle hours, and after 7 days however busy', async () => {
    const cookie = await signedIn('idle@example.com');
    const me = () => t.app.inject({ url: '/api/v1/admin/me', headers: { cookie: `plinth_admin=${cookie}`, 'x-plinth-admin': '1' } });
    t.clock.advance(11 * 3600_000);
    expect((await me()).statusCode).toBe(200);
    t.clock.advance(11 * 3600_000); // 22 h after sign-in, 11 h after the last use
    expect((await me()).statusCode).toBe(200);
    t.clock.advance(12 * 3600_000 + 1000);
    expect((await me()).statusCode).toBe(401);

    const busy = await signedIn('busy@example.com');
    const use = () => t.app.inject({ url: '/api/v1/admin/me', headers: { cookie: `plinth_admin=${busy}`, 'x-plinth-admin': '1' } });
    for (let h = 0; h < 7 * 24 - 10; h += 10) {
      t.clock.advance(10 * 3600_000);
      expect((await use()).statusCode).toBe(200);
    }
    t.clock.advance(10 * 3600_000);
    expect((await use()).statusCode).toBe(401);
  });
});

describe('the management guard: secret key or cookie, and the CSRF rule of §6', () => {
  const patch = (headers: Record<string, string>, payload: unknown = { name: 'Renamed' }, contentType = 'application/json') =>
    t.app.inject({
      method: 'PATCH',
      url: '/api/v1/project',
      headers: { 'content-type': contentType, ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  it.each([
    ['no X-Plinth-Admin header', 403, {}],
    ['another port of the same host', 403, { 'x-plinth-admin': '1', origin: 'http://localhost:3000' }],
    ['a same-site page (Sec-Fetch-Site)', 403, { 'x-plinth-admin': '1', 'sec-fetch-site': 'same-site' }],
    ['a cross-site page', 403, { 'x-plinth-admin': '1', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['the X-Plinth-Admin header with another value', 403, { 'x-plinth-admin': 'true', origin: OWN }],
    ['the console (all three right)', 200, SAME_ORIGIN],
    ['a non-browser client (header, no Origin, no Sec-Fetch-Site)', 200, { 'x-plinth-admin': '1' }],
  ])('a change with the cookie from %s → %i', async (_name, status, headers) => {
    const cookie = await signedIn('csrf@example.com');
    const res = await patch({ cookie: `plinth_admin=${cookie}`, ...headers });
    expect(res.statusCode, res.body).toBe(status);
    if (status === 403) expect(res.json().code).toBe('csrf_rejected');
  });

  it('refuses a cross-site form post as csrf_rejected before reading its body', async () => {
    const cookie = await signedIn('form@example.com');
    const res = await patch(
      { cookie: `plinth_admin=${cookie}`, origin: 'http://localhost:3000' },
      'name=x',
      'application/x-www-form-urlencoded',
    );
    expect([res.statusCode, res.json().code]).toEqual([403, 'csrf_rejected']);
  });

  it('reads need the header too (review round 3, R12), whatever their Origin; the secret key needs none; other callers are refused', async () => {
    const cookie = await signedIn('reader@example.com');
    const read = (headers: Record<string, string>) =>
      t.app.inject({ url: '/api/v1/project', headers: { cookie: `plinth_admin=${cookie}`, origin: 'http://localhost:3000', ...headers } });
    expect((await read({})).json().code).toBe('csrf_rejected');
    expect((await read({ 'x-plinth-admin': '1' })).statusCode).toBe(200);
    expect((await patch(t.as.service)).statusCode).toBe(200);
    // The console's SDK sends an empty apikey; the cookie still counts.
    expect((await patch({ cookie: `plinth_admin=${cookie}`, apikey: '', ...SAME_ORIGIN })).statusCode).toBe(200);
    const anon = await patch(t.as.anon);
    expect([anon.statusCode, anon.json().code]).toEqual([403, 'forbidden']);
    const nobody = await patch({});
    expect([nobody.statusCode, nobody.json().code]).toEqual([401, 'unauthorized']);
    const stale = await patch({ cookie: 'plinth_admin=not-a-session-of-this-server-at-all', ...SAME_ORIGIN });
    expect([stale.statusCode, stale.json().code]).toEqual([401, 'unauthorized']);
  });

  it('never sends Access-Control-Allow-Credentials on management answers, and does not let X-Plinth-Admin through a preflight', async () => {
    await t.settings.updateAuth({ cors_origins: ['http://localhost:*'] });
    const cookie = await signedIn('cors@example.com');
    const read = await t.app.inject({
      url: '/api/v1/settings/auth',
      headers: { cookie: `plinth_admin=${cookie}`, origin: 'http://localhost:3000' },
    });
    expect(read.headers['access-control-allow-origin']).toBe('http://localhost:3000');
    expect(read.headers['access-control-allow-credentials']).toBeUndefined();
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/project',
      headers: {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'x-plinth-admin',
      },
    });
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    expect(String(preflight.headers['access-control-allow-headers'] ?? '')).not.toMatch(/x-plinth-admin/i);
  });

  it('login and setup from another origin are refused', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/login',
      headers: { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-site' },
      payload: { email: 'x@example.com', password: PASSWORD },
    });
    expect([res.statusCode, res.json().code]).toEqual([403, 'csrf_rejected']);
  });
});

describe('the console page', () => {
  it('is served at /console/ with a strict CSP and a relative base for nested pages', async () => {
    const root = await t.app.inject({ url: '/console' });
    expect([root.statusCode, root.headers.location]).toEqual([302, 'console/']);
    const page = await t.app.inject({ url: '/console/api/todos' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(page.body).toContain('<base href="../">');
    expect(page.body).not.toMatch(/src="\//); // assets are relative
  });
});
