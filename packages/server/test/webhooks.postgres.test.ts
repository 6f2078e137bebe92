import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, startInstance, until } from './cluster.js';
import { freshDbTarget } from './db.js';
import { type Receiver, startReceiver } from './receiver.js';

// Database webhooks across real processes on one PostgreSQL (docs/webhooks.md): an
// instance killed with SIGKILL in the middle of a stream loses nothing (the change log's cursor,
// the deliveries and the queue's lease are in the database), and two instances send each
// delivery once, in order per webhook. Rows are written straight into the database (not through
// an instance), so the instances' own state plays no part in what exists.

const PK = `pk_webhooks_${'1a2b3c4d'.repeat(5)}`;
const SK = `sk_webhooks_${'5e6f7a8b'.repeat(5)}`;
const service = { authorization: `Bearer ${SK}`, 'content-type': 'application/json' };
const stack = cleanup();
afterEach(() => stack.run(), 60_000);

const env = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  PLINTH_PUBLIC_KEY: PK,
  PLINTH_SECRET_KEY: SK,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  // A dead instance's queues go to another after this.
  OUTBOX_LEASE_SECONDS: '2',
  DB_POOL_SIZE: '4',
});

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, { method, headers: service, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Row ids in the order of their first arrival, and how many arrived more than once. */
function arrivals(r: Receiver) {
  const first: number[] = [];
  const seen = new Set<number>();
  let again = 0;
  for (const x of r.accepted()) {
    const id = Number(x.json.record?.id);
    if (seen.has(id)) again++;
    else {
      seen.add(id);
      first.push(id);
    }
  }
  return { first, again, seen };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('webhooks across processes (PostgreSQL)', () => {
  it('kill -9 of the instance mid-stream: after a new one starts, every change arrives, first arrivals in order', async () => {
    const N = 3000;
    const target = stack.add(await freshDbTarget(), (x) => x.cleanup());
    const url = target.databaseUrl ?? '';
    const r = stack.add(await startReceiver(), (x) => x.close());
    const a = stack.add(await startInstance(env(url)), (i) => i.kill());
    expect((await call(a.url, 'POST', '/api/v1/sql', { query: 'create table feed (id int primary key, body text not null)' })).status).toBe(
      200,
    );
    const hook = await call(a.url, 'POST', '/api/v1/webhooks', { name: 'feed', table: 'feed', url: `${r.url}/in`, events: ['insert'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    const sql = stack.add(postgres(url, { max: 1, onnotice: () => undefined }), (s) => s.end());
    let written = 0;
    const write = async (upto: number) => {
      while (written < upto) {
        const from = written + 1;
        const to = Math.min(upto, written + 50);
        await sql`insert into feed select g, 'row ' || g from generate_series(${from}::int, ${to}::int) g`;
        written = to;
      }
    };
    // Half the rows, and the instance killed once a few hundred have arrived: mid-stream
    // whatever this machine's speed (the rest of the first half is still queued or in flight).
    await write(N / 2);
    await until('a few hundred delivered', () => r.accepted().length >= 300, 60_000);
    await a.kill();
    const atKill = r.accepted().length;
    // The other half while no instance runs: only the database holds them.
    await write(N);
    const b = stack.add(await startInstance(env(url)), (i) => i.kill());
    await until('every change delivered', () => arrivals(r).seen.size >= N, 120_000);

    const { first, again } = arrivals(r);
    expect(first).toEqual(range(N));
    expect(atKill).toBeLessThan(N / 2);
    // At least once: what the dead instance sent but had not recorded (one run, at most 100) is
    // sent again; nothing else twice.
    expect(again).toBeLessThanOrEqual(100);
    // Every delivery recorded as sent (a run records its answers a moment after the receiver has them).
    await until(
      'all recorded',
      async () => (await call(b.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries?status=queued`)).body.length === 0,
    );
    const counts = await sql`select status, count(*)::int as n from plinth.webhook_deliveries group by status`;
    expect(counts.map((c) => ({ ...c }))).toEqual([{ status: 'sent', n: N }]);
  });

  it('two instances: each delivery is sent once, each webhook in order', async () => {
    const N = 1500;
    const target = stack.add(await freshDbTarget(), (x) => x.cleanup());
    const url = target.databaseUrl ?? '';
    const receivers = [await startReceiver(), await startReceiver(), await startReceiver()];
    for (const r of receivers) stack.add(r, (x) => x.close());
    const a = stack.add(await startInstance(env(url)), (i) => i.kill());
    const b = stack.add(await startInstance(env(url)), (i) => i.kill());
    expect((await call(a.url, 'POST', '/api/v1/sql', { query: 'create table feed (id int primary key, body text not null)' })).status).toBe(
      200,
    );
    for (const [i, r] of receivers.entries()) {
      const made = await call(i % 2 ? a.url : b.url, 'POST', '/api/v1/webhooks', { name: `w${i}`, table: 'feed', url: r.url });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    const sql = stack.add(postgres(url, { max: 1, onnotice: () => undefined }), (s) => s.end());
    for (let from = 1; from <= N; from += 100) {
      await sql`insert into feed select g, 'row ' || g from generate_series(${from}::int, ${from + 99}::int) g`;
    }
    for (const r of receivers) await until('all delivered', () => r.received.length >= N, 120_000);
    // Every delivery recorded as sent: nothing is left that either instance could send again.
    await until('both instances idle', async () => {
      const counts = await sql`select count(*)::int as n from plinth.webhook_deliveries where status = 'queued'`;
      return counts[0].n === 0;
    });
    for (const r of receivers) {
      const ids = r.received.map((x) => String(x.headers['plinth-delivery']));
      expect(new Set(ids).size).toBe(ids.length);
      expect(r.received.map((x) => Number(x.json.record?.id))).toEqual(range(N));
    }
  });
});
