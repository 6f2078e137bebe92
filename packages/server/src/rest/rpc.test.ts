import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BLOG_SQL, BOB } from '../../test/blog.js';
import { createTestServer, type TestServer } from '../../test/harness.js';

// POST/GET /api/v1/rpc/{function} (docs/api.md) on the blog schema: named arguments, overloads,
// scalar, row and set results, set results shaped like a table, errors, and privileges.
let t: TestServer;
let alice: Record<string, string>;

const FUNCTIONS = `
create function add(a int, b int) returns int language sql immutable as 'select a + b';
create function greet(name text) returns text language sql stable as $$ select 'Hello, ' || name $$;
create function greet(first text, last text) returns text language sql stable as $$ select 'Hello, ' || first || ' ' || last $$;
create function with_default(a int, b int default 10) returns int language sql immutable as 'select a + b';
create function twins(x int) returns int language sql immutable as 'select x';
create function twins(x text) returns text language sql immutable as 'select x';
create function bump(note_id int) returns notes language sql as $$
  update notes set body = body || '!' where id = note_id returning * $$;
create function posts_by(author int) returns setof posts language sql stable as $$ select * from posts where author_id = author $$;
create function post_stats() returns table (author_id int, n bigint) language sql stable as $$
  select author_id, count(*) from posts group by author_id $$;
create function ids(n int) returns setof int language sql immutable as $$ select generate_series(1, n) $$;
create function nothing() returns void language sql as $$ select $$;
create function refuse(reason text) returns void language plpgsql as $$
begin
  raise exception 'Refused: %', reason using detail = 'the detail', hint = 'the hint';
end $$;
create function whoami() returns uuid language sql stable as $$ select auth.uid() $$;
create function tagged(tags text[], meta jsonb) returns jsonb language sql immutable as $$ select jsonb_build_object('tags', tags, 'meta', meta) $$;
create function out_params(a int, out doubled int, out tripled int) language sql immutable as 'select a * 2, a * 3';
create function closed() returns int language sql as 'select 1';
grant execute on function add(int, int), greet(text), greet(text, text), with_default(int, int), twins(int), twins(text), bump(int),
  posts_by(int), post_stats(), ids(int), nothing(), refuse(text), whoami(), tagged(text[], jsonb), out_params(int)
  to anon, authenticated;
`;

beforeAll(async () => {
  t = await createTestServer();
  for (const sql of [BLOG_SQL, FUNCTIONS]) {
    const res = await t.sql(sql);
    expect(res.statusCode, res.body).toBe(200);
  }
  alice = t.as.user(await t.mintToken(ALICE));
});
afterAll(() => t?.stop());

function post(fn: string, body: unknown, headers: Record<string, string> = alice, query = '') {
  return t.app.inject({ method: 'POST', url: `/api/v1/rpc/${fn}${query ? `?${query}` : ''}`, headers, payload: body as object });
}
function get(fn: string, query: string, headers: Record<string, string> = alice) {
  return t.app.inject({ url: `/api/v1/rpc/${fn}?${query}`, headers });
}
function expectError(res: { statusCode: number; body: string }, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = JSON.parse(res.body);
  expect(body.code).toBe(code);
  return body;
}

describe('calls', () => {
  it('a scalar result is the JSON value, by POST or (stable and immutable) GET', async () => {
    expect((await post('add', { a: 1, b: 2 })).json()).toBe(3);
    expect((await get('add', 'a=40&b=2')).json()).toBe(42);
    expect((await post('greet', { name: 'Ada' })).json()).toBe('Hello, Ada');
  });

  it('overloads are told apart by argument names; defaults may be left out', async () => {
    expect((await post('greet', { first: 'Ada', last: 'Lovelace' })).json()).toBe('Hello, Ada Lovelace');
    expect((await post('with_default', { a: 1 })).json()).toBe(11);
    expect((await post('with_default', { a: 1, b: 2 })).json()).toBe(3);
  });

  it('a row result is an object (or null); it runs as the caller, under RLS', async () => {
    const own = await post('bump', { note_id: 1 });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json()).toMatchObject({ id: 1, body: 'alice note!', owner: ALICE });
    // Bob's note is not Alice's: the update inside changes nothing, the row is null.
    expect((await post('bump', { note_id: 2 })).json()).toBeNull();
    const bobs = await t.app.inject({ url: '/api/v1/db/notes/2', headers: t.as.service });
    expect(bobs.json().body).toBe('bob note');
    expect((await post('out_params', { a: 2 })).json()).toEqual({ doubled: 4, tripled: 6 });
  });

  it('a set result is an array that takes select (with embedding), filters, order, limit, offset and counts', async () => {
    expect((await post('posts_by', { author: 1 }, alice, 'select=id&order=id')).json()).toEqual([{ id: 1 }, { id: 2 }]);
    const shaped = await post(
      'posts_by',
      { author: 1 },
      { ...alice, prefer: 'count=exact' },
      'select=id,author(name),tags(name)&order=id.desc&limit=1',
    );
    expect(shaped.json()).toEqual([{ id: 2, author: { name: 'Ada' }, tags: [] }]);
    expect(shaped.headers['content-range']).toBe('0-0/2');
    expect((await get('posts_by', 'author=1&select=id&eq.published=true')).json()).toEqual([{ id: 1 }]);
    expect((await post('post_stats', {}, alice, 'gt.n=1&order=author_id')).json()).toEqual([{ author_id: 1, n: 2 }]);
    expect((await post('ids', { n: 5 }, alice, 'order=ids.desc&limit=2&offset=1')).json()).toEqual([4, 3]);
    expect((await get('ids', 'n=5&gt.ids=3')).json()).toEqual([4, 5]);
    // Bob's draft (post 5) is not Alice's: the function's select is under RLS.
    expect((await post('posts_by', { author: 2 }, alice, 'select=id')).json()).toEqual([{ id: 3 }]);
  });

  it('void answers 204; auth.uid() is the caller', async () => {
    const res = await post('nothing', {});
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await post('whoami', {})).json()).toBe(ALICE);
    expect((await post('whoami', {}, t.as.anon)).json()).toBeNull();
  });

  it('arrays, objects and JSON go to their types; GET takes the text forms', async () => {
    const body = { tags: ['a', 'b,c', 'd"e'], meta: { k: [1, { x: null }] } };
    expect((await post('tagged', body)).json()).toEqual(body);
    const viaGet = await get('tagged', `tags=${encodeURIComponent('{a,b}')}&meta=${encodeURIComponent('{"k":1}')}`);
    expect(viaGet.json()).toEqual({ tags: ['a', 'b'], meta: { k: 1 } });
  });

  it('a function created a moment ago is found', async () => {
    const res = await t.sql(`create function fresh() returns text language sql as $$ select 'new' $$;
      grant execute on function fresh() to authenticated;`);
    expect(res.statusCode).toBe(200);
    await expect.poll(async () => (await post('fresh', {})).json(), { timeout: 10_000, interval: 50 }).toBe('new');
  });
});

describe('errors', () => {
  it('raise exception: 400 raised_exception with its message, detail and hint', async () => {
    const body = expectError(await post('refuse', { reason: 'no budget' }), 400, 'raised_exception');
    expect(body).toEqual({
      code: 'raised_exception',
      message: 'Refused: no budget',
      details: { sqlstate: 'P0001', detail: 'the detail', hint: 'the hint' },
    });
  });

  it('unknown function or argument names: 404 function_not_found with the known signatures', async () => {
    expectError(await post('nope', {}), 404, 'function_not_found');
    const body = expectError(await post('greet', { nick: 'x' }), 404, 'function_not_found');
    expect(body.details.signatures).toEqual(['greet(name text)', 'greet(first text, last text)']);
    expectError(await post('add', { a: 1 }), 404, 'function_not_found');
  });

  const cases: Array<[string, () => ReturnType<typeof post>, number, string]> = [
    ['overloads taking the same names', () => post('twins', { x: 1 }), 400, 'ambiguous_function'],
    ['a volatile function by GET', () => get('bump', 'note_id=1'), 405, 'method_not_allowed'],
    ['a value of the wrong type', () => post('add', { a: 'x', b: 1 }), 400, 'invalid_value'],
    ['an object for an int', () => post('add', { a: { x: 1 }, b: 1 }), 400, 'invalid_value'],
    ['a body that is not an object', () => post('add', [1, 2]), 400, 'invalid_request'],
    ['select on a scalar result', () => post('add', { a: 1, b: 2 }, alice, 'select=add'), 400, 'invalid_parameter'],
    ['an unknown column of a set', () => post('posts_by', { author: 1 }, alice, 'eq.nope=1'), 400, 'column_not_found'],
    ['PATCH', () => t.app.inject({ method: 'PATCH', url: '/api/v1/rpc/add', headers: alice, payload: {} }), 405, 'method_not_allowed'],
    ['an argument given twice by GET', () => get('add', 'a=1&a=2&b=1'), 400, 'invalid_parameter'],
  ];
  for (const [what, call, status, code] of cases) {
    it(`${what}: ${status} ${code}`, async () => {
      expectError(await call(), status, code);
    });
  }
});

describe('GET runs a function read-only (review round 3, I1)', () => {
  // A stable function that calls a volatile one: GET used to write through it.
  const SQL = `
  create table rpc_log (who text, at timestamptz default now());
  grant insert, select on rpc_log to anon, authenticated;
  create policy rpc_log_all on rpc_log for all using (true) with check (true);
  create function w_log() returns int language sql volatile as $$ insert into rpc_log (who) values (current_user) returning 1 $$;
  create function s_wrap() returns int language sql stable as $$ select w_log() $$;
  create function s_rows() returns setof int language plpgsql stable as $$ begin perform w_log(); return next 1; end $$;
  grant execute on function w_log(), s_wrap(), s_rows() to anon, authenticated;
  `;
  const logged = async () => Number((await t.db.query<{ n: number }>('select count(*)::int as n from rpc_log')).rows[0].n);

  beforeAll(async () => {
    const res = await t.sql(SQL);
    expect(res.statusCode, res.body).toBe(200);
  });

  it.each([
    ['a stable function calling a volatile one', 's_wrap', 'GET', {}],
    ['a set-returning one', 's_rows', 'GET', {}],
    ['a set-returning one, counted', 's_rows', 'GET', { prefer: 'count=exact' }],
    ['by HEAD', 's_wrap', 'HEAD', {}],
  ] as const)('%s is refused by GET with a 4xx and writes nothing; POST still writes', async (_what, fn, method, extra) => {
    const before = await logged();
    for (const who of [alice, t.as.service]) {
      const res = await t.app.inject({ method, url: `/api/v1/rpc/${fn}`, headers: { ...who, ...extra } });
      expect(res.statusCode, res.body).toBe(405);
      if (method === 'GET') {
        expect(res.json()).toMatchObject({ code: 'method_not_allowed', details: { sqlstate: '25006' } });
        expect(res.json().message).toMatch(/POST/);
      }
    }
    expect(await logged()).toBe(before);
    const ok = await post(fn, {});
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await logged()).toBe(before + 1);
    // The read-only transaction ends with the request: the next write through REST works.
    const write = await t.app.inject({ method: 'POST', url: '/api/v1/db/rpc_log', headers: alice, payload: { who: 'rest' } });
    expect(write.statusCode, write.body).toBe(201);
  });

  it('a stable function that only reads still answers by GET', async () => {
    expect((await get('greet', 'name=Ada')).json()).toBe('Hello, Ada');
  });
});

describe('functions are closed until granted', () => {
  it('a new function of public is not executable by anon or authenticated; the secret key may', async () => {
    expectError(await post('closed', {}, t.as.anon), 403, 'permission_denied');
    const refused = expectError(await post('closed', {}), 403, 'permission_denied');
    // The answer names the function and the grant that opens it (db/errors.ts).
    expect(refused.message).toContain('grant execute on function closed to authenticated');
    expect(refused.details).toEqual({ function: 'closed', sqlstate: '42501' });
    expect((await post('closed', {}, t.as.service)).json()).toBe(1);
    const priv = await t.sql(`select has_function_privilege('anon', 'closed()', 'execute') as anon,
      has_function_privilege('authenticated', 'closed()', 'execute') as authenticated,
      has_function_privilege('service', 'closed()', 'execute') as service`);
    expect(priv.json().results[0].rows[0]).toEqual({ anon: false, authenticated: false, service: true });
  });

  it('a grant opens it to that role only', async () => {
    expect((await t.sql('grant execute on function closed() to authenticated')).statusCode).toBe(200);
    expect((await post('closed', {})).json()).toBe(1);
    expectError(await post('closed', {}, t.as.anon), 403, 'permission_denied');
  });

  it('create or replace keeps the grants', async () => {
    const res = await t.sql(`create or replace function add(a int, b int) returns int language sql immutable as 'select a + b + 0';
      select has_function_privilege('anon', 'add(int, int)', 'execute') as add`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results.at(-1).rows[0]).toEqual({ add: true });
  });

  it('a function outside public keeps PostgreSQL default (EXECUTE for everyone), and the API does not call it', async () => {
    // Made by the database owner, as a migration or psql would (not the SQL runner).
    await t.db.query('create schema private');
    await t.db.query("create function private.helper() returns int language sql as 'select 1'");
    // Without event triggers, the catalog poll gives it back within a moment.
    const anonMay = async () =>
      (await t.db.query<{ ok: boolean }>("select has_function_privilege('anon', 'private.helper()', 'execute') as ok")).rows[0].ok;
    await expect.poll(anonMay, { timeout: 10_000, interval: 50 }).toBe(true);
    expectError(await post('helper', {}, t.as.service), 404, 'function_not_found');
  });

  it('a function the owner makes in public is closed too', async () => {
    await t.db.query("create function public.owners() returns int language sql as 'select 2'");
    const closed = await t.sql(`select has_function_privilege('anon', 'owners()', 'execute') as anon,
      has_function_privilege('authenticated', 'owners()', 'execute') as authenticated`);
    expect(closed.json().results[0].rows[0]).toEqual({ anon: false, authenticated: false });
    // Served within a second of its creation (the schema cache reloads on the change).
    await expect.poll(async () => (await post('owners', {})).json().code, { timeout: 10_000, interval: 50 }).toBe('permission_denied');
  });

  it("Bob's rows stay Bob's whatever a function is asked", async () => {
    const bob = t.as.user(await t.mintToken(BOB));
    expect((await post('bump', { note_id: 1 }, bob)).json()).toBeNull();
  });
});

// Calls go through Db.runAs like reads (db/run-as.ts): the statement prepared once per session
// and role, at most 200 per session, the least recently used closed first.
describe('calls as prepared statements', () => {
  /** The statements of the session that runs requests, read by a call on it (runAs's names: plinth_…). */
  const prepared = async () => Number((await post('prepared_here', {}, t.as.service)).json());

  beforeAll(async () => {
    const res = await t.sql(`
      create function shape_of(a int, b int default 0) returns int language sql immutable as 'select a + b';
      create function prepared_here() returns bigint language sql volatile as
        $$ select count(*) from pg_prepared_statements where name like 'plinth\\_%' $$;
      do $$ begin
        for i in 0..219 loop
          execute format('create function echo_%s(v int) returns int language sql immutable as ''select v + %s''', i, i);
        end loop;
      end $$;`);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('a call with other values reuses its statement; one of another shape prepares one more', async () => {
    const sk = t.as.service;
    // Served within a second of their creation (the schema cache reloads on the change; one script made both).
    await expect.poll(async () => (await post('prepared_here', {}, sk)).statusCode, { timeout: 10_000, interval: 50 }).toBe(200);
    const before = await prepared();
    for (let i = 0; i < 5; i++) expect((await post('shape_of', { a: i }, sk)).json()).toBe(i);
    // Requests one at a time go to the same connection (db/wire-pool.ts: the first idle one).
    expect(await prepared()).toBe(before + 1);
    // GET runs the call read-only: a statement of its own, prepared once as well.
    for (let i = 0; i < 3; i++) expect((await get('shape_of', `a=${i}`, sk)).json()).toBe(i);
    expect(await prepared()).toBe(before + 2);
    // Another set of arguments is another statement, prepared once too.
    for (let i = 0; i < 3; i++) expect((await post('shape_of', { a: 1, b: i }, sk)).json()).toBe(1 + i);
    expect(await prepared()).toBe(before + 3);
  });

  it('220 functions called in turn stay within 200 statements per session, and the first answers again', async () => {
    // Served within a second of their creation (the schema cache reloads on the change).
    await expect.poll(async () => (await post('echo_219', { v: 1 }, t.as.service)).statusCode, { timeout: 10_000, interval: 50 }).toBe(200);
    for (let i = 0; i < 220; i++) {
      const res = await post(`echo_${i}`, { v: 1 }, t.as.service);
      expect(res.json(), res.body).toBe(1 + i);
    }
    // Closed (least recently used) and prepared again.
    expect((await post('echo_0', { v: 5 }, t.as.service)).json()).toBe(5);
    // 200 statements and runAs's own two (set_config, the role check).
    expect(await prepared()).toBeLessThanOrEqual(202);
  });

  it('a function made again with another body and result answers the new one on the same session', async () => {
    expect((await post('echo_1', { v: 1 }, t.as.service)).json()).toBe(2);
    const res = await t.sql(`drop function echo_1(int);
      create function echo_1(v int) returns text language sql immutable as $$ select 'v=' || v $$;`);
    expect(res.statusCode, res.body).toBe(200);
    await expect.poll(async () => (await post('echo_1', { v: 1 }, t.as.service)).json(), { timeout: 10_000, interval: 50 }).toBe('v=1');
  });
});
