import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './cluster.js';
import { createTestServer, type TestServer } from './harness.js';
import { type RtClient, rtConnect, rtSubscribe } from './realtime.js';
import { type Receiver, startReceiver } from './receiver.js';

// Security review round 3, R1 and R2: LIKE filters decided in memory on every change used a
// backtracking RegExp. One anon subscription (R1) or one webhook filter with an end-user's long
// value (R2) stopped the server. Here the same messages leave it serving: each test would hang
// on a RegExp matcher until its deadline.

let t: TestServer;
let base: string;
let receiver: Receiver;
const clients: RtClient[] = [];

beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  receiver = await startReceiver();
  const res = await t.sql(`
    create table pub (id bigserial primary key, title text not null);
    create policy r on pub for select using (true);
    grant select on pub to anon, authenticated;
    select realtime.enable('pub');
    create table tickets (id bigserial primary key, subject text not null);`);
  expect(res.statusCode, res.body).toBe(200);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await receiver?.close();
  await t?.close();
});

const health = async () => (await fetch(`${base}/health`)).status;

describe('LIKE filters run in linear time (review round 3)', () => {
  it('R1: an anon subscription like.title=%%%%%%%%%%%%! and an ordinary write leave the server serving', async () => {
    const attacker = await rtConnect(base, t.keys.publicKey);
    const reader = await rtConnect(base, t.keys.publicKey);
    clients.push(attacker, reader);
    await rtSubscribe(attacker, { id: 'evil', table: 'pub', filter: `like.title=${encodeURIComponent(`${'%'.repeat(12)}!`)}` });
    await rtSubscribe(reader, { id: 'all', table: 'pub' });
    const write = await t.app.inject({
      method: 'POST',
      url: '/api/v1/db/pub',
      headers: t.as.service,
      payload: { title: 'a'.repeat(5000) },
    });
    expect(write.statusCode, write.body).toBe(201);
    const [change] = await reader.waitChanges(1, 'all');
    expect(change.row?.title).toBe('a'.repeat(5000));
    expect(await health()).toBe(200);
    expect(attacker.changes('evil')).toEqual([]); // it does not match, and it cost a scan
    // A matching row still reaches the attacker's subscription.
    await t.app.inject({ method: 'POST', url: '/api/v1/db/pub', headers: t.as.service, payload: { title: 'done!' } });
    const [hit] = await attacker.waitChanges(1, 'evil');
    expect(hit.row?.title).toBe('done!');
  });

  it('R1: a pattern with more than 32 % is refused at subscribe', async () => {
    const c = await rtConnect(base, t.keys.publicKey);
    clients.push(c);
    await expect(
      rtSubscribe(c, { id: 'many', table: 'pub', filter: `like.title=${encodeURIComponent(`${'%'.repeat(40)}!`)}` }),
    ).rejects.toMatchObject({
      code: 'invalid_value',
    });
  });

  it("R2: a webhook's %urgent%invoice% against a 420 KB written value: the fan-out goes on, the matching row is delivered", async () => {
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: t.as.service,
      payload: {
        name: 'urgent invoices',
        table: 'tickets',
        url: receiver.url,
        events: ['insert'],
        filter: 'like.subject=%urgent%invoice%',
      },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/v1/db/tickets',
      headers: t.as.service,
      payload: { subject: 'urgent '.repeat(60_000) },
    });
    expect(big.statusCode).toBe(201);
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/v1/db/tickets',
      headers: t.as.service,
      payload: { subject: 'urgent: invoice 7' },
    });
    expect(ok.statusCode).toBe(201);
    await until('the matching row delivered', () => receiver.accepted().length >= 1, 60_000);
    expect(receiver.accepted().map((r) => r.json.record?.subject)).toEqual(['urgent: invoice 7']);
    expect(await health()).toBe(200);
  });

  it('R2: a webhook filter with more than 32 % is refused at save, naming the filter', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: t.as.service,
      payload: { name: 'many', table: 'tickets', url: receiver.url, filter: `like.subject=${'%'.repeat(33)}x` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/at most 32 %/);
  });
});
