import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { migrateSystem, systemMigrations } from '../db/migrate.js';

// RLS cannot apply to a materialized view: it holds a copy of the rows. So a materialized
// view in public is closed to anon and authenticated until the owner grants it (0006).
let t: TestServer;
const ALICE = '11111111-1111-4111-8111-111111111111';
let alice: Record<string, string>;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create table secrets (id int primary key, owner uuid, secret text);
    create policy own on secrets using (owner = auth.uid());
    insert into secrets values (1, '${ALICE}', 'alice''s'), (2, null, 'nobody''s');
    create materialized view secrets_mv as select * from secrets;
    create materialized view public_mv as select id from secrets;
    grant select on public_mv to anon;
    create materialized view users_mv as select id from secrets;
    grant select on users_mv to authenticated;`);
  expect(res.statusCode, res.body).toBe(200);
  alice = t.as.user(await t.mintToken(ALICE));
});
afterAll(() => t?.stop());

const get = (path: string, headers: Record<string, string>) => t.app.inject({ url: `/api/v1/db/${path}`, headers });
const write = (method: 'POST' | 'PATCH' | 'DELETE', path: string, headers: Record<string, string>) =>
  t.app.inject({
    method,
    url: `/api/v1/db/${path}`,
    headers: { ...headers, ...(method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
    ...(method === 'DELETE' ? {} : { payload: JSON.stringify({ secret: 'x' }) }),
  });

describe('materialized views are closed by default', () => {
  it('anon cannot read a materialized view of an RLS-protected table', async () => {
    const res = await get('secrets_mv', t.as.anon);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe('permission_denied');
    expect(res.body).not.toContain('nobody');
    // The table itself still answers through its policy.
    expect((await get('secrets', t.as.anon)).json()).toEqual([]);
  });

  it('a signed-in user cannot read it either, not even their own rows', async () => {
    const res = await get('secrets_mv', alice);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe('permission_denied');
    expect((await get('secrets', alice)).json()).toEqual([{ id: 1, owner: ALICE, secret: "alice's" }]);
  });

  it('the secret key reads every row', async () => {
    const res = await get('secrets_mv?order=id&select=id', t.as.service);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('an explicit grant opens it to that role only', async () => {
    expect((await get('public_mv?order=id', t.as.anon)).json()).toEqual([{ id: 1 }, { id: 2 }]);
    expect((await get('users_mv?order=id', alice)).json()).toEqual([{ id: 1 }, { id: 2 }]);
    expect((await get('users_mv', t.as.anon)).statusCode).toBe(403);
  });

  it('a grant survives a refresh, and a view made in a later script is closed too', async () => {
    const res = await t.sql(`
      insert into secrets values (3, null, 'new');
      refresh materialized view public_mv;
      create materialized view later_mv as select secret from secrets with no data;
      refresh materialized view later_mv;`);
    expect(res.statusCode, res.body).toBe(200);
    expect((await get('public_mv?order=id', t.as.anon)).json()).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    expect((await get('later_mv', t.as.anon)).statusCode).toBe(403);
    expect((await get('later_mv', t.as.service)).json()).toHaveLength(3);
  });

  it('reading one that was never populated is a 400 that says to refresh it, not a 500', async () => {
    const res = await t.sql('create materialized view empty_mv as select id from secrets with no data');
    expect(res.statusCode, res.body).toBe(200);
    const read = await get('empty_mv', t.as.service);
    expect(read.statusCode, read.body).toBe(400);
    expect(read.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('refresh materialized view') });
  });

  it('writing to a materialized view is 405 for the secret key and 403 without the privilege, never 500', async () => {
    for (const method of ['POST', 'PATCH', 'DELETE'] as const) {
      const path = method === 'POST' ? 'secrets_mv' : 'secrets_mv?eq.id=1';
      const service = await write(method, path, t.as.service);
      expect(service.statusCode, `${method} ${service.body}`).toBe(405);
      expect(service.json()).toMatchObject({ code: 'method_not_allowed', message: expect.stringContaining('materialized view') });
      const anon = await write(method, path, t.as.anon);
      expect(anon.statusCode, `${method} ${anon.body}`).toBe(403);
      expect(anon.json().code).toBe('permission_denied');
    }
    expect((await get('secrets_mv?select=id,secret&eq.id=1', t.as.service)).json()).toEqual([{ id: 1, secret: "alice's" }]);
  });
});

describe('migration 0006 closes materialized views made before it', () => {
  it('revokes anon and authenticated, keeps the service role and later explicit grants', async () => {
    const { db, cleanup } = await openTestDb();
    try {
      const all = systemMigrations();
      await migrateSystem(
        db,
        all.filter((m) => m.version < 6),
      );
      await db.script(`
        create table old_secrets (id int primary key, secret text);
        insert into old_secrets values (1, 'x');
        create materialized view old_mv as select * from old_secrets;`);
      const can = async (role: string, mv = 'public.old_mv') =>
        (await db.query<{ ok: boolean }>('select has_table_privilege($1, $2, $3) as ok', [role, mv, 'select'])).rows[0].ok;
      expect(await can('anon')).toBe(true); // the hole: default privileges gave it to the API roles
      expect(await migrateSystem(db, all)).toContain(6);
      expect(await can('anon')).toBe(false);
      expect(await can('authenticated')).toBe(false);
      expect(await can('service')).toBe(true);
      const rows = await db.runAs(
        { role: 'service', claims: '{}' },
        'select null::text as body, count(*) as n, null::int8 as total from old_mv',
        [],
        true,
      );
      expect(rows.n).toBe(1);
      // One made later by a direct client (not the SQL runner) is closed as well.
      await db.script('create materialized view direct_mv as select id from old_secrets');
      expect(await can('anon', 'public.direct_mv')).toBe(false);
      expect(await can('service', 'public.direct_mv')).toBe(true);
      // An owner who wants it public says so, and a restart does not take it back.
      await db.script('grant select on old_mv to anon');
      expect(await migrateSystem(db, all)).toEqual([]);
      expect(await can('anon')).toBe(true);
    } finally {
      await cleanup();
    }
  });
});
