import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { migrateSystem, systemMigrations } from './migrate.js';
import { splitStatements } from './statements.js';
import type { Db } from './types.js';

let db: Db;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ db, cleanup } = await openTestDb());
  await db.query('create table docs (id int primary key, v jsonb, j json)');
});
afterAll(() => cleanup());

describe('JSON parameters, the same on both databases', () => {
  it('JSON text bound to a jsonb or json parameter is stored as the document, not as a string', async () => {
    await db.query('insert into docs values (1, $1::jsonb, $2::json)', [JSON.stringify({ a: 1, b: [true] }), JSON.stringify({ c: 'x' })]);
    const { rows } = await db.query<{ t: string; a: string; c: string }>(
      "select jsonb_typeof(v) as t, v->>'a' as a, j->>'c' as c from docs where id = 1",
    );
    expect(rows[0]).toEqual({ t: 'object', a: '1', c: 'x' });
  });

  it('an object bound to a jsonb parameter is stored as the document, and read back as an object', async () => {
    await db.query('insert into docs values (2, $1::jsonb)', [{ a: 2 }]);
    const { rows } = await db.query<{ v: unknown }>('select v from docs where id = 2');
    expect(rows[0].v).toEqual({ a: 2 });
  });

  it('migration 0007 turns documents stored as JSON strings back into documents', async () => {
    await migrateSystem(db);
    await db.query(`insert into plinth.kv (key, value) values ('legacy', to_jsonb('{"x":1}'::text))`);
    const m0007 = systemMigrations().find((m) => m.version === 7);
    expect(m0007?.name).toBe('0007_json_values');
    for (const stmt of splitStatements(m0007?.sql ?? '')) await db.query(stmt);
    const { rows } = await db.query<{ t: string }>("select jsonb_typeof(value) as t from plinth.kv where key = 'legacy'");
    expect(rows[0].t).toBe('object');
  });
});

// docs/architecture.md ("db/"): both drivers hand back the same JavaScript values, so no caller
// decodes a column itself. This file runs on PGlite and on PostgreSQL against the same expected
// values, through each way a query reaches the database.
describe('values read back, the same on both databases and through every path', () => {
  const Q = `select '{"a":1}'::json as j, '{"a":[1,"x"]}'::jsonb as jb, '[{"a":1}]'::jsonb as ja, array['x', 'y"z', 'a,b']::text[] as ta,
    array[1, 2]::int[] as ia, array['00000000-0000-4000-8000-000000000001']::uuid[] as ua, 5::int8 as i8, array[7]::int8[] as i8a,
    true as b, array[true, false] as ba, '1.50'::numeric as nu, '2026-01-02 03:04:05+00'::timestamptz as ts,
    (select json_agg(x order by x) from generate_series(1, 2) x) as agg, array['pg_class']::name[] as na,
    json_build_object('events', array['insert'], 'n', null) as built, null::jsonb as nothing`;
  const expected = {
    j: { a: 1 },
    jb: { a: [1, 'x'] },
    ja: [{ a: 1 }],
    ta: ['x', 'y"z', 'a,b'],
    ia: [1, 2],
    ua: ['00000000-0000-4000-8000-000000000001'],
    i8: 5,
    i8a: [7],
    b: true,
    ba: [true, false],
    nu: '1.50',
    agg: [1, 2],
    na: ['pg_class'],
    built: { events: ['insert'], n: null },
    nothing: null,
  };

  it('json and jsonb as values, arrays as arrays, int8 as numbers, numeric and times as text', async () => {
    const rows = [
      (await db.query(Q)).rows[0],
      await db.transaction(async (tx) => (await tx.query(Q)).rows[0]),
      (await db.script(Q))[0].rows[0],
    ];
    for (const row of rows) {
      const { ts, ...rest } = row as Record<string, unknown>;
      expect(rest).toEqual(expected);
      // PostgreSQL's text of the time, whichever the session's zone (not a Date).
      expect(typeof ts).toBe('string');
      expect(Date.parse(String(ts).replace(' ', 'T').replace(/\+00$/, 'Z'))).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    }
  });
});
