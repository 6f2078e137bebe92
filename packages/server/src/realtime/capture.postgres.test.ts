import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSystem } from '../db/index.js';
import { openTestDb } from '../../test/db.js';
import type { Db } from '../db/index.js';

// The race the numbering exists for (migration 0080): a transaction that wrote a change early and
// commits late. A reader of `seq > cursor` over numbers given at write time skips it; numbered
// below the xmin horizon, it is neither skipped nor delivered out of order.

let db: Db;
let url: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  cleanup = t.cleanup;
  url = t.target.databaseUrl as string;
  await migrateSystem(db);
  await db.script(`create table public.r (id int primary key, v text); select realtime.enable('r');`);
});
afterAll(async () => {
  await cleanup?.();
});

/**
 * Runs the numbering until nothing waits. The horizon is the cluster's: a transaction of another
 * test's database may hold it back for a moment, so this polls rather than expects one run.
 */
async function sequenceAll(): Promise<number> {
  let total = 0;
  const end = Date.now() + 20_000;
  for (;;) {
    const r = (await db.query<{ numbered: number; waiting: number }>('select numbered, waiting from realtime.sequence()')).rows[0];
    total += Number(r.numbered);
    if (Number(r.waiting) === 0) return total;
    if (Date.now() > end) throw new Error('changes still waiting after 20 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The changes as numbered (realtime.read), oldest first. */
const numbered = async () =>
  (await db.query<{ seq: number; v: string }>(`select r.seq, r."row"->>'v' as v from realtime.read(0, 1000000) r`)).rows.map((r) => ({
    seq: Number(r.seq),
    v: r.v,
  }));
const captured = async () => Number((await db.query<{ n: number }>('select count(*)::int as n from realtime.changes')).rows[0].n);

describe('numbering below the xmin horizon', () => {
  it('a change written first and committed last is numbered, before the ones that came after its start', async () => {
    const early = postgres(url, { max: 1, onnotice: () => undefined });
    const late = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      const holding = await early.reserve();
      await holding`begin`;
      await holding`insert into r values (1, 'early')`; // write-order id 1, the oldest xid
      await late`insert into r values (2, 'late')`; // committed at once
      const run1 = (await db.query<{ numbered: number; waiting: number }>('select numbered, waiting from realtime.sequence()')).rows[0];
      // The committed change waits: a transaction older than it still runs.
      expect([Number(run1.numbered), Number(run1.waiting)]).toEqual([0, 1]);
      expect([await numbered(), await captured()]).toEqual([[], 1]);
      // The naive reader the issue warns about: had `late` been numbered now (as seq 2 after the
      // early one's 1 at write time), a reader at cursor 2 would never look back at 1.
      await holding`commit`;
      holding.release();
      expect(await sequenceAll()).toBe(2);
      const rows = await numbered();
      expect(rows.map((r) => r.v)).toEqual(['early', 'late']);
      expect(rows[0].seq).toBeLessThan(rows[1].seq);
    } finally {
      await early.end();
      await late.end();
    }
  });

  it('a transaction with an older id that writes its change after a younger one is numbered first (xid order)', async () => {
    const older = postgres(url, { max: 1, onnotice: () => undefined });
    const younger = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      const o = await older.reserve();
      const y = await younger.reserve();
      await o`begin`;
      await o`select pg_current_xact_id()`; // takes its xid first
      await y`begin`;
      await y`insert into r values (3, 'younger')`;
      await o`insert into r values (4, 'older')`;
      await y`commit`;
      expect(Number((await db.query<{ n: number }>('select numbered as n from realtime.sequence()')).rows[0].n)).toBe(0);
      await o`commit`;
      expect(await sequenceAll()).toBe(2);
      expect((await numbered()).slice(-2).map((r) => r.v)).toEqual(['older', 'younger']);
      o.release();
      y.release();
    } finally {
      await older.end();
      await younger.end();
    }
  });

  it('a rolled-back change is never numbered, and leaves no gap', async () => {
    const before = Number((await db.query<{ s: number }>('select last_seq as s from realtime.state')).rows[0].s);
    await db.transaction(async (tx) => {
      await tx.query(`insert into r values (5, 'kept')`);
    });
    await db
      .transaction(async (tx) => {
        await tx.query(`insert into r values (6, 'rolled back')`);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await db.transaction(async (tx) => {
      await tx.query(`insert into r values (7, 'kept too')`);
    });
    expect(await sequenceAll()).toBe(2);
    const rows = (await numbered()).slice(-2);
    expect(rows.map((r) => [r.v, r.seq])).toEqual([
      ['kept', before + 1],
      ['kept too', before + 2],
    ]);
  });
});
