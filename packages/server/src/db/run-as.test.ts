import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, type TestDbTarget } from '../../test/db.js';
import { migrateSystem } from './migrate.js';
import { openPostgres } from './postgres.js';
import { MAX_STATEMENTS } from './run-as.js';
import { DbError, type Db } from './types.js';

// Db.runAs: the API's one round trip (db/run-as.ts), on both databases.
let db: Db;
let cleanup: () => Promise<void>;
let target: TestDbTarget;
const sub = '22222222-2222-4222-8222-222222222222';
const ROWS = `select coalesce('[' || string_agg(row_to_json(r)::text, ',') || ']', '[]') as body, count(*) as n, null::int8 as total
  from (select note from public.notes where owner = $1[1]::text::uuid or $1[2]::text = 'all') r`;
beforeAll(async () => {
  ({ db, cleanup, target } = await openTestDb());
  await migrateSystem(db);
  await db.query('create table public.notes (owner uuid not null, note text not null)');
  // Made by the owner directly: without event triggers only the poll would enable RLS on it.
  await db.query('alter table public.notes enable row level security');
  await db.query('grant select, insert on public.notes to anon, authenticated');
  await db.query(`create policy own on public.notes using (owner = auth.uid()) with check (owner = auth.uid())`);
  await db.query(`insert into public.notes values ($1, 'mine'), (gen_random_uuid(), 'theirs')`, [sub]);
});
afterAll(() => cleanup());

const as = (role: 'anon' | 'authenticated' | 'service') => ({
  role,
  claims: JSON.stringify(role === 'authenticated' ? { sub, role } : { role }),
  uid: role === 'authenticated' ? sub : null,
});

describe('runAs', () => {
  it('runs the statement as the role, with the claims, under RLS', async () => {
    expect(await db.runAs(as('authenticated'), ROWS, [sub, 'all'], true)).toEqual({ body: '[{"note":"mine"}]', n: 1, total: null });
    expect(await db.runAs(as('anon'), ROWS, [sub, 'all'], true)).toEqual({ body: '[]', n: 0, total: null });
    expect((await db.runAs(as('service'), ROWS, [sub, 'all'], true)).n).toBe(2);
  });

  it('without rows, n is the row count; a policy refusal is the database error', async () => {
    const insert = 'insert into public.notes (owner, note) values ($1[1]::text::uuid, $1[2])';
    expect(await db.runAs(as('authenticated'), insert, [sub, 'new'], false)).toEqual({ body: null, n: 1, total: null });
    const refused = await db.runAs(as('authenticated'), insert, ['33333333-3333-4333-8333-333333333333', 'x'], false).catch((e) => e);
    expect(refused).toBeInstanceOf(DbError);
    expect(refused.sqlstate).toBe('42501');
  });

  it('leaves neither role nor claims behind', async () => {
    await db.runAs(as('authenticated'), ROWS, [sub, 'x'], true);
    const after = await db.query<{ who: string; uid: string | null }>('select current_user as who, auth.uid()::text as uid');
    expect(after.rows[0].who).not.toBe('authenticated');
    expect(after.rows[0].uid).toBeNull();
  });

  it('the API roles cannot call plinth.run_as to become another role', async () => {
    const escalate =
      "select * from plinth.run_as('service', '{}', null, 'select null::text, count(*), null::int8 from public.notes', '{}', true)";
    for (const role of ['anon', 'authenticated', 'service'] as const) {
      const err = await db.runAs(as(role), escalate, [], false).catch((e) => e);
      expect(err, role).toBeInstanceOf(DbError);
      expect(err.sqlstate, role).toBe('42501');
    }
  });

  it('auth.uid() takes the uid given, and reads the claims when none was given', async () => {
    const uid = 'select null::text as body, count(*) as n, null::int8 as total from (select 1) x where auth.uid() = $1[1]::text::uuid';
    const claimsOnly = { role: 'authenticated' as const, claims: JSON.stringify({ sub, role: 'authenticated' }) };
    expect((await db.runAs(as('authenticated'), uid, [sub], true)).n).toBe(1);
    expect((await db.runAs(claimsOnly, uid, [sub], true)).n).toBe(1);
    // No user: null even if the claims were to say otherwise.
    expect((await db.runAs({ ...claimsOnly, uid: null }, uid, [sub], true)).n).toBe(0);
    // Claims set by hand afterwards on a connection that ran runAs (the SQL runner's way).
    const byHand = await db.transaction(async (tx) => {
      await tx.query("select set_config('request.jwt.claims', $1, true)", [JSON.stringify({ sub })]);
      return (await tx.query<{ uid: string }>('select auth.uid()::text as uid')).rows[0].uid;
    });
    expect(byHand).toBe(sub);
  });

  it('binds any text as a value, never as SQL (property)', async () => {
    const echo = 'select array_to_json($1::text[])::text as body, cardinality($1::text[])::int8 as n, null::int8 as total';
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.string({ unit: 'grapheme' }).filter((v) => !v.includes('\0')),
          { maxLength: 6 },
        ),
        async (values) => {
          const r = await db.runAs(as('anon'), echo, values, true);
          expect([JSON.parse(r.body ?? ''), r.n]).toEqual([values, values.length]);
        },
      ),
      { numRuns: 60 },
    );
    // PostgreSQL's text cannot hold NUL: a client error (class 22), not a failure of the server.
    const nul = await db.runAs(as('anon'), echo, ['a\0b'], true).catch((e) => e);
    expect([nul instanceof DbError, nul.sqlstate?.slice(0, 2)]).toEqual([true, '22']);
  });

  it('a statement that changes the role is refused, and what it wrote is rolled back', async () => {
    const note = `switched ${Math.random()}`;
    const switched = `with w as (insert into public.notes (owner, note) values ($1[1]::text::uuid, $1[2]) returning 1)
      select null::text as body, (select count(*) from w) as n, null::int8 as total from (select set_config('role', 'service', true)) s`;
    const err = await db.runAs(as('authenticated'), switched, [sub, note], true).catch((e) => e);
    expect(err).toBeInstanceOf(DbError);
    expect([err.sqlstate, err.message]).toEqual(['42501', 'The request ran SQL that changed the role from authenticated to service.']);
    const kept = await db.query<{ n: number }>('select count(*)::int as n from public.notes where note = $1', [note]);
    expect(kept.rows[0].n).toBe(0);
  });

  it('a deferred trigger that changes the role is refused too (it fires before the check)', async () => {
    await db.query('create table public.deferred (v text)');
    await db.query('alter table public.deferred enable row level security');
    await db.query('grant select, insert on public.deferred to authenticated');
    await db.query('create policy anyone on public.deferred using (true) with check (true)');
    await db.query(`create function public.switch_role() returns trigger language plpgsql as $$
      begin perform set_config('role', 'service', false); return null; end $$`);
    await db.query(
      'create constraint trigger later after insert on public.deferred deferrable initially deferred for each row execute function public.switch_role()',
    );
    const err = await db.runAs(as('authenticated'), 'insert into public.deferred (v) values ($1[1])', ['late'], false).catch((e) => e);
    expect([err.sqlstate, err.message]).toEqual(['42501', 'The request ran SQL that changed the role from authenticated to service.']);
    expect((await db.query<{ n: number }>('select count(*)::int as n from public.deferred')).rows[0].n).toBe(0);
    // The connection runs the next request as its own role again.
    expect((await db.runAs(as('anon'), ROWS, [sub, 'all'], true)).n).toBe(0);
  });

  // db/run-as.ts: one batch per request on a session (a connection) that keeps its statements.
  describe('statements prepared per session', () => {
    /** A Db of one connection, so that its requests share one session. */
    const oneConnection = async (): Promise<Db> =>
      target.databaseUrl
        ? await openPostgres(target.databaseUrl, { max: 1 })
        : (Object.assign(Object.create(db), { close: async () => {} }) as Db);
    /** What the session that runs requests has prepared, read by a request on it. */
    const prepared = async (one: Db) =>
      (
        await one.runAs(
          as('service'),
          "select null::text as body, count(*) as n, null::int8 as total from pg_prepared_statements where name like 'plinth\\_%'",
          [],
          true,
        )
      ).n;

    it('serves new values and each role its own rows from one prepared statement, and follows schema changes', async () => {
      const one = await oneConnection();
      try {
        await one.query('create table public.cached (owner uuid not null, v text)');
        await one.query('alter table public.cached enable row level security');
        await one.query('grant select on public.cached to anon, authenticated');
        await one.query('create policy own on public.cached using (owner = auth.uid())');
        await one.query(`insert into public.cached values ($1, 'a'), (gen_random_uuid(), 'b')`, [sub]);
        const stmt = `select coalesce(string_agg(v, ',' order by v), '') as body, count(*) as n, null::int8 as total from public.cached where v <> $1[1]`;
        for (let i = 0; i < 8; i++) {
          expect((await one.runAs(as('authenticated'), stmt, ['x'], true)).body).toBe('a');
          expect((await one.runAs(as('service'), stmt, ['x'], true)).body).toBe('a,b');
          expect((await one.runAs(as('anon'), stmt, ['x'], true)).body).toBe('');
        }
        expect((await one.runAs(as('service'), stmt, ['a'], true)).body).toBe('b');
        // A column added, the table dropped and made again: the prepared statement follows.
        await one.query('alter table public.cached add column extra int');
        expect((await one.runAs(as('service'), stmt, ['x'], true)).body).toBe('a,b');
        await one.query('drop table public.cached');
        const gone = await one.runAs(as('service'), stmt, ['x'], true).catch((e) => e);
        expect(gone.sqlstate).toBe('42P01');
        await one.query('create table public.cached (v text)');
        await one.query(`insert into public.cached values ('c')`);
        expect((await one.runAs(as('service'), stmt, ['x'], true)).body).toBe('c');
      } finally {
        await one.query('drop table if exists public.cached');
        await one.close();
      }
    });

    it('keeps at most 200 statements per session (and its own two)', async () => {
      const one = await oneConnection();
      try {
        const all = Number((await one.query<{ n: number }>('select count(*)::int as n from public.notes')).rows[0].n);
        for (let i = 0; i < 230; i++) {
          const r = await one.runAs(
            as('service'),
            `select null::text as body, count(*) as n, null::int8 as total from public.notes where ${i} = ${i} and $1[1] = 'y'`,
            ['y'],
            true,
          );
          expect(r.n).toBe(all);
        }
        // The counting statement is one more of the 200, its batch closes the oldest first.
        expect(await prepared(one)).toBe(MAX_STATEMENTS + 2);
      } finally {
        await one.close();
      }
    });

    it('statements dropped under the session are prepared again; one a script planted under their name is never run', async () => {
      const one = await oneConnection();
      try {
        const honest = (await one.runAs(as('authenticated'), ROWS, [sub, 'x'], true)).body;
        expect(honest).toContain('"mine"');
        // SQL a request runs that drops the session's statements: that request fails alone.
        await one.query(`create function public.drop_prepared() returns int language plpgsql as $$
          begin execute 'deallocate all'; return 1; end $$`);
        const dropping = 'select null::text as body, public.drop_prepared()::int8 as n, null::int8 as total';
        const err = await one.runAs(as('service'), dropping, [], true).catch((e) => e);
        expect(err.sqlstate).toBe('26000');
        expect((await one.runAs(as('authenticated'), ROWS, [sub, 'x'], true)).body).toBe(honest);
        // A script (on PGlite's one session; on PostgreSQL a connection of its own) that puts a
        // statement of its own under each of their names.
        await one.script(`do $$ declare r record; begin
          for r in select name, parameter_types::text[] as types from pg_prepared_statements where name like 'plinth\\_%' loop
            execute format('deallocate %I', r.name);
            execute format('prepare %I(%s) as select ''[{"note":"planted"}]''::text, 1::int8, null::int8', r.name, array_to_string(r.types, ','));
          end loop; end $$`);
        expect((await one.runAs(as('authenticated'), ROWS, [sub, 'x'], true)).body).toBe(honest);
      } finally {
        await one.query('drop function if exists public.drop_prepared()');
        await one.close();
      }
    });

    it('leaves no setting of a request to the next one on the session', async () => {
      const one = await oneConnection();
      try {
        const leak = "select null::text as body, count(*) as n, null::int8 as total from (select set_config('request.leak', 'x', true)) s";
        expect((await one.runAs(as('authenticated'), leak, [], true)).n).toBe(1);
        const read = `select json_build_object('leak', coalesce(current_setting('request.leak', true), ''), 'who', current_user,
            'claims', current_setting('request.jwt.claims', true))::text as body, 1::int8 as n, null::int8 as total`;
        expect(JSON.parse((await one.runAs({ role: 'anon', claims: '{}' }, read, [], true)).body ?? '')).toEqual({
          leak: '',
          who: 'anon',
          claims: '{}',
        });
      } finally {
        await one.close();
      }
    });
  });
});
