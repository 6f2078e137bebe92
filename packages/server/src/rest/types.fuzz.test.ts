import { isErrorCode } from '@plinth/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Property tests: random JSON values — strings with NUL, lone surrogates and any unicode,
// huge and odd numbers, nested arrays and objects — written into columns of many types and
// used as filter values. Whatever PostgreSQL makes of them, the answer is never a 500 and
// every error has the one shape with a known code (docs/api.md §1).
let t: TestServer;

const COLUMNS = [
  't',
  'v',
  'c',
  'i',
  'bi',
  'si',
  'num',
  'f',
  'b',
  'u',
  'ts',
  'd',
  'iv',
  'j',
  'js',
  'ta',
  'ia',
  'ja',
  'ua',
  'by',
  'ip',
  'e',
  'tv',
  'tq',
];

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create type hue as enum ('red', 'green');
    create table typed (
      id serial primary key,
      t text unique, v varchar(8), c char(3), i int check (i is distinct from 13), bi bigint, si smallint,
      num numeric(8, 2), f float8, b bool, u uuid, ts timestamptz, d date, iv interval, j jsonb, js json,
      ta text[], ia int[], ja jsonb[], ua uuid[], by bytea, ip inet, e hue, tv tsvector, tq tsquery
    );
    create function typed_guard() returns trigger language plpgsql as $$
    begin
      if new.t like '!%' then raise exception 'no bang: %', new.t; end if;
      return new;
    end $$;
    create trigger typed_guard before insert or update on typed for each row execute function typed_guard();
    insert into typed (t, i, j) values ('seed', 1, '{"a": 1}');`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

/** Strings that look like values of some type, or break naive escaping. */
const typed = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\\u0000',
  '!boom',
  'seed',
  '2024-01-01',
  '2024-02-30',
  '2024-01-01T10:00:00+02:00',
  'infinity',
  '-infinity',
  'NaN',
  'epoch',
  '1 day',
  '99999999 years',
  '11111111-1111-4111-8111-111111111111',
  '{1,2}',
  '{{1},{2,3}}',
  '{"a":1}',
  '[1,2]',
  'null',
  'true',
  't',
  'yes',
  '1e400',
  '-0',
  '0x1F',
  '127.0.0.1',
  '::1/129',
  '\\x00ff',
  'red',
  'RED',
  '\u{1F600}',
  '\ud800',
  'é',
  "'; drop table typed; --",
  '"',
  // Text-search input: every way the tsvector and tsquery parsers refuse a value (issue 22).
  'a:0',
  'a\\',
  "'",
  'a:',
  'a:1A b:x',
  '!',
  'a & & b',
  'a <-1> b',
  'a <99999> b',
  'a:*ZZ',
  '"first post" or cats -dogs',
  'x'.repeat(3000),
);
const text = fc.oneof(
  typed,
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 24 }),
  fc.tuple(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 })).map(([a, b]) => `${a}\u0000${b}`),
);
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(13, 2 ** 31, -(2 ** 63), 2 ** 64, 1e308, -1e-308, 0.005, 123456.789));
/**
 * Thousands of nested arrays parse in Node but may be too deep for PostgreSQL or to serialise
 * again. Values are JSON text, so the test itself never has to serialise such a value.
 */
const deep = fc.integer({ min: 1, max: 12_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`);
const json = (arb: fc.Arbitrary<unknown>) => arb.map((v) => JSON.stringify(v));
const value = fc.oneof(
  { arbitrary: json(text), weight: 4 },
  { arbitrary: json(number), weight: 2 },
  { arbitrary: json(fc.boolean()), weight: 1 },
  { arbitrary: fc.constant('null'), weight: 1 },
  { arbitrary: fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '-0', '0.1e-400'), weight: 1 },
  { arbitrary: json(fc.array(fc.oneof(text, number, fc.constant(null)), { maxLength: 4 })), weight: 2 },
  { arbitrary: json(fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' })), weight: 2 },
  { arbitrary: deep, weight: 1 },
);
const column = fc.constantFrom(...COLUMNS);
const date = fc.date({ noInvalidDate: true, min: new Date('0001-01-01'), max: new Date('9999-12-31') });
/** A value that fits each column, so writes also succeed and the values reach the table. */
const FITTING: Record<string, fc.Arbitrary<unknown>> = {
  t: fc.string({ unit: 'grapheme', maxLength: 20 }),
  v: fc.string({ maxLength: 8 }),
  c: fc.string({ maxLength: 3 }),
  i: fc.integer(),
  bi: fc.maxSafeInteger(),
  si: fc.integer({ min: -32768, max: 32767 }),
  num: fc.double({ min: -999_999, max: 999_999, noNaN: true }),
  f: fc.double(),
  b: fc.boolean(),
  u: fc.uuid(),
  ts: date.map((d) => d.toISOString()),
  d: date.map((d) => d.toISOString().slice(0, 10)),
  iv: fc.constantFrom('1 day', '-2 hours 3 minutes', 'P1Y2M3DT4H', '00:00:01.5'),
  j: fc.jsonValue({ maxDepth: 3 }),
  js: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
  ta: fc.array(fc.string({ unit: 'grapheme', maxLength: 8 }), { maxLength: 4 }),
  ia: fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 4 }),
  ja: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  ua: fc.array(fc.uuid(), { maxLength: 3 }),
  by: fc.uint8Array({ maxLength: 16 }).map((b) => `\\x${Buffer.from(b).toString('hex')}`),
  ip: fc.oneof(fc.ipV4(), fc.ipV6()),
  e: fc.constantFrom('red', 'green'),
  tv: fc.constantFrom('a:1 b:2', 'cat dog', "'quoted lexeme':3A"),
  tq: fc.constantFrom('a & b', 'cat | dog', '!x'),
};
const cell = column.chain((c) =>
  fc.tuple(fc.constant(c), fc.oneof({ arbitrary: json(FITTING[c]), weight: 2 }, { arbitrary: value, weight: 1 })),
);
/** One row as JSON text: `{"col": <value>, ...}`. */
const row = fc
  .uniqueArray(cell, { minLength: 1, maxLength: 4, selector: ([c]) => c })
  .map((entries) => `{${entries.map(([c, v]) => `"${c}":${v}`).join(',')}}`);
const rows = fc.oneof(
  row,
  fc.array(row, { minLength: 1, maxLength: 3 }).map((r) => `[${r.join(',')}]`),
);
const op = fc.constantFrom(
  'eq',
  'neq',
  'gt',
  'lt',
  'gte',
  'lte',
  'like',
  'ilike',
  'in',
  'is',
  'not.eq',
  'not.in',
  'not.is',
  'fts',
  'fts(simple)',
  'fts(english)',
  'fts(nope)',
  'not.fts',
);
/** Columns, and JSON paths into the json columns (docs/api.md). */
const filterColumn = fc.oneof(
  { arbitrary: column, weight: 4 },
  { arbitrary: fc.constantFrom('j->a', 'j->>a', 'js->0', 'j->a->>b', 'js->>x', 't->a'), weight: 1 },
);
const filterValue = fc.oneof(
  text,
  number.map(String),
  fc.array(text, { maxLength: 3 }).map((a) => a.join(',')),
);
const filter: fc.Arbitrary<[string, string]> = fc.tuple(op, filterColumn, filterValue).map(([o, c, v]) => [`${o}.${c}`, v]);

/** What the properties produced, to check they reached PostgreSQL both ways. */
const seen = new Map<string, number>();

function expectClean(res: { statusCode: number; body: string }, what: string) {
  expect(res.statusCode, `${what} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.statusCode < 400) {
    seen.set(String(res.statusCode), (seen.get(String(res.statusCode)) ?? 0) + 1);
    if (res.body !== '') JSON.parse(res.body);
    return;
  }
  const body = JSON.parse(res.body);
  seen.set(`${res.statusCode} ${body.code}`, (seen.get(`${res.statusCode} ${body.code}`) ?? 0) + 1);
  expect(typeof body.code, what).toBe('string');
  expect(isErrorCode(body.code), `${what}: unknown code ${body.code}`).toBe(true);
  expect(typeof body.message, what).toBe('string');
  expect(body.message.length, what).toBeGreaterThan(0);
}

const url = (params: Array<[string, string]>) => `/api/v1/db/typed?${new URLSearchParams(params)}`;
const headers = () => ({ ...t.as.service, 'content-type': 'application/json' });

describe('random values into typed columns', () => {
  it('POST and PATCH of random values: never a 500, always {code, message}', async () => {
    await fc.assert(
      fc.asyncProperty(rows, row, fc.array(filter, { maxLength: 2 }), async (payload, patchText, filters) => {
        expectClean(
          await t.app.inject({ method: 'POST', url: '/api/v1/db/typed', headers: headers(), payload }),
          `POST ${payload.slice(0, 200)}`,
        );
        // Not the seed row (id 1), which the next property reads back.
        const where: Array<[string, string]> = [...filters, ['gt.id', '1']];
        expectClean(
          await t.app.inject({ method: 'PATCH', url: url(where), headers: headers(), payload: patchText }),
          `PATCH ${url(where)} ${patchText.slice(0, 200)}`,
        );
      }),
      { numRuns: 150 },
    );
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['200', '201', '400 invalid_value']));
  });

  it('GET and DELETE with random filter values on every type: never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(filter, { minLength: 1, maxLength: 3 }), async (filters) => {
        expectClean(await t.app.inject({ url: url(filters), headers: t.as.service }), `GET ${url(filters)}`);
        // `eq.id=0` keeps the seed row: the property is about the answer, not about emptying the table.
        const del: Array<[string, string]> = [...filters, ['eq.id', '0']];
        expectClean(await t.app.inject({ method: 'DELETE', url: url(del), headers: t.as.service }), `DELETE ${url(del)}`);
      }),
      { numRuns: 150 },
    );
    const seed = await t.app.inject({
      url: url([
        ['eq.t', 'seed'],
        ['select', 'i,j'],
      ]),
      headers: t.as.service,
    });
    expect(seed.json()).toEqual([{ i: 1, j: { a: 1 } }]);
  });

  it('text-search input (tsvector and tsquery values, fts queries): 2xx or 400 invalid_value, never a 500', async () => {
    // Strings made of what the text-search parsers give meaning to.
    const tsText = fc.oneof(
      fc.constantFrom('a:0', 'a\\', "'", 'a:', 'a:1A b:x', '!', 'a & & b', 'a <-1> b', 'a <99999> b', 'a:*ZZ', ''),
      fc
        .array(fc.constantFrom('a', 'b', ':', '1', '0', 'A', 'D', '*', "'", '\\', '&', '|', '!', '<', '>', '-', '(', ')', ' ', '"', 'or'), {
          maxLength: 12,
        })
        .map((a) => a.join('')),
    );
    const ops = fc.constantFrom('eq', 'neq', 'in', 'not.eq', 'gt', 'fts', 'fts(simple)', 'not.fts');
    await fc.assert(
      fc.asyncProperty(ops, fc.constantFrom('tv', 'tq', 't'), tsText, async (o, c, v) => {
        const res = await t.app.inject({ url: url([[`${o}.${c}`, v]]), headers: t.as.service });
        expectClean(res, `GET ${o}.${c}=${v}`);
        if (res.statusCode >= 400) expect(res.json().code, `${o}.${c}=${v}`).toMatch(/^invalid_(value|parameter)$/);
        const post = await t.app.inject({
          method: 'POST',
          url: '/api/v1/db/typed',
          headers: headers(),
          payload: JSON.stringify({ [c]: v }),
        });
        expectClean(post, `POST ${c}=${v}`);
      }),
      { numRuns: 200 },
    );
  });

  // A `json` column keeps the escape `\\u0000` as text, so it is not in this list.
  it('NUL in any text-like value is refused with 400 invalid_value, never stored cut short', async () => {
    const withNul = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 })).map(([a, b]) => `${a}\u0000${b}`);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('t', 'v', 'c', 'j', 'ta'), withNul, async (col, s) => {
        const v = col === 'ta' ? [s] : col === 'j' ? { s } : s;
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/db/typed',
          headers: headers(),
          payload: JSON.stringify({ [col]: v }),
        });
        expect(res.statusCode, `${col} ${JSON.stringify(s)} → ${res.body}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_value', message: expect.any(String) });
        const found = await t.app.inject({ url: url([[`eq.${col === 'ta' || col === 'j' ? 't' : col}`, s]]), headers: t.as.service });
        expect(found.statusCode, found.body).toBe(400);
        expect(found.json().code).toBe('invalid_value');
      }),
      { numRuns: 60 },
    );
  });
});
