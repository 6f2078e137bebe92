import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Review round 3, R12: on a plain-http host that is not localhost (`http://devbox.test:8080`, a
// LAN address) browsers send no Sec-Fetch-Site, so an <img>, <video> or <script> on another port
// of that host carried the admin's SameSite=Strict cookie and nothing else, and read private
// objects as the secret key. Every request the cookie authenticates, GET and HEAD included, now
// needs X-Plinth-Admin: 1, which no subresource and no link can send (http/console.ts).

const PUBLIC = 'http://devbox.test:8080';
const HOST = { host: 'devbox.test:8080' };
const PASSWORD = 'a long admin passphrase';
let t: TestServer;
let cookie = '';

beforeAll(async () => {
  t = await createTestServer({ PUBLIC_URL: PUBLIC });
  await t.admin.admins.upsert('ops@example.com', PASSWORD);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/login',
    headers: { ...HOST, origin: PUBLIC },
    payload: { email: 'ops@example.com', password: PASSWORD },
  });
  expect(res.statusCode, res.body).toBe(200);
  cookie = `plinth_admin=${String(res.headers['set-cookie']).match(/plinth_admin=([^;]*)/)?.[1]}`;
  await t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: t.as.service, payload: { name: 'priv' } });
  const up = await t.app.inject({
    method: 'POST',
    url: '/api/v1/storage/object/priv/alice/secret.txt',
    headers: { ...t.as.service, 'content-type': 'text/plain' },
    payload: 'the secret',
  });
  expect(up.statusCode, up.body).toBe(201);
  await t.sql(`create table notes (id int primary key, body text); insert into notes values (1, 'private row')`);
});
afterAll(() => t?.stop());

const READS: Array<[string, string]> = [
  ['GET', '/api/v1/storage/object/priv/alice/secret.txt'],
  ['GET', '/api/v1/storage/object/priv/alice/secret.txt?download=secret.txt'],
  ['HEAD', '/api/v1/storage/object/priv/alice/secret.txt'],
  ['GET', '/api/v1/storage/object/priv'],
  ['GET', '/api/v1/db/notes'],
  ['GET', '/api/v1/admin/keys'],
  ['GET', '/api/v1/users'],
];

describe('a read with the console cookie on a plain-http host that is not localhost', () => {
  it.each(READS)('%s %s without X-Plinth-Admin (an <img> of another port: no Sec-Fetch-Site) is refused', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { ...HOST, cookie } });
    expect(res.statusCode).toBe(403);
    if (method !== 'HEAD') {
      expect(res.json().code).toBe('csrf_rejected');
      expect(res.json().message).toContain('X-Plinth-Admin: 1');
      expect(res.body).not.toMatch(/the secret|private row|sk_/);
    }
  });

  it.each(READS)('%s %s with X-Plinth-Admin: 1 (the console’s fetch) is served', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { ...HOST, cookie, 'x-plinth-admin': '1' } });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('serves the object’s bytes to the console, and a key still decides without the header', async () => {
    const url = '/api/v1/storage/object/priv/alice/secret.txt';
    expect((await t.app.inject({ url, headers: { ...HOST, cookie, 'x-plinth-admin': '1' } })).body).toBe('the secret');
    expect((await t.app.inject({ url, headers: { ...HOST, ...t.as.service } })).body).toBe('the secret');
  });

  it('a cookie that is no live session is 401 as before, header or not', async () => {
    const res = await t.app.inject({ url: '/api/v1/admin/keys', headers: { ...HOST, cookie: 'plinth_admin=nothing-of-this-server' } });
    expect([res.statusCode, res.json().code]).toEqual([401, 'unauthorized']);
  });
});
