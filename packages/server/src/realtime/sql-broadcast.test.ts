import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { migrateSystem } from '../db/index.js';
import { openPostgres } from '../db/postgres.js';
import type { Db } from '../db/types.js';
import { type ChannelMember, type ChannelMessage, Channels } from './channels.js';
import { openSqlBroadcasts, type SqlBroadcasts } from './sql-broadcast.js';

// The queue behind realtime.send (migration 0153, sql-broadcast.ts) without a server: two
// instances' workers on one database (two connection pools on PostgreSQL) claim the same queue
// in small batches, and a row that got no wake-up goes at the poll. Through realtime-js:
// src/supabase/realtime/sql-broadcast.test.ts.

let db: Db;
let other: Db;
let cleanup: () => Promise<void>;
const open: SqlBroadcasts[] = [];
const hubs: Channels[] = [];

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  cleanup = t.cleanup;
  await migrateSystem(db);
  other = t.target.databaseUrl ? await openPostgres(t.target.databaseUrl, { max: 2 }) : db;
});
// Every instance's worker claims from the one queue: a test's instances stop with it.
afterEach(async () => {
  for (const w of open.splice(0)) await w.close();
});
afterAll(async () => {
  for (const h of hubs) await h.close();
  if (other !== db) await other?.close();
  await cleanup?.();
});

/** One instance: a hub with one public member of `topic`, and a worker on `on`. */
async function instance(
  on: Db,
  topic: string,
  o: { batch: number; pollMs: number; maxBytes?: number; onTooLarge?(topic: string, bytes: number): void },
) {
  const got: Array<{ event: string; payload: unknown }> = [];
  const member: ChannelMember = {
    topic,
    ip: '127.0.0.1',
    presenceKey: 'k',
    self: false,
    meta: null,
    deliver: (m: ChannelMessage) => {
      if (m.kind === 'broadcast') got.push({ event: m.event, payload: m.payload });
    },
  };
  const hub = new Channels();
  hubs.push(hub);
  hub.join(member);
  const worker = await openSqlBroadcasts(on, hub, { ...o, onError: (err) => console.error(err) });
  open.push(worker);
  return { got, worker };
}

const queued = async () => Number((await db.query<{ n: number }>('select count(*)::int as n from realtime.messages')).rows[0].n);

describe('broadcast from SQL: the queue', () => {
  it('two instances claiming in batches of 7 deliver each of 60 messages once, each instance in the order written', async () => {
    const a = await instance(db, 'q1', { batch: 7, pollMs: 60_000 });
    const b = await instance(other, 'q1', { batch: 7, pollMs: 60_000 });
    await db.transaction(async (tx) => {
      for (let n = 0; n < 40; n++) await tx.query("select realtime.send(jsonb_build_object('n', $1::int), 'e', 'q1', false)", [n]);
    });
    for (let n = 40; n < 60; n++) await db.query("select realtime.send(jsonb_build_object('n', $1::int), 'e', 'q1', false)", [n]);
    const ns = (got: Array<{ payload: unknown }>) => got.map((m) => (m.payload as { n: number }).n);
    // Each hub has no bus here: what one instance claimed, only its member hears.
    await expect.poll(() => [...ns(a.got), ...ns(b.got)].sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const got of [ns(a.got), ns(b.got)]) expect(got).toEqual([...got].sort((x, y) => x - y));
    expect(await queued()).toBe(0);
  });

  it('a row that got no wake-up (its instance died between commit and claim) goes at the next poll', async () => {
    const c = await instance(db, 'q2', { batch: 100, pollMs: 50 });
    await c.worker.drain();
    // No NOTIFY: as if the wake-up had been lost.
    await db.transaction(async (tx) => {
      await tx.query('alter table realtime.messages disable trigger wake_broadcasts');
      await tx.query(`select realtime.send('{"late":true}'::jsonb, 'e', 'q2', false)`);
      await tx.query('alter table realtime.messages enable trigger wake_broadcasts');
    });
    await expect.poll(() => c.got.map((m) => m.payload)).toEqual([{ late: true, id: expect.any(String) }]);
    expect(await queued()).toBe(0);
  });

  it('a payload over REALTIME_MAX_MESSAGE_SIZE is not sent, is reported and leaves no row; the next one goes', async () => {
    const tooLarge: Array<[string, number]> = [];
    const d = await instance(db, 'q3', { batch: 100, pollMs: 60_000, maxBytes: 1000, onTooLarge: (t, n) => tooLarge.push([t, n]) });
    await db.query("select realtime.send(jsonb_build_object('big', repeat('x', 2000)), 'e', 'q3', false)");
    await db.query(`select realtime.send('{"small":true}'::jsonb, 'e', 'q3', false)`);
    await expect.poll(() => d.got.map((m) => m.payload)).toEqual([{ small: true, id: expect.any(String) }]);
    expect(tooLarge).toEqual([['q3', expect.any(Number)]]);
    expect(tooLarge[0][1]).toBeGreaterThan(2000);
    expect(await queued()).toBe(0);
  });
});
