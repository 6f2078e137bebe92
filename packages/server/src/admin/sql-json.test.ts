import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { encodeValue } from './sql-json.js';

// The SQL runner and the REST API send numbers alike (docs/api.md "Numbers, dates and times").
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
  const res =
    await t.sql(`create table nums (id int primary key, big bigint, n numeric, f float8, r real, arr bigint[], farr float8[], narr numeric[]);
    insert into nums values
      (1, 9007199254740993, 12345678901234567890.123456789, 'NaN', 1.1, '{1,9007199254740993}', '{NaN,1.5,-Infinity}', '{0.10,NaN}'),
      (2, -9223372036854775808, 'NaN', 'Infinity', '-Infinity', null, '{}', null),
      (3, 42, '-Infinity', '-Infinity', 'NaN', '{}', null, '{1e-3}'),
      (4, null, 0.000000000000000000001, 1e300, 3.4e38, '{-1}', '{1e-300}', '{}');`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

const rowsOf = (body: string) => /"rows":\[(.*)\],"truncated"/s.exec(body)?.[1];

describe('numbers in the SQL runner', () => {
  it('each row is the very text the REST API sends for it', async () => {
    for (const id of [1, 2, 3, 4]) {
      const rest = await t.app.inject({ url: `/api/v1/db/nums?eq.id=${id}`, headers: t.as.service });
      const runner = await t.sql(`select * from nums where id = ${id}`);
      expect(runner.statusCode).toBe(200);
      expect(`[${rowsOf(runner.body)}]`, `row ${id}`).toBe(rest.body);
    }
  });

  it('bigint and numeric keep every digit; NaN and Infinity are strings, never null', async () => {
    const body = (await t.sql('select big, n, f from nums where id = 1')).body;
    expect(rowsOf(body)).toBe('{"big":9007199254740993,"n":12345678901234567890.123456789,"f":"NaN"}');
    const special = await t.sql(`select 'Infinity'::float8 as a, '-Infinity'::numeric as b, 'NaN'::real as c`);
    expect(special.json().results[0].rows).toEqual([{ a: 'Infinity', b: '-Infinity', c: 'NaN' }]);
  });
});

describe('encodeValue', () => {
  it.each([
    [null, 20, 'null'],
    [42, 20, '42'],
    ['9007199254740993', 20, '9007199254740993'],
    ['-12.50', 1700, '-12.50'],
    ['NaN', 1700, '"NaN"'],
    [Number.NaN, 701, '"NaN"'],
    [Number.POSITIVE_INFINITY, 700, '"Infinity"'],
    [Number.NEGATIVE_INFINITY, 701, '"-Infinity"'],
    [1.5, 701, '1.5'],
    [['1', 'NaN'], 1231, '[1,"NaN"]'],
    [[Number.NaN, [2]], 1022, '["NaN",[2]]'],
    ['text "q"', 25, '"text \\"q\\""'],
    [{ a: 1 }, 3802, '{"a":1}'],
  ])('%j of type %i → %s', (value, type, json) => {
    expect(encodeValue(value, type)).toBe(json);
  });
});
