import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Reads of /api/v1/db/{table}: every operator, order, limit, offset, select, count.
let t: TestServer;

const SETUP = `
create type status as enum ('todo', 'doing', 'done');
create table items (
  id serial primary key,
  name text not null,
  qty int,
  price numeric(10,2),
  status status not null default 'todo',
  done boolean,
  tags text[],
  code varchar(3) unique,
  created_at timestamptz not null
);
insert into items (name, qty, price, status, done, tags, code, created_at) values
  ('apple', 5, 1.50, 'todo', true, '{red,fruit}', 'APL', '2024-01-01T00:00:00Z'),
  ('banana', 0, 0.25, 'doing', false, '{yellow,fruit}', 'BAN', '2024-01-02T00:00:00Z'),
  ('Cherry, sweet', null, 3.00, 'done', null, null, 'CHE', '2024-01-03T00:00:00Z'),
  ('date "x"', 10, null, 'todo', true, '{}', null, '2024-01-04T00:00:00Z');
create table many (n int primary key);
insert into many select generate_series(1, 1005);
create table nopk (a int);
create table pair (a int, b int, primary key (a, b));
create view cheap as select id, name, price from items where price < 2;
create table "odd ""name"" /x" ("we""ird col" int primary key, "select" text);
insert into "odd ""name"" /x" values (1, 'one'), (2, 'two');
create table "notes é" (slug text primary key, body text);
insert into "notes é" values ('a/b', 'slash'), (repeat('long', 50), 'long'), ('a b+c?d', 'specials');
`;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(SETUP);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

/** GET as the secret key; `params` are encoded with URLSearchParams, as a client would. */
function get(table: string, params: Array<[string, string]> = [], headers: Record<string, string> = {}) {
  const qs = new URLSearchParams(params).toString();
  return t.app.inject({
    method: 'GET',
    url: `/api/v1/db/${encodeURIComponent(table)}${qs ? `?${qs}` : ''}`,
    headers: { ...t.as.service, ...headers },
  });
}

const names = (body: string) => (JSON.parse(body) as Array<{ name: string }>).map((r) => r.name);

describe('filters', () => {
  const cases: Array<[string, Array<[string, string]>, string[]]> = [
    ['eq', [['eq.name', 'apple']], ['apple']],
    ['neq on an enum', [['neq.status', 'todo']], ['banana', 'Cherry, sweet']],
    ['gt', [['gt.qty', '0']], ['apple', 'date "x"']],
    ['lt', [['lt.qty', '5']], ['banana']],
    ['gte', [['gte.qty', '5']], ['apple', 'date "x"']],
    ['lte', [['lte.qty', '5']], ['apple', 'banana']],
    ['like with *', [['like.name', '*an*']], ['banana']],
    ['like with %', [['like.name', '%an%']], ['banana']],
    ['like is case-sensitive', [['like.name', 'cherry*']], []],
    ['ilike', [['ilike.name', 'cherry*']], ['Cherry, sweet']],
    ['in', [['in.name', 'apple,banana']], ['apple', 'banana']],
    ['in with a quoted item holding a comma', [['in.name', 'apple,"Cherry, sweet"']], ['apple', 'Cherry, sweet']],
    ['in with an escaped quote', [['in.name', '"date \\"x\\""']], ['date "x"']],
    ['in on integers', [['in.qty', '0,10']], ['banana', 'date "x"']],
    ['in on an enum', [['in.status', 'doing,done']], ['banana', 'Cherry, sweet']],
    ['in with no items', [['in.id', '']], []],
    ['is null', [['is.qty', 'null']], ['Cherry, sweet']],
    ['is true', [['is.done', 'true']], ['apple', 'date "x"']],
    ['is false', [['is.done', 'false']], ['banana']],
    ['is unknown', [['is.done', 'unknown']], ['Cherry, sweet']],
    ['eq on a boolean', [['eq.done', 'true']], ['apple', 'date "x"']],
    ['eq on numeric', [['eq.price', '1.5']], ['apple']],
    ['eq on an array', [['eq.tags', '{red,fruit}']], ['apple']],
    ['gt on timestamptz', [['gt.created_at', '2024-01-02T12:00:00Z']], ['Cherry, sweet', 'date "x"']],
    ['varchar(3) is not truncated by the cast', [['eq.code', 'APLX']], []],
    [
      'several filters are ANDed',
      [
        ['gt.qty', '0'],
        ['lt.qty', '10'],
      ],
      ['apple'],
    ],
    [
      'a repeated filter is ANDed',
      [
        ['neq.name', 'apple'],
        ['neq.name', 'banana'],
      ],
      ['Cherry, sweet', 'date "x"'],
    ],
    ['SQL in a value is only a value', [['eq.name', "apple' or '1'='1"]], []],
  ];
  for (const [title, params, expected] of cases) {
    it(title, async () => {
      const res = await get('items', [...params, ['order', 'id']]);
      expect(res.statusCode, res.body).toBe(200);
      expect(names(res.body)).toEqual(expected);
    });
  }
});

describe('order', () => {
  const cases: Array<[string, string[]]> = [
    ['qty', ['banana', 'apple', 'date "x"', 'Cherry, sweet']],
    ['qty.asc', ['banana', 'apple', 'date "x"', 'Cherry, sweet']],
    ['qty.desc', ['Cherry, sweet', 'date "x"', 'apple', 'banana']],
    ['qty.desc.nullslast', ['date "x"', 'apple', 'banana', 'Cherry, sweet']],
    ['qty.asc.nullsfirst', ['Cherry, sweet', 'banana', 'apple', 'date "x"']],
    ['qty.nullsfirst', ['Cherry, sweet', 'banana', 'apple', 'date "x"']],
    ['status.desc,name.asc', ['Cherry, sweet', 'banana', 'apple', 'date "x"']],
    ['done.asc.nullslast,id.desc', ['banana', 'date "x"', 'apple', 'Cherry, sweet']],
  ];
  for (const [order, expected] of cases) {
    it(order, async () => {
      const res = await get('items', [['order', order]]);
      expect(res.statusCode, res.body).toBe(200);
      expect(names(res.body)).toEqual(expected);
    });
  }
});

describe('limit, offset, Content-Range', () => {
  it('defaults to 100 rows and says so in Content-Range', async () => {
    const res = await get('many', [['order', 'n']]);
    expect(JSON.parse(res.body)).toHaveLength(100);
    expect(res.headers['content-range']).toBe('0-99/*');
  });

  it('clamps limit to the maximum (1000)', async () => {
    const res = await get('many', [['limit', '5000']]);
    expect(JSON.parse(res.body)).toHaveLength(1000);
    const huge = await get('many', [['limit', '99999999999999999999999']]);
    expect(JSON.parse(huge.body)).toHaveLength(1000);
  });

  it('pages with limit and offset', async () => {
    const res = await get('items', [
      ['order', 'id'],
      ['limit', '2'],
      ['offset', '1'],
    ]);
    expect(names(res.body)).toEqual(['banana', 'Cherry, sweet']);
    expect(res.headers['content-range']).toBe('1-2/*');
    expect(JSON.parse((await get('many', [['limit', '0']])).body)).toEqual([]);
  });

  it('counts with Prefer: count=exact, honouring the filters', async () => {
    const res = await get(
      'items',
      [
        ['gt.qty', '-1'],
        ['order', 'id'],
        ['limit', '2'],
      ],
      { prefer: 'count=exact' },
    );
    expect(names(res.body)).toEqual(['apple', 'banana']);
    expect(res.headers['content-range']).toBe('0-1/3');
    const all = await get('many', [['offset', '1000']], { prefer: 'count=exact' });
    expect(all.headers['content-range']).toBe('1000-1004/1005');
  });

  it('sends */total for an empty page', async () => {
    const res = await get('items', [['offset', '10']], { prefer: 'count=exact' });
    expect(res.body).toBe('[]');
    expect(res.headers['content-range']).toBe('*/4');
    expect((await get('items', [['eq.name', 'none']])).headers['content-range']).toBe('*/*');
  });

  for (const [param, value] of [
    ['limit', '-1'],
    ['limit', 'ten'],
    ['limit', '1.5'],
    ['limit', ''],
    ['offset', '-3'],
    ['offset', '1e3'],
    ['offset', '99999999999999999999'],
  ]) {
    it(`${param}=${value} is 400 invalid_parameter`, async () => {
      const res = await get('items', [[param, value]]);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_parameter');
    });
  }
});

describe('select and shapes', () => {
  it('select chooses and orders the columns', async () => {
    const res = await get('items', [
      ['select', 'name,id'],
      ['eq.id', '1'],
    ]);
    expect(res.body).toBe('[{"name":"apple","id":1}]');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('values keep their JSON types', async () => {
    const [row] = JSON.parse((await get('items', [['eq.id', '1']])).body);
    expect(row).toEqual({
      id: 1,
      name: 'apple',
      qty: 5,
      price: 1.5,
      status: 'todo',
      done: true,
      tags: ['red', 'fruit'],
      code: 'APL',
      created_at: expect.stringMatching(/^2024-01-01T00:00:00(\+00:00|Z)/),
    });
  });

  it('reads one row by primary key', async () => {
    const one = await t.app.inject({ url: '/api/v1/db/items/2?select=id,name', headers: t.as.service });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual({ id: 2, name: 'banana' });
    const missing = await t.app.inject({ url: '/api/v1/db/items/99', headers: t.as.service });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    const bad = await t.app.inject({ url: '/api/v1/db/items/abc', headers: t.as.service });
    expect(bad.json().code).toBe('invalid_value');
  });

  it('read one needs a single-column primary key', async () => {
    for (const table of ['nopk', 'pair', 'cheap']) {
      const res = await t.app.inject({ url: `/api/v1/db/${table}/1`, headers: t.as.service });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_parameter');
    }
  });

  it('serves views', async () => {
    const res = await get('cheap', [['order', 'price.desc']]);
    expect(res.statusCode).toBe(200);
    expect(names(res.body)).toEqual(['apple', 'banana']);
  });

  it('addresses any table and column name, quoted', async () => {
    const table = 'odd "name" /x';
    const res = await get(table, [
      ['eq.we"ird col', '2'],
      ['select', 'select'],
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toBe('[{"select":"two"}]');
    const one = await t.app.inject({ url: `/api/v1/db/${encodeURIComponent(table)}/1`, headers: t.as.service });
    expect(one.json()).toEqual({ 'we"ird col': 1, select: 'one' });
  });

  it('reads one row by any key value, percent-encoded: slashes, spaces, long keys', async () => {
    for (const [slug, body] of [
      ['a/b', 'slash'],
      ['long'.repeat(50), 'long'],
      ['a b+c?d', 'specials'],
    ]) {
      const res = await t.app.inject({
        url: `/api/v1/db/${encodeURIComponent('notes é')}/${encodeURIComponent(slug)}`,
        headers: t.as.service,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ slug, body });
    }
    const nested = await t.app.inject({ url: '/api/v1/db/items/1/2', headers: t.as.service });
    expect(nested.json().code).toBe('route_not_found');
  });

  it('reports stage times in Server-Timing', async () => {
    const res = await get('items');
    const stages = String(res.headers['server-timing'])
      .split(', ')
      .map((s) => s.split(';')[0]);
    expect(stages).toEqual(['auth', 'parse', 'plan', 'sql', 'execute', 'response']);
    expect(String(res.headers['server-timing'])).toMatch(/^auth;dur=\d+\.\d\d, parse;dur=/);
  });
});
