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
