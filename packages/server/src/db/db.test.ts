import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { openTestDb, TEST_DB_KIND } from '../../test/db.js';
import { watchDdl } from './ddl-watch.js';
import { migrateSystem } from './index.js';
import { splitStatements } from './pglite.js';
import type { Db } from './types.js';

describe('database layer', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ db, cleanup } = await openTestDb());
    await migrateSystem(db);
  });
  afterAll(() => cleanup());

  it('migrations are idempotent', async () => {
    expect(await migrateSystem(db)).toEqual([]);
  });

  it('new tables in public get RLS and are closed to anon', async () => {
    await db.script('create table t_rls (id int primary key, owner uuid); insert into t_rls values (1, null)');
    const rls = await db.query<{ relrowsecurity: boolean }>("select relrowsecurity from pg_class where relname = 't_rls'");
    expect(rls.rows[0].relrowsecurity).toBe(true);
    const count = 'select null::text as body, count(*) as n, null::int8 as total from t_rls';
    const anon = await db.runAs({ role: 'anon', claims: '{}' }, count, [], true);
    expect(anon.n).toBe(0);
    const service = await db.runAs({ role: 'service', claims: '{}' }, count, [], true);
    expect(service.n).toBe(1);
  });

  it('auth.uid() reads the claims of the transaction only', async () => {
    const sub = '11111111-1111-4111-8111-111111111111';
    const r = await db.runAs(
      { role: 'authenticated', claims: JSON.stringify({ sub }) },
      "select json_build_object('uid', auth.uid()::text, 'who', current_user)::text as body, 1::int8 as n, null::int8 as total",
      [],
      true,
    );
    expect(JSON.parse(r.body ?? 'null')).toEqual({ uid: sub, who: 'authenticated' });
    const after = await db.query<{ uid: string | null; who: string }>('select auth.uid() as uid, current_user as who');
    expect(after.rows[0].uid).toBeNull();
    expect(after.rows[0].who).not.toBe('authenticated');
  });

  it('transactions roll back on error', async () => {
    await db.query('create table t_tx (v int)');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into t_tx values (1)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await db.transaction(async (tx) => {
      await tx.query('insert into t_tx values (2)');
    });
    expect((await db.query('select v from t_tx')).rows).toEqual([{ v: 2 }]);
  });

  it('normalises int8 and timestamps alike on both drivers', async () => {
    const r = await db.query(
      "select 42::int8 as small, 9007199254740993::int8 as big, '2024-01-02T03:04:05Z'::timestamptz at time zone 'UTC' as ts",
    );
    expect(r.rows[0].small).toBe(42);
    expect(r.rows[0].big).toBe('9007199254740993');
    expect(r.rows[0].ts).toBe('2024-01-02 03:04:05');
  });

  it('scripts return one result per statement with its command', async () => {
    const rs = await db.script('create table t_s (a int); insert into t_s values (1), (2); select a from t_s order by a');
    expect(rs.map((r) => r.command)).toEqual(['CREATE TABLE', 'INSERT', 'SELECT']);
    expect(rs[2].rows).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('notifies schema changes made by any client, with or without event triggers', async () => {
    const watch = await watchDdl(db, pino({ level: 'silent' }));
    const got: string[] = [];
    const stop = await db.listen('plinth_schema', (p) => got.push(p));
    try {
      expect(watch.mode).toBe(TEST_DB_KIND === 'postgres' && process.env.TEST_DATABASE_OWNER ? 'poll' : 'event_trigger');
      await db.query('create table t_notify (a int)');
      await expect.poll(() => got.length, { timeout: 5000 }).toBeGreaterThan(0);
    } finally {
      await stop();
      await watch.stop();
    }
  });
});

describe('splitStatements', () => {
  it('respects quotes, dollar quotes and comments', () => {
    expect(splitStatements("select ';'; -- a;b\nselect $x$ ; $x$; /* ; */ select 3")).toEqual([
      "select ';'",
      '-- a;b\nselect $x$ ; $x$',
      '/* ; */ select 3',
    ]);
  });
});

describe('data dir lock', () => {
  it('refuses a second opener and clears a stale lock', async () => {
    const { openPglite } = await import('./pglite.js');
    const { writeFileSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'plinth-lock-'));
    try {
      writeFileSync(join(dir, 'plinth.lock'), '999999'); // a pid that does not exist
      const db = await openPglite(dir);
      await expect(openPglite(dir)).rejects.toThrow(/in use by another Plinth process/);
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
