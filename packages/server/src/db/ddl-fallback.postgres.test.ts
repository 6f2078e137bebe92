import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Plinth } from '../app.js';
import { loadConfig } from '../config/index.js';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { capturingLogger } from '../../test/harness.js';
import { PRIVILEGES_LOCK } from './ddl-watch.js';
import { migrateApp } from './migrate.js';

// Hosted PostgreSQL: the database owner is no superuser and may not create event triggers
// (migration 0015, ddl-watch.ts). With a superuser (the first PostgreSQL run) the triggers are
// disabled here, so both runs test the fallback: every way a table can come into public leaves
// it closed to anon and authenticated until a policy opens it, and DDL by any client is served.
let target: TestDbTarget;
let admin: postgres.Sql;
let direct: postgres.Sql;
let p: Plinth;
const logs: string[] = [];
const roles: string[] = [];

async function start(lines?: string[]): Promise<Plinth> {
  const config = loadConfig({ LOG_LEVEL: 'info' }, { databaseUrl: target.databaseUrl, port: 0 });
  return buildApp({ config, logger: lines ? capturingLogger('info', lines) : pino({ level: 'silent' }) });
}

beforeAll(async () => {
  target = await freshDbTarget();
  admin = postgres(target.adminUrl ?? '', { max: 1, onnotice: () => undefined });
  // Another client, as the database owner (psql, a migration tool).
  direct = postgres(target.databaseUrl ?? '', { max: 1, onnotice: () => undefined });
  const first = await start();
  await first.close();
  const inDb = new URL(target.adminUrl ?? '');
  inDb.pathname = new URL(target.databaseUrl ?? '').pathname;
  const su = postgres(inDb.toString(), { max: 1, onnotice: () => undefined });
  for (const t of await su<{ evtname: string }[]>`select evtname from pg_event_trigger where evtname like 'plinth%'`) {
    await su.unsafe(`alter event trigger ${t.evtname} disable`);
  }
  await su.end();
  p = await start(logs);
});
afterAll(async () => {
  await p?.close();
  await direct?.end();
  await target.cleanup();
  for (const r of roles) await admin.unsafe(`drop role if exists ${r}`).catch(() => undefined);
  await admin?.end();
});

const runner = (query: string) =>
  p.app.inject({ method: 'POST', url: '/api/v1/sql', headers: { authorization: `Bearer ${p.keys.secretKey}` }, payload: { query } });
const anon = (table: string) => p.app.inject({ url: `/api/v1/db/${table}`, headers: { apikey: p.keys.publicKey } });
const service = (table: string) => p.app.inject({ url: `/api/v1/db/${table}`, headers: { authorization: `Bearer ${p.keys.secretKey}` } });

/**
 * Reads `table` as anon until the answer is 200, checking that no answer on the way shows a
 * row; resolves to the final body. Closed (403, or 404 before the cache knows it) is fine.
 */
async function anonWhenOpen(table: string): Promise<unknown> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await anon(table);
    expect(res.body, `${table} while closing`).not.toContain('secret');
    if (res.statusCode === 200) return res.json();
    expect([403, 404]).toContain(res.statusCode);
    if (Date.now() > deadline) throw new Error(`${table} never answered 200 to anon: ${res.statusCode} ${res.body}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function rls(table: string): Promise<boolean> {
  const [row] = await direct.unsafe(`select relrowsecurity from pg_class where oid = to_regclass($1)`, [`public.${table}`]);
  return row?.relrowsecurity;
}

describe('a database owner without event triggers', () => {
  it('the start says once which fallback is in use', () => {
    const said = logs.filter((l) => l.includes('uses its fallback'));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0]).msg).toMatch(/reading the catalog every 250 ms/);
  });

  it('SQL runner: a new table has RLS at once, in the same script; an explicit disable in it is kept', async () => {
    expect((await runner(`create table r1 (id int primary key, v text); insert into r1 values (1, 'secret')`)).statusCode).toBe(200);
    expect((await anon('r1')).json()).toEqual([]);
    expect((await service('r1')).json()).toEqual([{ id: 1, v: 'secret' }]);
    const [owner] = await direct`select relowner::regrole::text as o from pg_class where oid = 'public.r1'::regclass`;
    expect(owner.o).toBe('plinth_sql');
    const opened = await runner(`create table r2 (id int); alter table r2 disable row level security; insert into r2 values (7)`);
    expect(opened.statusCode).toBe(200);
    expect((await anon('r2')).json()).toEqual([{ id: 7 }]);
  });

  it('SQL runner with its own transaction, and a view it makes is security_invoker', async () => {
    const res = await runner(
      `begin; create table r3 (id int, v text); insert into r3 values (1, 'secret'); commit;
       create view r3_view as select * from r3;`,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect((await anon('r3')).json()).toEqual([]);
    expect((await anon('r3_view')).json()).toEqual([]);
  });

  it('plinth migrate: closed as soon as the migration is applied', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-mig-'));
    try {
      writeFileSync(join(dir, '001_m.sql'), `create table m1 (id int, v text); insert into m1 values (1, 'secret');`);
      expect(await migrateApp(p.db, dir)).toEqual(['001_m.sql']);
      await p.schema.reload();
      expect((await anon('m1')).json()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('functions (migration 0070): closed in public whoever makes them, PostgreSQL default elsewhere, grants kept on replace', async () => {
    const may = async (fn: string) => {
      const [row] = await direct.unsafe(`select has_function_privilege('anon', $1, 'execute') as ok`, [fn]);
      return row.ok as boolean;
    };
    expect((await runner(`create function r_fn() returns int language sql as 'select 1'`)).statusCode).toBe(200);
    expect(await may('public.r_fn()')).toBe(false);
    await direct.unsafe(`create function public.d_fn() returns int language sql as 'select 1'`);
    expect(await may('public.d_fn()')).toBe(false);
    await direct.unsafe(`create schema fns`);
    await direct.unsafe(`create function fns.helper() returns int language sql as 'select 1'`);
    // The catalog poll gives it PostgreSQL's default back.
    await expect.poll(() => may('fns.helper()'), { timeout: 15_000, interval: 50 }).toBe(true);
    await direct.unsafe(`grant execute on function public.d_fn() to anon`);
    await direct.unsafe(`create or replace function public.d_fn() returns int language sql as 'select 2'`);
    await p.schema.reload();
    expect(await may('public.d_fn()')).toBe(true);
    const call = await p.app.inject({ method: 'POST', url: '/api/v1/rpc/d_fn', headers: { apikey: p.keys.publicKey }, payload: {} });
    expect(call.json()).toBe(2);
    const closed = await p.app.inject({ method: 'POST', url: '/api/v1/rpc/r_fn', headers: { apikey: p.keys.publicKey }, payload: {} });
    expect(closed.json().code).toBe('permission_denied');
  });

  it('another client (CREATE TABLE, AS, SELECT INTO, partitions, SET SCHEMA): closed, then served with RLS on', async () => {
    await direct.begin(async (tx) => {
      await tx.unsafe(`create table d1 (id int primary key, v text)`);
      await tx.unsafe(`insert into d1 values (1, 'secret')`);
      await tx.unsafe(`create table d2 as select * from d1`);
      await tx.unsafe(`select * into d3 from d1`);
      await tx.unsafe(`create table d4 (id int, v text) partition by range (id)`);
      await tx.unsafe(`create table d4_low partition of d4 for values from (0) to (100)`);
      await tx.unsafe(`insert into d4 values (1, 'secret')`);
      await tx.unsafe(`create schema elsewhere`);
      await tx.unsafe(`create table elsewhere.d5 (id int, v text)`);
      await tx.unsafe(`insert into elsewhere.d5 values (1, 'secret')`);
      await tx.unsafe(`alter table elsewhere.d5 set schema public`);
    });
    for (const t of ['d1', 'd2', 'd3', 'd4', 'd4_low', 'd5']) {
      expect(await anonWhenOpen(t), t).toEqual([]);
      expect(await rls(t), t).toBe(true);
    }
    expect((await service('d1')).json()).toEqual([{ id: 1, v: 'secret' }]);
  });

  it('another client: a view is made security_invoker before anon may read it; a materialized view stays closed', async () => {
    await direct.unsafe(`create view d1_view as select * from d1`);
    await direct.unsafe(`create materialized view d1_mat as select * from d1`);
    expect(await anonWhenOpen('d1_view')).toEqual([]);
    await expect.poll(async () => (await service('d1_mat')).statusCode, { timeout: 15_000, interval: 50 }).toBe(200);
    expect((await anon('d1_mat')).statusCode).toBe(403);
  });

  it('another client: schema changes are served without a restart, a policy opens rows', async () => {
    await direct.unsafe(`alter table d1 add column extra text`);
    await expect
      .poll(async () => (await p.app.inject({ url: '/api/v1/db/d1?select=extra', headers: { apikey: p.keys.publicKey } })).statusCode, {
        timeout: 15_000,
        interval: 50,
      })
      .toBe(200);
    await direct.unsafe(`create policy everyone on d1 for select using (true)`);
    expect((await anon('d1')).json()).toEqual([{ id: 1, v: 'secret', extra: null }]);
  });

  it('another login: its table is closed to anon; secured if the owner may, else closed to every API role', async () => {
    const other = `other_login_${Math.random().toString(36).slice(2, 8)}`;
    roles.push(other);
    await admin.unsafe(`create role ${other} login password 'other-secret'`);
    const inDb = new URL(target.adminUrl ?? '');
    inDb.pathname = new URL(target.databaseUrl ?? '').pathname;
    const su = postgres(inDb.toString(), { max: 1, onnotice: () => undefined });
    await su.unsafe(`grant create on schema public to ${other}`);
    await su.end();
    const url = new URL(target.databaseUrl ?? '');
    url.username = other;
    url.password = 'other-secret';
    const them = postgres(url.toString(), { max: 1, onnotice: () => undefined });
    try {
      await them.unsafe(`create table theirs (id int, v text)`);
      await them.unsafe(`insert into theirs values (1, 'secret')`);
      // A superuser owner (the first run) can secure another role's table; a hosted owner cannot.
      const [{ rolsuper }] = await direct`select rolsuper from pg_roles where rolname = current_user`;
      if (rolsuper) {
        expect(await anonWhenOpen('theirs')).toEqual([]);
        await direct.unsafe(`drop table theirs`);
      } else {
        await expect.poll(async () => (await service('theirs')).statusCode, { timeout: 15_000, interval: 50 }).toBe(403);
        expect((await anon('theirs')).statusCode).toBe(403);
        await them.unsafe(`drop table theirs`);
      }
    } finally {
      await them.end();
    }
  });

  it('an instance starting while another changes the privileges waits for it instead of failing', async () => {
    // Another instance, halfway through the same start step: it holds the lock and has changed
    // the default privileges, not yet committed. Without the lock, this start's own ALTER
    // DEFAULT PRIVILEGES waited on that row and then failed with "tuple concurrently updated".
    const other = postgres(target.databaseUrl ?? '', { max: 1, onnotice: () => undefined });
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const otherTx = other.begin(async (sql) => {
      await sql`select pg_advisory_xact_lock(${PRIVILEGES_LOCK})`;
      await sql.unsafe(
        'alter default privileges in schema public revoke select, insert, update, delete on tables from anon, authenticated',
      );
      locked();
      await held;
    });
    try {
      await isLocked;
      const starting = start();
      const outcome = starting.then(
        (plinth) => ({ plinth, error: null }),
        (error: unknown) => ({ plinth: null, error: String(error) }),
      );
      // The start is waiting on a lock (ours, or before the fix the row) when the other commits.
      const deadline = Date.now() + 30_000;
      while (
        (
          await direct<
            { n: number }[]
          >`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
        )[0].n === 0
      ) {
        if (Date.now() > deadline) throw new Error('the start never waited on a lock');
        await new Promise((r) => setTimeout(r, 20));
      }
      release();
      await otherTx;
      const { plinth, error } = await outcome;
      await plinth?.close();
      expect(error).toBeNull();
    } finally {
      release();
      await other.end();
    }
  }, 60_000);

  it('a table made while no server ran is closed at the next start', async () => {
    await p.close();
    await direct.unsafe(`create table offline (id int, v text); insert into offline values (1, 'secret')`);
    p = await start();
    expect((await anon('offline')).json()).toEqual([]);
    expect(await rls('offline')).toBe(true);
  });
});
