import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, type Instance, type ReverseProxy, type RedisServer, startInstance, startNginx, startRedis, until } from './cluster.js';
import { freshDbTarget, type TestDbTarget } from './db.js';
import { type SmtpSink, startSmtpSink } from './mail.js';
import { type LocalS3, startS3 } from './s3.js';

// docs/operations.md, "several instances on one PostgreSQL behave as one": two real Plinth processes on
// one database and one Redis, behind nginx (round robin). What one instance does, the other
// sees: tokens, refresh reuse, settings, new tables, the outbox, the sign-in limit, storage
// (on one S3 bucket: each instance has a data dir of its own, as on two machines).

const PK = `pk_instances_${'a1b2c3d4'.repeat(5)}`;
const SK = `sk_instances_${'e5f6a7b8'.repeat(5)}`;
const PASSWORD = 'correct horse battery';
const stack = cleanup();
let target: TestDbTarget;
let redis: RedisServer;
let sink: SmtpSink;
let s3: LocalS3;
let a: Instance;
let b: Instance;
let proxy: ReverseProxy;

beforeAll(async () => {
  target = stack.add(await freshDbTarget(), (t) => t.cleanup());
  redis = stack.add(await startRedis(), (r) => r.stop());
  sink = stack.add(await startSmtpSink(), (s) => s.stop());
  s3 = stack.add(await startS3(), (s) => s.stop());
  const env = {
    ...s3.env,
    DATABASE_URL: target.databaseUrl ?? '',
    REDIS_URL: redis.url,
    SMTP_URL: sink.url,
    SMTP_FROM: 'Plinth <no-reply@plinth.test>',
    // One project: the same public URL (the tokens' issuer) on both.
    PUBLIC_URL: 'http://plinth.test',
    PLINTH_PUBLIC_KEY: PK,
    PLINTH_SECRET_KEY: SK,
    TRUST_PROXY: '127.0.0.1',
    AUTH_RATE_SIGNIN_EMAIL: '3/900',
    AUTH_RATE_SIGNIN_IP: '100000/900',
    AUTH_RATE_REQUESTS_IP: '100000/60',
    AUTH_REFRESH_GRACE_SECONDS: '0',
  };
  // One after the other: the first migrates and makes the project's keys, the second finds them.
  a = stack.add(await startInstance(env), (i) => i.stop());
  b = stack.add(await startInstance(env), (i) => i.stop());
  proxy = stack.add(await startNginx([a.port, b.port]), (p) => p.stop());
}, 120_000);
afterAll(() => stack.run(), 60_000);

const anon = { apikey: PK, 'content-type': 'application/json' };
const service = { authorization: `Bearer ${SK}`, 'content-type': 'application/json' };
async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = anon) {
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const sql = async (base: string, query: string) => {
  const r = await call(base, 'POST', '/api/v1/sql', { query }, service);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};
let n = 0;
const email = (tag: string) => `${tag}-${process.pid}-${++n}@example.com`;
const signUp = async (base: string, addr: string) => {
  const r = await call(base, 'POST', '/v1/auth/signup', { email: addr, password: PASSWORD });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { user: { id: string }; session: { access_token: string; refresh_token: string } };
};
const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()).kid as string;
const jwks = async (base: string) =>
  (await call(base, 'GET', '/v1/auth/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
/** The value of one Prometheus series of an instance (0 when absent). */
const metric = async (i: Instance, series: string) => {
  const text = await (await fetch(`${i.url}/metrics`, { headers: service })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('two instances behind a proxy behave as one', () => {
  it('a token issued by one works on the other, and the proxy spreads requests over both', async () => {
    await sql(
      a.url,
      'create table notes (id bigserial primary key, owner uuid not null default auth.uid(), body text not null); create policy own on notes using (owner = auth.uid()) with check (owner = auth.uid());',
    );
    const { user, session } = await signUp(a.url, email('token'));
    const asUser = { ...anon, authorization: `Bearer ${session.access_token}` };
    await until(
      'the new table is served by b',
      async () => (await call(b.url, 'GET', '/api/v1/db/notes', undefined, asUser)).status === 200,
    );
    const made = await call(b.url, 'POST', '/api/v1/db/notes', { body: 'written on b' }, asUser);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.owner).toBe(user.id);
    expect((await call(a.url, 'GET', '/api/v1/db/notes', undefined, asUser)).body).toEqual([made.body]);

    const series = 'plinth_http_requests_total{method="GET",route="/api/v1/db/*",status="200"}';
    const before = await Promise.all([metric(a, series), metric(b, series)]);
    for (let i = 0; i < 6; i++) expect((await call(proxy.url, 'GET', '/api/v1/db/notes', undefined, asUser)).body).toEqual([made.body]);
    const after = await Promise.all([metric(a, series), metric(b, series)]);
    expect(after[0] - before[0] + after[1] - before[1]).toBe(6);
    expect(after[0] - before[0]).toBeGreaterThan(0);
    expect(after[1] - before[1]).toBeGreaterThan(0);
  });

  it('a refresh token rotated on one and replayed on the other is detected as reuse', async () => {
    const addr = email('refresh');
    await signUp(a.url, addr);
    const first = await call(a.url, 'POST', '/v1/auth/signin', { email: addr, password: PASSWORD });
    const rotated = await call(a.url, 'POST', '/v1/auth/refresh', { refresh_token: first.body.refresh_token });
    expect(rotated.status).toBe(200);
    const replay = await call(b.url, 'POST', '/v1/auth/refresh', { refresh_token: first.body.refresh_token });
    expect([replay.status, replay.body.code]).toEqual([401, 'refresh_token_reused']);
    // The family is revoked: the newest token is refused on either instance.
    const newest = await call(a.url, 'POST', '/v1/auth/refresh', { refresh_token: rotated.body.refresh_token });
    expect(newest.status).toBe(401);
  });

  it('a settings change on one is in force on the other within a second', async () => {
    const patched = await call(a.url, 'PATCH', '/api/v1/settings/auth', { min_password_length: 21 }, service);
    expect(patched.status).toBe(200);
    const ms = await until(
      'b sees the new setting',
      async () => (await call(b.url, 'GET', '/v1/auth/settings')).body.min_password_length === 21,
      5000,
    );
    expect(ms).toBeLessThan(1000);
    const short = await call(b.url, 'POST', '/v1/auth/signup', { email: email('short'), password: 'twenty chars exactly' });
    expect([short.status, short.body.code]).toEqual([400, 'weak_password']);
    expect((await call(a.url, 'PATCH', '/api/v1/settings/auth', { min_password_length: 8 }, service)).status).toBe(200);
    await until('b sees it back', async () => (await call(b.url, 'GET', '/v1/auth/settings')).body.min_password_length === 8, 5000);
  });

  it('a table created through one is served by the other within a second', async () => {
    const name = `fresh_${process.pid}`;
    await sql(a.url, `create table ${name} (id int primary key); insert into ${name} values (7)`);
    const ms = await until(
      'b serves the new table',
      async () => (await call(b.url, 'GET', `/api/v1/db/${name}`, undefined, service)).status === 200,
      5000,
    );
    expect(ms).toBeLessThan(1000);
    expect((await call(b.url, 'GET', `/api/v1/db/${name}`, undefined, service)).body).toEqual([{ id: 7 }]);
  });

  it('messages queued through either instance are each sent exactly once', async () => {
    const set = await call(
      a.url,
      'PATCH',
      '/api/v1/settings/auth',
      { magic_link_enabled: true, allowed_redirect_urls: ['http://app.test'], magic_link_url: 'http://app.test/magic' },
      service,
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    await until('b allows magic links', async () => (await call(b.url, 'GET', '/v1/auth/settings')).body.magic_link_enabled === true, 5000);
    const to = Array.from({ length: 12 }, () => email('once'));
    // Through the proxy: round robin puts half of them on each instance.
    for (const addr of to) expect((await call(proxy.url, 'POST', '/v1/auth/request-magic-link', { email: addr })).status).toBe(200);
    await until('every mail is at the SMTP sink', () => to.every((addr) => sink.received.some((m) => m.to.includes(addr))), 60_000);
    // Every message settled (a second sending would have reached the sink before its row was marked sent).
    await until(
      'the outbox has nothing queued',
      async () => (await call(a.url, 'GET', '/api/v1/messages?status=queued&limit=100', undefined, service)).body.length === 0,
      60_000,
    );
    for (const addr of to)
      expect(
        sink.received.filter((m) => m.to.includes(addr)),
        addr,
      ).toHaveLength(1);
  });

  it('failed sign-ins spread over both instances count against one shared limit', async () => {
    const addr = email('limit');
    await signUp(a.url, addr);
    const wrong = (base: string) => call(base, 'POST', '/v1/auth/signin', { email: addr, password: 'wrong wrong wrong' });
    // Through the proxy (alternating instances): three failures, then the limit.
    for (let i = 0; i < 3; i++) expect((await wrong(proxy.url)).body.code).toBe('invalid_credentials');
    expect((await wrong(proxy.url)).body.code).toBe('rate_limited');
    // And on each instance directly: the same shared count.
    expect((await wrong(a.url)).status).toBe(429);
    expect((await wrong(b.url)).status).toBe(429);
  });

  it('issue 19: a session signed out on one is refused by the other on the very next request, though it had it cached as open', async () => {
    // The sign-out answers once the other instance has said it heard of it (sessions/gate.ts):
    // before, the other served the token from its cache on the next request (124 of 200 here).
    const addr = email('signout');
    await signUp(a.url, addr);
    for (let i = 0; i < 30; i++) {
      const session = (await call(a.url, 'POST', '/v1/auth/signin', { email: addr, password: PASSWORD })).body;
      const asUser = { ...anon, authorization: `Bearer ${session.access_token}` };
      expect((await call(b.url, 'GET', '/api/v1/db/notes', undefined, asUser)).status).toBe(200); // b caches "open"
      expect((await call(a.url, 'POST', '/v1/auth/signout', {}, asUser)).status).toBe(204);
      expect((await call(b.url, 'GET', '/api/v1/db/notes', undefined, asUser)).status, `round ${i}`).toBe(401);
    }
  });

  it('issue 19: a ban through one instance ends the sessions on the other too, and lifting it revives none', async () => {
    const { user, session } = await signUp(a.url, email('ban'));
    const asUser = { ...anon, authorization: `Bearer ${session.access_token}` };
    await until('b serves notes', async () => (await call(b.url, 'GET', '/api/v1/db/notes', undefined, asUser)).status === 200);
    const until_ = new Date(Date.now() + 3600_000).toISOString();
    expect((await call(a.url, 'PATCH', `/api/v1/users/${user.id}`, { banned_until: until_ }, service)).status).toBe(200);
    await until(
      'b refuses the banned user',
      async () => (await call(b.url, 'GET', '/api/v1/db/notes', undefined, asUser)).status === 401,
      5000,
    );
    expect((await call(a.url, 'PATCH', `/api/v1/users/${user.id}`, { banned_until: null }, service)).status).toBe(200);
    for (const i of [a, b]) expect((await call(i.url, 'GET', '/api/v1/db/notes', undefined, asUser)).status).toBe(401);
    const refresh = await call(b.url, 'POST', '/v1/auth/refresh', { refresh_token: session.refresh_token });
    expect([refresh.status, refresh.body.code]).toEqual([401, 'invalid_refresh_token']);
  });

  it('issue 19: a signing key rotated through one instance signs on the other at once; revoked there, the old keys are gone from both', async () => {
    const addr = email('rotate');
    const { session } = await signUp(a.url, addr);
    const oldKid = kidOf(session.access_token);
    const rotated = await call(a.url, 'POST', '/api/v1/admin/signing-keys/rotate', {}, service);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const newKid = rotated.body.kid as string;
    // b hears of it (NOTIFY) and signs with the new key; both still take the old key's tokens.
    await until(
      'b signs with the new key',
      async () => kidOf((await call(b.url, 'POST', '/v1/auth/signin', { email: addr, password: PASSWORD })).body.access_token) === newKid,
      5000,
    );
    expect(await jwks(b.url)).toEqual([newKid, oldKid]);
    const asOld = { ...anon, authorization: `Bearer ${session.access_token}` };
    for (const i of [a, b]) expect((await call(i.url, 'GET', '/v1/auth/user', undefined, asOld)).status).toBe(200);

    const revoked = await call(b.url, 'POST', '/api/v1/admin/signing-keys/rotate', { revoke: true }, service);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const latest = revoked.body.kid as string;
    await until('a drops the old keys', async () => JSON.stringify(await jwks(a.url)) === JSON.stringify([latest]), 5000);
    for (const i of [a, b]) expect((await call(i.url, 'GET', '/api/v1/db/notes', undefined, asOld)).status).toBe(401);
    // Everyone signs in again: a token made by one works on the other.
    const again = await call(a.url, 'POST', '/v1/auth/signin', { email: addr, password: PASSWORD });
    expect(kidOf(again.body.access_token)).toBe(latest);
    expect(
      (await call(b.url, 'GET', '/v1/auth/user', undefined, { ...anon, authorization: `Bearer ${again.body.access_token}` })).status,
    ).toBe(200);
  });

  it('an object uploaded through one downloads from the other, through a URL the first signed', async () => {
    const bucket = await call(a.url, 'POST', '/api/v1/storage/buckets', { name: `shared-${process.pid}` }, service);
    expect(bucket.status, JSON.stringify(bucket.body)).toBe(201);
    const path = `/api/v1/storage/object/shared-${process.pid}/notes/a.txt`;
    const up = await fetch(`${a.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SK}`, 'content-type': 'text/plain' },
      body: 'uploaded through a',
    });
    expect(up.status, await up.clone().text()).toBe(201);
    const down = await fetch(`${b.url}${path}`, { headers: { authorization: `Bearer ${SK}` } });
    expect([down.status, await down.text()]).toEqual([200, 'uploaded through a']);
    const signed = await call(a.url, 'POST', `/api/v1/storage/sign/shared-${process.pid}/notes/a.txt`, { expires_in: 60 }, service);
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const url = new URL(signed.body.signed_url, b.url);
    const viaB = await fetch(`${b.url}${url.pathname}${url.search}`);
    expect([viaB.status, await viaB.text()]).toEqual([200, 'uploaded through a']);
    // And through the proxy, whichever instance answers.
    for (let i = 0; i < 2; i++)
      expect(await (await fetch(`${proxy.url}${path}`, { headers: { authorization: `Bearer ${SK}` } })).text()).toBe('uploaded through a');
  });
});
