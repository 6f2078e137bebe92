import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Writes of /api/v1/db/{table} and every error code of docs/api.md §2 with its status.
let t: TestServer;

const SETUP = `
create table things (
  id serial primary key,
  name text not null,
  qty int default 1 constraint qty_nonneg check (qty >= 0),
  code varchar(3) unique,
  doubled int generated always as (qty * 2) stored
);
create table gauges (id int primary key, level int check (level <= 10), lo int, hi int, check (lo < hi));
create table parents (id int primary key);
create table children (id int primary key, parent_id int not null references parents (id));
insert into parents values (1);
insert into children values (1, 1);
create view thing_counts as select count(*) as n from things;
create table secret (id int primary key);
revoke all on secret from anon;
`;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(SETUP);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
function call(method: Method, path: string, payload?: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method,
    url: `/api/v1/db/${path}`,
    headers: { ...t.as.service, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
}

describe('create', () => {
  it('an object gives the created row, defaults and generated columns filled', async () => {
    const res = await call('POST', 'things', { name: 'a', code: 'AAA' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ id: 1, name: 'a', qty: 1, code: 'AAA', doubled: 2 });
  });

  it('an array gives the created rows; a key missing from one object is null there', async () => {
    const res = await call('POST', 'things?select=name,qty', [{ name: 'b', qty: 3 }, { name: 'c' }]);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual([
      { name: 'b', qty: 3 },
      { name: 'c', qty: null },
    ]);
  });

  it('an empty array creates nothing', async () => {
    const before = (await call('GET', 'things', undefined, { prefer: 'count=exact' })).headers['content-range'];
    const res = await call('POST', 'things', []);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual([]);
    expect((await call('GET', 'things', undefined, { prefer: 'count=exact' })).headers['content-range']).toBe(before);
  });

  it('columns= picks the payload keys to insert', async () => {
    const res = await call('POST', 'things?columns=name&select=name,qty', { name: 'd', qty: 9 });
    expect(res.json()).toEqual({ name: 'd', qty: 1 });
  });

  it('Prefer: return=minimal answers 201 without a body', async () => {
    const res = await call('POST', 'things', { name: 'e' }, { prefer: 'return=minimal' });
    expect(res.statusCode).toBe(201);
    expect(res.body).toBe('');
  });

  it('a bulk create takes at most 1000 objects', async () => {
    const ok = await call(
      'POST',
      'things?select=id',
      Array.from({ length: 1000 }, (_, i) => ({ name: `bulk${i}` })),
      { prefer: 'return=minimal' },
    );
    expect(ok.statusCode).toBe(201);
    const tooMany = await call(
      'POST',
      'things',
      Array.from({ length: 1001 }, () => ({ name: 'x' })),
    );
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().code).toBe('too_many_rows');
    await call('DELETE', 'things?like.name=bulk*', undefined, { prefer: 'return=minimal' });
  });
});

describe('update and delete', () => {
  it('PATCH with filters gives the updated rows', async () => {
    const res = await call('PATCH', 'things?eq.name=b&select=name,qty,doubled', { qty: 4 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ name: 'b', qty: 4, doubled: 8 }]);
  });

  it('PATCH sets several columns at once', async () => {
    const res = await call('PATCH', 'things?eq.name=c&select=name,qty,code', { qty: 5, code: 'CCC' });
    expect(res.json()).toEqual([{ name: 'c', qty: 5, code: 'CCC' }]);
  });

  it('PATCH and DELETE on /{pk} give an object, 404 when absent', async () => {
    const patched = await call('PATCH', 'things/1?select=id,qty', { qty: 7 });
    expect(patched.json()).toEqual({ id: 1, qty: 7 });
    const missing = await call('PATCH', 'things/999', { qty: 7 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    const created = (await call('POST', 'things', { name: 'gone' })).json();
    const deleted = await call('DELETE', `things/${created.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual(created);
    expect((await call('DELETE', `things/${created.id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `things/${created.id}`, undefined, { prefer: 'return=minimal' })).statusCode).toBe(404);
  });

  it('Prefer: return=minimal answers 204', async () => {
    expect((await call('PATCH', 'things?eq.name=d', { qty: 2 }, { prefer: 'return=minimal' })).statusCode).toBe(204);
    const res = await call('DELETE', 'things?eq.name=d', undefined, { prefer: 'return=minimal' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', 'things?eq.name=d')).json()).toEqual([]);
  });

  it('DELETE with filters gives the deleted rows', async () => {
    await call('POST', 'things', [{ name: 'x1' }, { name: 'x2' }]);
    const res = await call('DELETE', 'things?like.name=x*&select=name&order=name');
    // order does not apply to a delete
    expect(res.json().code).toBe('invalid_parameter');
    const ok = await call('DELETE', 'things?like.name=x*&select=name');
    expect(
      ok
        .json()
        .map((r: { name: string }) => r.name)
        .sort(),
    ).toEqual(['x1', 'x2']);
  });
});

describe('errors (docs/api.md §2)', () => {
  const cases: Array<[string, Method, string, unknown, number, string, Record<string, unknown>?]> = [
    ['unknown table', 'GET', 'nope', undefined, 404, 'table_not_found'],
    ['table of another schema', 'GET', 'pg_class', undefined, 404, 'table_not_found'],
    ['unknown filter column', 'GET', 'things?eq.nope=1', undefined, 400, 'column_not_found', { column: 'nope' }],
    ['unknown select column', 'GET', 'things?select=id,nope', undefined, 400, 'column_not_found', { column: 'nope' }],
    ['unknown order column', 'GET', 'things?order=nope.desc', undefined, 400, 'column_not_found', { column: 'nope' }],
    ['unknown body key', 'POST', 'things', { name: 'a', nope: 1 }, 400, 'column_not_found', { column: 'nope' }],
    ['unknown parameter', 'GET', 'things?where=1', undefined, 400, 'invalid_parameter', { parameter: 'where' }],
    ['unknown operator', 'GET', 'things?contains.name=a', undefined, 400, 'invalid_parameter'],
    ['limit twice', 'GET', 'things?limit=1&limit=2', undefined, 400, 'invalid_parameter'],
    ['filters on create', 'POST', 'things?eq.id=1', { name: 'a' }, 400, 'invalid_parameter'],
    ['wrong type in a filter', 'GET', 'things?eq.qty=many', undefined, 400, 'invalid_value'],
    ['wrong type in an in list', 'GET', 'things?in.id=1,x', undefined, 400, 'invalid_value'],
    ['like on an integer', 'GET', 'things?like.qty=1*', undefined, 400, 'invalid_value'],
    ['bad is value', 'GET', 'things?is.qty=maybe', undefined, 400, 'invalid_value'],
    ['is true on an integer', 'GET', 'things?is.qty=true', undefined, 400, 'invalid_value'],
    ['unterminated quote in in', 'GET', 'things?in.name="a', undefined, 400, 'invalid_value'],
    ['wrong type in the body', 'POST', 'things', { name: 'a', qty: 'many' }, 400, 'invalid_value'],
    ['value too long for varchar(3)', 'POST', 'things', { name: 'a', code: 'TOOLONG' }, 400, 'invalid_value'],
    ['NUL in a body string', 'POST', 'things', { name: 'a\u0000b' }, 400, 'invalid_value'],
    ['NUL in a filter', 'GET', 'things?eq.name=a%00b', undefined, 400, 'invalid_value'],
    ['generated column in the body', 'POST', 'things', { name: 'a', doubled: 1 }, 400, 'invalid_value'],
    ['unique violation', 'POST', 'things', { name: 'a', code: 'AAA' }, 409, 'conflict', { constraint: 'things_code_key' }],
    ['foreign key violation', 'POST', 'children', { id: 2, parent_id: 42 }, 409, 'conflict', { constraint: 'children_parent_id_fkey' }],
    ['deleting a referenced row', 'DELETE', 'parents?eq.id=1', undefined, 409, 'conflict', { constraint: 'children_parent_id_fkey' }],
    ['not-null violation', 'POST', 'things', { name: null }, 400, 'constraint_violation', { column: 'name' }],
    ['check violation', 'POST', 'things', { name: 'a', qty: -1 }, 400, 'constraint_violation', { constraint: 'qty_nonneg', column: null }],
    // PostgreSQL names a one-column check <table>_<column>_check: the column is named.
    ['check violation of one column', 'POST', 'gauges', { id: 1, level: 11 }, 400, 'constraint_violation', { column: 'level' }],
    ['check violation of two columns', 'POST', 'gauges', { id: 2, lo: 2, hi: 1 }, 400, 'constraint_violation', { column: null }],
    ['check violation on update', 'PATCH', 'things?eq.id=1', { qty: -1 }, 400, 'constraint_violation', { constraint: 'qty_nonneg' }],
    ['PATCH without a filter', 'PATCH', 'things', { qty: 1 }, 400, 'filter_required'],
    ['DELETE without a filter', 'DELETE', 'things', undefined, 400, 'filter_required'],
    ['DELETE with only select', 'DELETE', 'things?select=id', undefined, 400, 'filter_required'],
    ['body is a string', 'POST', 'things', 'hello', 400, 'invalid_request'],
    ['body is an array of non-objects', 'POST', 'things', [1, 2], 400, 'invalid_request'],
    ['body is null', 'POST', 'things', null, 400, 'invalid_request'],
    ['update body is an array', 'PATCH', 'things?eq.id=1', [{ qty: 1 }], 400, 'invalid_request'],
    ['update body sets nothing', 'PATCH', 'things?eq.id=1', {}, 400, 'invalid_request'],
    ['PUT is not a method of the API', 'PUT', 'things', { name: 'a' }, 405, 'method_not_allowed'],
    ['POST on /{pk}', 'POST', 'things/1', { name: 'a' }, 405, 'method_not_allowed'],
    ['writing a view that cannot be written', 'POST', 'thing_counts', { n: 1 }, 405, 'method_not_allowed'],
  ];
  for (const [title, method, path, payload, status, code, details] of cases) {
    it(`${title}: ${status} ${code}`, async () => {
      const res = await call(method, path, payload);
      expect(res.statusCode, res.body).toBe(status);
      const body = res.json();
      expect(body.code).toBe(code);
      expect(typeof body.message).toBe('string');
      if (details) expect(body.details).toMatchObject(details);
    });
  }

  it('invalid JSON: 400 invalid_json', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/db/things',
      headers: { ...t.as.service, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_json');
  });

  it('no key: 401 unauthorized', async () => {
    const res = await t.app.inject({ url: '/api/v1/db/things' });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('unauthorized');
  });

  it('a role without the privilege: 403 permission_denied', async () => {
    const res = await t.app.inject({ url: '/api/v1/db/secret', headers: t.as.anon });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe('permission_denied');
  });

  it('a failed write changes nothing', async () => {
    const before = (await call('GET', 'things?select=id,qty&order=id')).body;
    const res = await call('POST', 'things', [{ name: 'ok' }, { name: 'bad', qty: -5 }]);
    expect(res.statusCode).toBe(400);
    expect((await call('GET', 'things?select=id,qty&order=id')).body).toBe(before);
  });
});
