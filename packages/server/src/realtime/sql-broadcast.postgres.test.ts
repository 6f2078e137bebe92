import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { migrateSystem } from '../db/index.js';
import { openPostgres } from '../db/postgres.js';
import type { Db } from '../db/types.js';
import { postgresBus } from './bus.js';
import { type ChannelMember, type ChannelMessage, Channels } from './channels.js';
import { openSqlBroadcasts, type SqlBroadcasts } from './sql-broadcast.js';

// Broadcast from SQL across instances (docs/realtime.md, "Broadcast from SQL"): two instances'
// hubs joined by the real PostgreSQL NOTIFY bus, each with its own pool and its own worker on the
// one queue. Whichever instance claims a message, the members of both get it, once.

const log = pino({ level: 'silent' });
let db: Db;
let second: Db;
let cleanup: () => Promise<void>;
const closing: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  cleanup = t.cleanup;
  await migrateSystem(db);
  second = await openPostgres(t.target.databaseUrl as string, { max: 2 });
});
afterAll(async () => {
  for (const c of closing.reverse()) await c().catch(() => undefined);
  await second?.close();
  await cleanup?.();
});

async function instance(on: Db, topic: string) {
  const hub = new Channels(undefined, { bus: await postgresBus(on, log) });
  const got: unknown[] = [];
  const member: ChannelMember = {
    topic,
    ip: '127.0.0.1',
    presenceKey: 'k',
    self: false,
    meta: null,
    deliver: (m: ChannelMessage) => {
      if (m.kind === 'broadcast') got.push(m.payload);
    },
  };
  hub.join(member);
  const worker: SqlBroadcasts = await openSqlBroadcasts(on, hub, { pollMs: 60_000, batch: 5, onError: () => undefined });
  closing.push(
    () => worker.close(),
    () => hub.close(),
  );
  return { hub, got };
}

describe('broadcast from SQL across instances (PostgreSQL NOTIFY bus)', () => {
  it('each of 30 messages reaches the members of both instances once, whichever instance claimed it', async () => {
    const a = await instance(db, 'across');
    const b = await instance(second, 'across');
    // Until the bus carries A's messages to B and B's to A (both listening).
    await expect
      .poll(() => {
        a.hub.broadcast('across', null, 'probe', 'a');
        b.hub.broadcast('across', null, 'probe', 'b');
        return a.got.includes('b') && b.got.includes('a');
      })
      .toBe(true);
    a.got.length = 0;
    b.got.length = 0;
    for (let n = 0; n < 30; n++) await db.query("select realtime.send(jsonb_build_object('n', $1::int), 'e', 'across', false)", [n]);
    const ns = (got: unknown[]) =>
      got
        .filter((p): p is { n: number } => typeof p === 'object' && p !== null && 'n' in p)
        .map((p) => p.n)
        .sort((x, y) => x - y);
    const all = Array.from({ length: 30 }, (_, i) => i);
    await expect.poll(() => ns(a.got)).toEqual(all);
    await expect.poll(() => ns(b.got)).toEqual(all);
    expect((await db.query<{ n: number }>('select count(*)::int as n from realtime.messages')).rows[0].n).toBe(0);
  });
});
