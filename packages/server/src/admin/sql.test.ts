import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// The SQL runner shares the database with every API request: on PGlite its one connection, on
// PostgreSQL the pool. Whatever a script does to its session must not outlive the script.
let t: TestServer;
let addr: string;
beforeAll(async () => {
  t = await createAuthServer();
  const res = await t.sql(`create table notes (id serial primary key, body text not null);
    create policy anyone on notes for select using (true);
    insert into notes (body) values ('hello');`);
  expect(res.statusCode, res.body).toBe(200);
  addr = email('runner');
  await signUp(t, addr);
});
afterAll(() => t?.stop());

async function serverStillWorks() {
  const read = await t.app.inject({ url: '/api/v1/db/notes', headers: t.as.anon });
  expect(read.statusCode, read.body).toBe(200);
  expect(read.json()).toEqual([{ id: 1, body: 'hello' }]);
  const signin = await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' });
  expect(signin.statusCode, signin.body).toBe(200);
  // pg_locks is cluster-wide: other test files' servers take advisory locks of their own
  // (migrations at start), so count only the lock a script took here.
  const who = await t.sql(
    `select current_user as u, current_setting('search_path') as sp, (select count(*)::int from pg_locks where locktype = 'advisory' and objid = 42 and database = (select oid from pg_database where datname = current_database())) as locks`,
  );
  expect(who.json().results[0].rows[0]).toEqual({ u: 'plinth_sql', sp: 'public, auth', locks: 0 });
  expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
}

describe('a script leaves nothing behind', () => {
  it.each([
    ['an open transaction', 'begin; select 1'],
    ['a failed transaction', 'begin; select 1/0'],
    ['a session SET ROLE', 'set role authenticated; select current_user'],
    ['a session search_path', 'set search_path = pg_catalog; select 1'],
    ['a session setting through set_config', "select set_config('search_path', 'pg_catalog', false)"],
    ['an advisory lock', 'select pg_advisory_lock(42)'],
    ['a temp table', 'create temp table notes (id int); insert into notes values (99)'],
    ['a statement timeout of its own', "set statement_timeout = '1ms'; select 1"],
  ])('%s', async (_name, script) => {
    // As many times as the pool has connections, so every pooled connection had its chance.
    for (let i = 0; i < 12; i++) await t.sql(script);
    await serverStillWorks();
  });

  // A query with `params` takes another path (one statement, bound values): the same cleanup,
  // whether it succeeds or fails.
  it.each([
    ['a session role through set_config', "select set_config('role', $1, false)", ['anon'], 200],
    ['a session search_path through set_config', "select set_config('search_path', $1, false)", ['pg_catalog'], 200],
    ['an advisory lock, then an error', 'select pg_advisory_lock($1::int), 1/0', [42], 400],
    ['a session authorization, then an error', "select set_config('session_authorization', $1, false), 1/0", ['anon'], 400],
  ])('with params: %s', async (_name, query, params, status) => {
    for (let i = 0; i < 12; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/sql', headers: t.as.service, payload: { query, params } });
      expect(res.statusCode, res.body).toBe(status);
    }
    await serverStillWorks();
  });

  it('an open transaction is rolled back, as when a client disconnects', async () => {
    await t.sql("begin; insert into notes (body) values ('never committed')");
    const rows = (await t.sql('select body from notes order by id')).json().results[0].rows;
    expect(rows).toEqual([{ body: 'hello' }]);
  });
});
