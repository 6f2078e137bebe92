import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// The SQL runner shares the database with every API request: on PGlite its one connection, on
// PostgreSQL the pool. Whatever a script does to its session must not outlive the script.
let t: TestServer;
let addr: string;
let user: { id: string; email: string };
beforeAll(async () => {
  t = await createAuthServer();
  const res = await t.sql(`create table notes (id serial primary key, body text not null);
    create policy anyone on notes for select using (true);
    insert into notes (body) values ('hello');`);
  expect(res.statusCode, res.body).toBe(200);
  addr = email('runner');
  user = (await signUp(t, addr)).user;
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

describe('what it answers (POST /api/v1/sql)', () => {
  it.each([
    ['no key', {}, 401, 'unauthorized'],
    ['a wrong apikey', { apikey: 'pk_wrong' }, 401, 'unauthorized'],
    ['a wrong bearer', { authorization: 'Bearer sk_wrong' }, 401, 'unauthorized'],
    ['a malformed Authorization', { authorization: 'Basic abc' }, 401, 'unauthorized'],
    ['the public key', 'anon', 403, 'forbidden'],
  ])('the SQL runner refuses %s', async (_name, headers, status, code) => {
    const h = headers === 'anon' ? t.as.anon : (headers as Record<string, string>);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/sql', headers: h, payload: { query: 'select 1' } });
    expect(res.statusCode).toBe(status);
    expect(res.json().code).toBe(code);
  });

  it('the SQL runner returns one result per statement with typed columns', async () => {
    const res = await t.sql(
      "create table answers (id serial primary key, body text); insert into answers (body) values ('a'), ('b'); select id, body from answers order by id",
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toMatchObject({ command: 'CREATE TABLE', rows: [] });
    expect(body.results[1]).toMatchObject({ command: 'INSERT', rowCount: 2 });
    expect(body.results[2]).toMatchObject({
      command: 'SELECT',
      rowCount: 2,
      columns: [
        { name: 'id', type: 'int4' },
        { name: 'body', type: 'text' },
      ],
      rows: [
        { id: 1, body: 'a' },
        { id: 2, body: 'b' },
      ],
      truncated: false,
    });
    expect(typeof body.durationMs).toBe('number');
  });

  it('the SQL runner truncates results at 1000 rows', async () => {
    const res = await t.sql('select g from generate_series(1, 1500) g');
    const r = res.json().results[0];
    expect(r.rows).toHaveLength(1000);
    expect(r.truncated).toBe(true);
  });

  it('a SQL error is 400 sql_error with sqlstate and position', async () => {
    const res = await t.sql('select 1;\nselect nonexistent_column from answers');
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('sql_error');
    expect(body.details.sqlstate).toBe('42703');
    expect(body.details.position).toBeGreaterThan(10);
  });

  it('a failed script changes nothing (it is atomic)', async () => {
    await t.sql("insert into answers (body) values ('c'); select 1/0");
    const res = await t.sql("select count(*)::int as n from answers where body = 'c'");
    expect(res.json().results[0].rows[0].n).toBe(0);
  });

  it('bad JSON and unknown routes get the error shape', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { ...t.as.service, 'content-type': 'application/json' },
      payload: '{"query":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_json');
    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/sql', headers: t.as.service, payload: { nope: 1 } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('invalid_request');
    const none = await t.app.inject({ url: '/nowhere' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'route_not_found' });
  });
});

// What the runner can see of auth (docs/security.md): the users, yes; any hash of a password
// or token, no.
describe('what it can see', () => {
  it('reads the users as the spec shows', async () => {
    const res = await t.sql(`select id, email, created_at, email_confirmed_at from users where email = '${user.email}'`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results[0].rows).toEqual([
      { id: user.id, email: user.email, created_at: expect.any(String), email_confirmed_at: null },
    ]);
  });

  it('users carry no secret: the columns GoTrue keeps secrets in (migration 0140) stay empty', async () => {
    const cols: string[] = (await t.sql('select * from auth.users limit 1')).json().results[0].columns.map((c: { name: string }) => c.name);
    expect(cols).not.toContain('hash');
    // GoTrue's columns, there for Supabase SQL that names them; Plinth keeps hashes and tokens elsewhere.
    const secretish = cols.filter((c) => /pass|hash|token/.test(c)).sort();
    expect(secretish).toEqual(
      [
        'confirmation_token',
        'email_change_token_current',
        'email_change_token_new',
        'encrypted_password',
        'phone_change_token',
        'reauthentication_token',
        'recovery_token',
      ].sort(),
    );
    // A user written with a bcrypt hash (a Supabase seed does this): the hash leaves the row.
    await t.db.query('insert into auth.users (id, email, encrypted_password) values ($1, $2, $3)', [
      '7d6c2c55-8b0a-4d4e-9f0e-3b1b2f0c9a01',
      'seeded@example.com',
      '$2a$10$abcdefghijklmnopqrstuuM9Jq0u2mV6o5e4b0e2pQ7nYlq8JmW2K',
    ]);
    const filled = await t.sql(
      `select count(*)::int as n from auth.users where ${secretish.map((c) => `coalesce(${c}, '') <> ''`).join(' or ')}`,
    );
    expect(filled.json().results[0].rows).toEqual([{ n: 0 }]);
    const users = await t.sql('select count(*)::int as n from auth.users');
    expect(users.json().results[0].rows[0].n).toBeGreaterThan(0);
  });

  it.each([
    'auth.passwords',
    'passwords',
    'auth.refresh_tokens',
    'refresh_tokens',
    'auth.one_time_tokens',
    'auth.signing_keys',
    'plinth.project_keys',
  ])('cannot read %s (42501 permission denied)', async (table) => {
    const res = await t.sql(`select * from ${table}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'sql_error', details: { sqlstate: '42501' } });
  });

  it('cannot read hashes through a function or view it creates either', async () => {
    const res = await t.sql('create view peek as select hash from auth.passwords');
    if (res.statusCode === 200) {
      // The view is owned by the runner's role, so reading it checks that role's privileges.
      expect((await t.sql('select * from peek')).json()).toMatchObject({ code: 'sql_error', details: { sqlstate: '42501' } });
    } else {
      expect(res.json().details.sqlstate).toBe('42501');
    }
  });

  it('leaves no role behind: the next statement of the server runs as before', async () => {
    await t.sql('select 1/0');
    await t.sql('select 1');
    const { rows } = await t.db.query<{ ok: boolean }>("select current_user <> 'plinth_sql' as ok");
    expect(rows[0].ok).toBe(true);
    expect((await t.db.query('select count(*) from auth.passwords')).rows).toHaveLength(1);
  });

  it('auth.uid() is null for the runner and the claims user under a set role', async () => {
    const res = await t.sql(
      `select auth.uid() as none; set local role authenticated; select set_config('request.jwt.claims', '{"sub":"${user.id}"}', true); select auth.uid() as uid`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json().results;
    expect(r[0].rows).toEqual([{ none: null }]);
    expect(r.at(-1).rows).toEqual([{ uid: user.id }]);
  });
});

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
