import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';

// Schema changes are served within one second, without a restart (docs/api.md §2), whether they
// come through the SQL runner or straight to the database.
let t: TestServer;

beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.stop());

const get = (path: string) => t.app.inject({ url: `/api/v1/db/${path}`, headers: t.as.service });
/** Polls a request until it answers `status` (the reload takes milliseconds; the deadline is for a busy machine). */
const eventually = (path: string, status: number) =>
  expect.poll(async () => (await get(path)).statusCode, { timeout: 20_000, interval: 25 }).toBe(status);

describe('schema changes', () => {
  it('a table created through the SQL runner is served', async () => {
    await t.sql('create table via_runner (id int primary key); insert into via_runner values (1)');
    await eventually('via_runner', 200);
    expect((await get('via_runner')).json()).toEqual([{ id: 1 }]);
  });

  it('a table created directly on the database is served', async () => {
    // A miss on an old snapshot reloads it; after that reload, for one second, only the
    // NOTIFY from the event trigger can make the new table appear.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await get('direct')).statusCode).toBe(404);
    await t.db.query('create table direct (id int primary key, name text)');
    await t.db.query("insert into direct values (1, 'a')");
    await eventually('direct', 200);
  });

  it('an added column, a renamed column and a dropped table are seen', async () => {
    await t.db.query('alter table direct add column extra int');
    await eventually('direct?select=extra', 200);
    await t.db.query('alter table direct rename column name to title');
    await eventually('direct?select=title', 200);
    expect((await get('direct?select=name')).json().code).toBe('column_not_found');
    await t.db.query('drop table direct');
    await eventually('direct', 404);
    expect((await get('direct')).json().code).toBe('table_not_found');
  });

  it('the cache reloads on NOTIFY, not only when a request misses', async () => {
    const before = t.schema.get().version;
    await t.db.query('create table notified (id int)');
    await expect.poll(() => t.schema.get().version, { timeout: 20_000, interval: 25 }).toBeGreaterThan(before);
    expect(t.schema.get().tables.has('notified')).toBe(true);
  });
});
