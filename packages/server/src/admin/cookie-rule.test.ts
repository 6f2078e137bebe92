import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Issue 19, the console cookie's rule (http/console.ts): a page on another port of the same host
// must not make an admin's browser load private objects or management answers with the
// cookie, GET included; an Origin counts as the server's only for PUBLIC_URL's host or a
// loopback name, never for whatever Host the request names; console sign-in failures are
// counted per (email, IP), so a guesser elsewhere does not lock the admin out.

const PASSWORD = 'a long admin passphrase';
let t: TestServer;
let cookie = '';

beforeAll(async () => {
  t = await createTestServer({ AUTH_RATE_SIGNIN_EMAIL: '3/900', AUTH_RATE_SIGNIN_EMAIL_ALL: '6/900', AUTH_RATE_SIGNIN_IP: '1000/900' });
  await t.admin.admins.upsert('ops@example.com', PASSWORD);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { email: 'ops@example.com', password: PASSWORD } });
  cookie = `plinth_admin=${String(res.headers['set-cookie']).match(/plinth_admin=([^;]*)/)?.[1]}`;
  await t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: t.as.service, payload: { name: 'private' } });
  const up = await t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/object/private/payroll.csv',
    headers: { ...t.as.service, 'content-type': 'text/csv' },
    payload: 'name,salary',
  });
  expect(up.statusCode, up.body).toBe(201);
});
afterAll(() => t?.stop());

const get = (url: string, headers: Record<string, string>) => t.app.inject({ url, headers: { cookie, ...headers } });

describe('reads with the cookie', () => {
  it.each([
    ['an <img> on another port of the same host (same-site)', { 'sec-fetch-site': 'same-site', 'sec-fetch-dest': 'image' }],
    ['a <script> on another site (cross-site)', { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'script' }],
  ])('are refused from %s: objects, management answers and the keys', async (_from, headers) => {
    for (const url of [
      '/api/v1/storage/object/private/payroll.csv',
      '/api/v1/users',
      '/api/v1/admin/keys',
      '/api/v1/storage/object/private',
    ]) {
      const res = await get(url, headers);
      expect([res.statusCode, res.json().code], url).toEqual([403, 'csrf_rejected']);
      expect(res.body).not.toContain('salary');
    }
  });

  it.each([
    ['the console itself (same-origin)', { 'sec-fetch-site': 'same-origin', 'x-plinth-admin': '1' }],
    ['a client that sends no Sec-Fetch-Site (curl, an older browser)', { 'x-plinth-admin': '1' }],
  ])('are served from %s with X-Plinth-Admin: 1', async (_from, headers) => {
    const res = await get('/api/v1/storage/object/private/payroll.csv', headers);
    expect([res.statusCode, res.body]).toEqual([200, 'name,salary']);
    expect((await get('/api/v1/users', headers)).statusCode).toBe(200);
  });

  it('a key sent with the request still decides: the secret key is not held to the cookie’s rule', async () => {
    const res = await t.app.inject({
      url: '/api/v1/storage/object/private/payroll.csv',
      headers: { ...t.as.service, 'sec-fetch-site': 'cross-site' },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('the Origin of a change made with the cookie', () => {
  const patch = (headers: Record<string, string>) =>
    t.app.inject({
      method: 'PATCH',
      url: '/api/v1/project',
      headers: { cookie, 'x-plinth-admin': '1', 'content-type': 'application/json', ...headers },
      payload: { name: 'Renamed' },
    });

  it('is not trusted for a Host the request names (a DNS-rebound name points another site at this server)', async () => {
    const res = await patch({ host: 'attacker.example:8080', origin: 'http://attacker.example:8080' });
    expect([res.statusCode, res.json().code]).toEqual([403, 'csrf_rejected']);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/login',
      headers: { host: 'attacker.example:8080', origin: 'http://attacker.example:8080' },
      payload: { email: 'ops@example.com', password: PASSWORD },
    });
    expect([login.statusCode, login.json().code]).toEqual([403, 'csrf_rejected']);
  });

  it('is trusted for PUBLIC_URL, and for a loopback name the request was addressed to', async () => {
    expect((await patch({ origin: 'http://localhost:8080' })).statusCode).toBe(200);
    expect((await patch({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' })).statusCode).toBe(200);
    expect((await patch({ host: '[::1]:8080', origin: 'http://[::1]:8080' })).statusCode).toBe(200);
    // A loopback Origin the request was not addressed to is another page.
    expect((await patch({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:3000' })).statusCode).toBe(403);
  });
});

describe('console sign-in failures', () => {
  const login = (email: string, password: string, ip: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/admin/login', remoteAddress: ip, payload: { email, password } });

  it('are counted per (email, IP): a guesser elsewhere does not lock the admin out; a higher ceiling per email holds', async () => {
    await t.admin.admins.upsert('target@example.com', PASSWORD);
    for (let i = 0; i < 3; i++)
      expect((await login('target@example.com', 'wrong password!!', '198.51.100.7')).json().code).toBe('invalid_credentials');
    expect((await login('target@example.com', PASSWORD, '198.51.100.7')).json().code).toBe('rate_limited');
    // The admin, from her own address, signs in.
    expect((await login('target@example.com', PASSWORD, '203.0.113.5')).statusCode).toBe(200);
    // Guesses spread over many addresses meet the per-email ceiling (6 here), for every address.
    for (let i = 0; i < 3; i++) await login('target@example.com', 'wrong password!!', `198.51.100.${20 + i}`);
    expect((await login('target@example.com', PASSWORD, '203.0.113.99')).json().code).toBe('rate_limited');
  });
});
