import { createHmac } from 'node:crypto';
import { MASK, type Webhook, type WebhookCreated, type WebhookDelivery } from '@plinth/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type Receiver, startReceiver } from '../../test/receiver.js';
import { until as poll } from '../../test/until.js';
import { verifySignature } from './signature.js';

// Issue 24 in one process (PGlite, PostgreSQL, and PostgreSQL as a database owner): a real HTTP
// receiver on a loopback port (so WEBHOOK_ALLOW_PRIVATE=true here; the refusal of private
// addresses without it is safety.test.ts), changes made through the REST API, the test server's
// clock moved forward for retries and the give-up window, never slept on.

let t: TestServer;
const receivers: Receiver[] = [];

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const sql = (query: string) => t.sqlOk(query);

async function api<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, status?: number): Promise<T> {
  const res = await t.app.inject({ method, url, headers: t.as.service, ...(payload !== undefined ? { payload: payload as object } : {}) });
  if (status !== undefined) expect(res.statusCode, res.body).toBe(status);
  return (res.body ? res.json() : null) as T;
}

async function rest(method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown) {
  const res = await t.app.inject({ method, url: `/api/v1/db/${path}`, headers: t.as.service, payload: payload as object });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

async function hook(body: Record<string, unknown>): Promise<WebhookCreated> {
  return api<WebhookCreated>('POST', '/api/v1/webhooks', body, 201);
}

/** Polls, kicking the webhooks' worker between probes. */
const until = (what: string, probe: () => boolean | Promise<boolean>) => poll(what, probe, { tick: () => t.webhooks.kick() });

const deliveries = (id: string, q = '') => api<WebhookDelivery[]>('GET', `/api/v1/webhooks/${id}/deliveries${q}`, undefined, 200);

/** Until every delivery of a webhook is recorded (sent or failed): a run records its answers together, after the receiver has them. */
const settled = (id: string) => until('deliveries recorded', async () => (await deliveries(id)).every((d) => d.status !== 'queued'));

beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  await sql(`
    create table orders (id bigserial primary key, status text not null default 'new', total numeric not null default 0,
                         placed_at timestamptz not null default now(), note text);
    create table feed (id int primary key, body text);
    create table other (id int primary key, body text);`);
});

afterAll(async () => {
  for (const r of receivers) await r.close().catch(() => undefined);
  await t?.stop();
});

describe('inserts, updates and deletes arrive signed and in order', () => {
  it('each change is one POST with the documented body and headers, verified with its secret', async () => {
    const r = await receiver();
    const made = await hook({
      name: 'orders to r',
      table: 'orders',
      url: `${r.url}/hooks?x=1`,
      headers: { Authorization: 'Bearer receiver-token' },
    });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(made).toMatchObject({ table: 'orders', events: ['insert', 'update', 'delete'], enabled: true, filter: null });
    expect(made.headers).toEqual({ Authorization: MASK });
    // Shown once: never again.
    expect(JSON.stringify(await api('GET', `/api/v1/webhooks/${made.id}`, undefined, 200))).not.toContain(made.secret);
    expect(JSON.stringify(await api('GET', '/api/v1/webhooks', undefined, 200))).not.toContain(made.secret);

    await rest('POST', 'orders', { status: 'new', total: '10.50' });
    await rest('PATCH', 'orders?eq.status=new', { status: 'paid' });
    await rest('DELETE', 'orders?eq.status=paid');
    await until('three POSTs', () => r.accepted().length >= 3);

    const got = r.received;
    expect(got.map((x) => x.json.type)).toEqual(['insert', 'update', 'delete']);
    const seqs = got.map((x) => x.json.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(got[0].json).toMatchObject({ table: 'orders', record: { status: 'new', total: 10.5 }, old_record: null });
    expect(got[1].json).toMatchObject({ record: { status: 'paid' }, old_record: { status: 'new' } });
    expect(got[2].json).toMatchObject({ record: null, old_record: { status: 'paid' } });
    expect(Object.keys(got[0].json)).toEqual(['type', 'table', 'seq', 'record', 'old_record', 'commit_time']);
    expect(got[0].json.commit_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const x of got) {
      expect(x.headers['content-type']).toBe('application/json');
      expect(x.headers.authorization).toBe('Bearer receiver-token');
      expect(x.headers['plinth-delivery']).toMatch(/^\d+$/);
      const sig = String(x.headers['plinth-signature']);
      expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      // The scheme written out: HMAC-SHA256 of "t.body" under the secret, hex.
      const tPart = sig.split(',')[0].slice(2);
      expect(sig.split('v1=')[1]).toBe(createHmac('sha256', made.secret).update(`${tPart}.${x.body}`).digest('hex'));
      expect(verifySignature(made.secret, sig, x.body, Number(tPart))).toBe(true);
      expect(verifySignature(made.secret, sig, `${x.body} `, Number(tPart))).toBe(false);
    }

    await settled(made.id);
    const log = await deliveries(made.id);
    expect(log.map((d) => d.event)).toEqual(['delete', 'update', 'insert']);
    expect(log[0]).toMatchObject({ status: 'sent', attempts: 1, response_status: 200, response: 'ok', table: 'orders', truncated: false });
    expect(log.map((d) => d.id)).toEqual(got.map((x) => x.headers['plinth-delivery']).reverse());
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });

  it('events and the filter pick the changes; a filter is tested on the row as written (the old row for a delete)', async () => {
    const r = await receiver();
    const made = await hook({
      name: 'big paid orders',
      table: 'orders',
      events: ['insert', 'delete'],
      filter: 'eq.status=paid&gte.total=100&gt.placed_at=2020-01-01T00:00:00%2B02:00',
      url: r.url,
    });
    await rest('POST', 'orders', { status: 'paid', total: '99.99', note: 'small' });
    await rest('POST', 'orders', { status: 'paid', total: '100.0', note: 'edge' });
    await rest('POST', 'orders', { status: 'new', total: '500', note: 'unpaid' });
    await rest('POST', 'orders', { status: 'paid', total: '250', note: 'old', placed_at: '2019-06-01T00:00:00Z' });
    await rest('PATCH', 'orders?eq.note=unpaid', { status: 'paid' }); // an update: not asked for
    await rest('DELETE', 'orders?eq.note=edge');
    await rest('POST', 'orders', { status: 'paid', total: '1e3', note: 'last' });
    await until('the last insert', () => r.received.some((x) => x.json.record?.note === 'last'));
    expect(r.received.map((x) => `${x.json.type}:${(x.json.record ?? x.json.old_record)?.note}`)).toEqual([
      'insert:edge',
      'delete:edge',
      'insert:last',
    ]);
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });
});

describe('a failing endpoint', () => {
  it('failing 3 times then answering: every event arrives, in order, none lost; the queue waits behind its head', async () => {
    const r = await receiver();
    r.answer = (n) => (n < 3 ? { status: 503, body: `busy ${n}` } : { status: 200 });
    const made = await hook({ name: 'flaky', table: 'feed', url: r.url });
    for (let i = 1; i <= 5; i++) await rest('POST', 'feed', { id: i, body: `b${i}` });
    await until('the first attempt', () => r.received.length >= 1);
    // Each retry waits its backoff (1 s, 2 s, 4 s of the server's clock): move the clock instead of waiting.
    await until('all five accepted', () => {
      t.clock.advance(4_000);
      return r.accepted().length >= 5;
    });
    expect(r.received.slice(0, 4).map((x) => x.json.record?.id)).toEqual([1, 1, 1, 1]);
    expect(new Set(r.received.slice(0, 4).map((x) => x.headers['plinth-delivery'])).size).toBe(1);
    expect(r.accepted().map((x) => x.json.record?.id)).toEqual([1, 2, 3, 4, 5]);
    await settled(made.id);
    const first = (await deliveries(made.id)).at(-1);
    expect(first).toMatchObject({ status: 'sent', attempts: 4, response_status: 200 });
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });

  it('an endpoint down the whole time: its deliveries are failed after WEBHOOK_RETRY_WINDOW; another webhook is not held up', async () => {
    const down = await receiver();
    await down.close();
    const up = await receiver();
    const dead = await hook({ name: 'dead', table: 'other', url: `${down.url}/gone` });
    const alive = await hook({ name: 'alive', table: 'other', url: up.url });
    await rest('POST', 'other', [
      { id: 1, body: 'one' },
      { id: 2, body: 'two' },
    ]);
    await until('the live endpoint got both', () => up.accepted().length >= 2);
    await until('the dead one tried', async () => (await deliveries(dead.id))[1]?.attempts >= 1);
    expect((await deliveries(dead.id)).map((d) => d.status)).toEqual(['queued', 'queued']);
    // Three days of the server's clock, an hour at a time (the longest wait between attempts).
    await until('given up', async () => {
      t.clock.advance(3_600_000);
      const log = await deliveries(dead.id);
      return log.every((d) => d.status === 'failed');
    });
    const log = await deliveries(dead.id);
    expect(log[1].attempts).toBeGreaterThan(3);
    expect(log[1].response_status).toBeNull();
    expect(log[1].response).toMatch(/ECONNREFUSED/);
    expect((await deliveries(dead.id, '?status=failed')).length).toBe(2);
    expect(up.accepted().map((x) => x.json.record?.id)).toEqual([1, 2]);
    await api('DELETE', `/api/v1/webhooks/${dead.id}`, undefined, 204);
    await api('DELETE', `/api/v1/webhooks/${alive.id}`, undefined, 204);
  });

  it('a redirect is not followed: the attempt fails with the status, its target never hears of it', async () => {
    const target = await receiver();
    const r = await receiver();
    r.answer = (n) => (n === 0 ? { status: 302, headers: { location: `${target.url}/elsewhere` } } : { status: 200 });
    const made = await hook({ name: 'redirecting', table: 'feed', url: r.url });
    await rest('POST', 'feed', { id: 100, body: 'r' });
    await until('the redirect', () => r.received.length >= 1);
    await until('the retry', () => {
      t.clock.advance(1_000);
      return r.accepted().length >= 1;
    });
    expect(target.received).toEqual([]);
    await settled(made.id);
    const [d] = await deliveries(made.id);
    expect(d).toMatchObject({ status: 'sent', attempts: 2 });
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });
});

describe('the delivery log, redelivery, the secret', () => {
  it('redeliver sends the same body again under a new delivery id; a queued one is 409', async () => {
    const r = await receiver();
    const made = await hook({ name: 'redeliver', table: 'feed', url: r.url });
    await rest('POST', 'feed', { id: 200, body: 'again' });
    await until('first', () => r.accepted().length >= 1);
    await settled(made.id);
    const [d] = await deliveries(made.id);
    const detail = await api<WebhookDelivery & { body: string }>('GET', `/api/v1/webhooks/${made.id}/deliveries/${d.id}`, undefined, 200);
    expect(detail.body).toBe(r.received[0].body);
    const again = await api<WebhookDelivery>('POST', `/api/v1/webhooks/${made.id}/deliveries/${d.id}/redeliver`, undefined, 201);
    expect(again).toMatchObject({ redelivery_of: d.id, seq: d.seq, status: 'queued' });
    await until('second', () => r.accepted().length >= 2);
    await settled(made.id);
    expect(r.received[1].body).toBe(r.received[0].body);
    expect(r.received[1].headers['plinth-delivery']).toBe(again.id);

    // A queued delivery cannot be redelivered (it will be attempted by itself).
    r.answer = () => ({ status: 500 });
    await rest('POST', 'feed', { id: 201, body: 'stuck' });
    await until('tried', async () => (await deliveries(made.id, '?status=queued'))[0]?.attempts >= 1);
    const [stuck] = await deliveries(made.id, '?status=queued');
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${made.id}/deliveries/${stuck.id}/redeliver`,
      headers: t.as.service,
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('conflict');
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${made.id}/deliveries/99999999`, headers: t.as.service })).json().code,
    ).toBe('webhook_delivery_not_found');
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });

  it('a rotated secret signs from then on; the old one also signs for a day unless revoked', async () => {
    const r = await receiver();
    const made = await hook({ name: 'rotate', table: 'feed', url: r.url });
    const rotated = await api<{ secret: string; previous_secret_expires_at: string }>(
      'POST',
      `/api/v1/webhooks/${made.id}/secret/rotate`,
      {},
      200,
    );
    expect(rotated.secret).not.toBe(made.secret);
    expect(Date.parse(rotated.previous_secret_expires_at) - t.clock.now()).toBe(24 * 3600_000);
    await rest('POST', 'feed', { id: 300, body: 'two signatures' });
    await until('signed twice', () => r.accepted().length >= 1);
    const [first] = r.received;
    const sig = String(first.headers['plinth-signature']);
    const tPart = Number(sig.split(',')[0].slice(2));
    expect(sig.split(',').length).toBe(3);
    expect(verifySignature(rotated.secret, sig, first.body, tPart)).toBe(true);
    expect(verifySignature(made.secret, sig, first.body, tPart)).toBe(true);

    const revoked = await api<{ secret: string; previous_secret_expires_at: null }>(
      'POST',
      `/api/v1/webhooks/${made.id}/secret/rotate`,
      { revoke: true },
      200,
    );
    expect(revoked.previous_secret_expires_at).toBeNull();
    await rest('POST', 'feed', { id: 301, body: 'one signature' });
    await until('signed once', () => r.accepted().length >= 2);
    const second = r.received[1];
    const sig2 = String(second.headers['plinth-signature']);
    expect(sig2.split(',').length).toBe(2);
    expect(verifySignature(revoked.secret, sig2, second.body, Number(sig2.split(',')[0].slice(2)))).toBe(true);
    expect(verifySignature(rotated.secret, sig2, second.body, Number(sig2.split(',')[0].slice(2)))).toBe(false);
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });

  it('a row over 256 KiB is sent as its primary key with truncated: true', async () => {
    const r = await receiver();
    const made = await hook({ name: 'big', table: 'feed', url: r.url, events: ['insert'] });
    await rest('POST', 'feed', { id: 400, body: 'x'.repeat(300 * 1024) });
    await until('sent', () => r.accepted().length >= 1);
    expect(r.received[0].json).toMatchObject({ type: 'insert', record: { id: 400 }, old_record: null, truncated: true });
    expect(Object.keys(r.received[0].json.record ?? {})).toEqual(['id']);
    expect((await deliveries(made.id))[0].truncated).toBe(true);
    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
  });
});

describe('management', () => {
  it('edits, masks header values (a masked value sent back keeps the stored one), disables, deletes', async () => {
    const r = await receiver();
    const made = await hook({ name: 'edit me', table: 'feed', url: r.url, headers: { 'X-Token': 'one', 'X-Env': 'test' } });
    const patched = await api<Webhook>(
      'PATCH',
      `/api/v1/webhooks/${made.id}`,
      { name: 'edited', headers: { 'X-Token': MASK, 'X-New': 'n' } },
      200,
    );
    expect(patched).toMatchObject({ name: 'edited', headers: { 'X-Token': MASK, 'X-New': MASK } });
    await rest('POST', 'feed', { id: 500, body: 'h' });
    await until('sent', () => r.accepted().length >= 1);
    expect(r.received[0].headers['x-token']).toBe('one');
    expect(r.received[0].headers['x-new']).toBe('n');
    expect(r.received[0].headers['x-env']).toBeUndefined();

    // Disabled: changes made meanwhile are not delivered, even once it is back on.
    await api('PATCH', `/api/v1/webhooks/${made.id}`, { enabled: false }, 200);
    await rest('POST', 'feed', { id: 501, body: 'while off' });
    await api('PATCH', `/api/v1/webhooks/${made.id}`, { enabled: true }, 200);
    await rest('POST', 'feed', { id: 502, body: 'back on' });
    await until('back on', () => r.accepted().some((x) => x.json.record?.id === 502));
    expect(r.accepted().map((x) => x.json.record?.id)).toEqual([500, 502]);

    await api('DELETE', `/api/v1/webhooks/${made.id}`, undefined, 204);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${made.id}`, headers: t.as.service })).json().code).toBe(
      'webhook_not_found',
    );
    // The last webhook of the table gone, its capture goes too (realtime never asked for feed).
    const results = await sql(
      `select count(*)::int as n from pg_trigger where tgrelid = 'public.feed'::regclass and tgname = 'plinth_realtime'`,
    );
    const others = (await api<Webhook[]>('GET', '/api/v1/webhooks', undefined, 200)).filter((w) => w.table === 'feed' && w.enabled);
    expect(results[0].rows[0].n).toBe(others.length > 0 ? 1 : 0);
  });

  it('refuses wrong bodies with every problem named, and saves nothing', async () => {
    const before = (await api<Webhook[]>('GET', '/api/v1/webhooks', undefined, 200)).length;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: t.as.service,
      payload: {
        name: '',
        table: 'nope',
        events: ['insert', 'truncate'],
        url: 'ftp://x',
        headers: { Host: 'a', 'X-Ok': 'line\nbreak' },
        extra: 1,
      },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid_webhook');
    expect(body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'events',
      'extra',
      'headers.Host',
      'headers.X-Ok',
      'name',
      'table',
      'url',
    ]);
    const filter = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: t.as.service,
      payload: { name: 'f', table: 'orders', url: 'http://127.0.0.1:9/', filter: 'gt.status=a' },
    });
    expect(filter.json().details).toEqual([{ field: 'filter', message: expect.stringMatching(/gt\.status cannot be used.*collation/) }]);
    const value = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: t.as.service,
      payload: { name: 'f', table: 'orders', url: 'http://127.0.0.1:9/', filter: 'eq.total=abc' },
    });
    expect(value.json().details[0]).toMatchObject({ field: 'filter', message: expect.stringMatching(/does not fit/) });
    const nopk = await sql('create table nopk (a int)');
    expect(nopk).toBeTruthy();
    const pk = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: t.as.service,
      payload: { name: 'f', table: 'nopk', url: 'http://127.0.0.1:9/' },
    });
    expect(pk.json().details[0]).toMatchObject({ field: 'table', message: expect.stringMatching(/primary key/) });
    expect((await api<Webhook[]>('GET', '/api/v1/webhooks', undefined, 200)).length).toBe(before);
  });
});
