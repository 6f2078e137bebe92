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
    // Polled for the table itself: a reload set off by the previous test's DDL may end first.
    await expect.poll(() => t.schema.get().tables.has('notified'), { timeout: 20_000, interval: 25 }).toBe(true);
    expect(t.schema.get().version).toBeGreaterThan(before);
  });
});

describe('keys, relations and functions (docs/api.md)', () => {
  /** Waits, without sending requests (a miss would reload the cache by itself), until `seen` holds. */
  const reloadsUntil = (seen: () => boolean) => expect.poll(seen, { timeout: 20_000, interval: 25 }).toBe(true);

  it('a foreign key, a unique index and a function made directly on the database are learnt without a request', async () => {
    await t.db.query('create table parent (id int primary key, code text)');
    await t.db.query('create table child (id int primary key, parent_id int)');
    await reloadsUntil(() => t.schema.get().tables.has('child'));
    await t.db.query('alter table child add constraint child_parent_fk foreign key (parent_id) references parent (id)');
    await reloadsUntil(() => (t.schema.get().relations.get('child') ?? []).some((r) => r.fk.name === 'child_parent_fk'));
    expect(
      t.schema
        .get()
        .relations.get('parent')
        ?.map((r) => [r.kind, r.target]),
    ).toEqual([['one-to-many', 'child']]);
    await t.db.query('create unique index parent_code on parent (code)');
    await reloadsUntil(() => (t.schema.get().uniqueKeys.get('parent') ?? []).some((k) => k.join() === 'code'));
    await t.db.query("create function parent_count() returns bigint language sql stable as 'select count(*) from parent'");
    await reloadsUntil(() => t.schema.get().functions.has('parent_count'));
    expect(t.schema.get().functions.get('parent_count')?.[0]).toMatchObject({
      volatility: 'stable',
      returns: { kind: 'scalar', set: false },
    });
    // And they are served.
    await t.db.query("insert into parent values (1, 'a')");
    await t.db.query('insert into child values (10, 1)');
    expect((await get('child?select=id,parent(code)')).json()).toEqual([{ id: 10, parent: { code: 'a' } }]);
    const called = await t.app.inject({ method: 'POST', url: '/api/v1/rpc/parent_count', headers: t.as.service, payload: {} });
    expect(called.json()).toBe(1);
  });

  it('dropped ones are forgotten', async () => {
    await t.db.query('alter table child drop constraint child_parent_fk');
    await reloadsUntil(() => (t.schema.get().relations.get('child') ?? []).length === 0);
    await t.db.query('drop function parent_count()');
    await reloadsUntil(() => !t.schema.get().functions.has('parent_count'));
  });
});
