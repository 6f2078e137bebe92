import type { WebhookCreated } from '@plinth/shared';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type Receiver, startReceiver } from '../../test/receiver.js';
import { until as poll } from '../../test/until.js';

// A webhook switched back on receives the changes committed from then on, never one committed
// while it was off, even when the change log numbers that one later. The log numbers a change
// only once every transaction older than it has ended (migration 0080), so a transaction left
// open elsewhere holds back the numbering of everything committed after it started: before
// migration 0155 a change written while the webhook was off got a number above the one recorded
// when it was switched back on, and was sent. PostgreSQL only: PGlite runs one transaction at a time.

let t: TestServer;
let other: postgres.Sql;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  await t.sqlOk('create table feed (id int primary key, body text)');
  other = postgres(t.config.databaseUrl ?? '', { max: 1, onnotice: () => undefined });
});

afterAll(async () => {
  await other?.end();
  for (const r of receivers) await r.close().catch(() => undefined);
  await t?.stop();
});

async function api<T>(method: 'POST' | 'PATCH', url: string, payload: object, status: number): Promise<T> {
  const res = await t.app.inject({ method, url, headers: t.as.service, payload });
  expect(res.statusCode, res.body).toBe(status);
  return res.json() as T;
}

const write = async (id: number, body: string) => {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/db/feed', headers: t.as.service, payload: { id, body } });
  expect(res.statusCode, res.body).toBe(201);
};

const until = (what: string, probe: () => boolean) => poll(what, probe, { tick: () => t.webhooks.kick() });

// Without a filter the insert statement matches the changes; with one they are read and matched here.
it.each([
  ['without a filter', 0, null],
  ['with a filter', 10, 'neq.body=never'],
])(
  'a change committed while the webhook was off is not sent after it is back on, whatever transaction is still open (%s)',
  async (_, base, filter) => {
    const off = await startReceiver();
    const watcher = await startReceiver();
    receivers.push(off, watcher);
    const made = { name: `off and on ${base}`, table: 'feed', url: off.url, events: ['insert'], ...(filter ? { filter } : {}) };
    const hook = await api<WebhookCreated>('POST', '/api/v1/webhooks', made, 201);
    // A second webhook keeps the table captured while the first is off, and sees every change.
    await api('POST', '/api/v1/webhooks', { name: `watcher ${base}`, table: 'feed', url: watcher.url, events: ['insert'] }, 201);
    const insert = (n: number, body: string) => write(base + n, body);
    const ids = (r: Receiver) => r.accepted().map((x) => Number(x.json.record?.id) - base);
    await insert(1, 'before');
    await until('the first change sent to both', () => ids(off).includes(1) && ids(watcher).includes(1));

    await api('PATCH', `/api/v1/webhooks/${hook.id}`, { enabled: false }, 200);
    // A transaction with an id, left open: every change committed after it waits for its end to be numbered.
    const held = await other.reserve();
    await held`begin`;
    await held`select pg_current_xact_id()`;
    try {
      await insert(2, 'while off');
      await api('PATCH', `/api/v1/webhooks/${hook.id}`, { enabled: true }, 200);
      await insert(3, 'after, while the old transaction is still open');
    } finally {
      await held`commit`;
      held.release();
    }
    await insert(4, 'after');
    // Deliveries go out in order per webhook: once 4 has arrived, 2 would have arrived before it.
    await until('the later changes sent', () => ids(off).includes(4) && ids(watcher).includes(4));
    expect(ids(watcher)).toEqual([1, 2, 3, 4]);
    expect(ids(off)).toEqual([1, 3, 4]);
  },
);
