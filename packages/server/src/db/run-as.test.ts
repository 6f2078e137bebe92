import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { migrateSystem } from './migrate.js';
import { DbError, type Db } from './types.js';

// Db.runAs: the API's one round trip (plinth.run_as), on both databases.
let db: Db;
let cleanup: () => Promise<void>;
const sub = '22222222-2222-4222-8222-222222222222';
const ROWS = `select coalesce('[' || string_agg(row_to_json(r)::text, ',') || ']', '[]') as body, count(*) as n, null::int8 as total
  from (select note from public.notes where owner = $1[1]::text::uuid or $1[2]::text = 'all') r`;
beforeAll(async () => {
  ({ db, cleanup } = await openTestDb());
  await migrateSystem(db);
  await db.query('create table public.notes (owner uuid not null, note text not null)');
  // Made by the owner directly: without event triggers only the poll would enable RLS on it.
  await db.query('alter table public.notes enable row level security');
  await db.query('grant select, insert on public.notes to anon, authenticated');
  await db.query(`create policy own on public.notes using (owner = auth.uid()) with check (owner = auth.uid())`);
  await db.query(`insert into public.notes values ($1, 'mine'), (gen_random_uuid(), 'theirs')`, [sub]);
});
afterAll(() => cleanup());

const as = (role: 'anon' | 'authenticated' | 'service') => ({
  role,
  claims: JSON.stringify(role === 'authenticated' ? { sub, role } : { role }),
  uid: role === 'authenticated' ? sub : null,
});

describe('runAs', () => {
  it('runs the statement as the role, with the claims, under RLS', async () => {
    expect(await db.runAs(as('authenticated'), ROWS, [sub, 'all'], true)).toEqual({ body: '[{"note":"mine"}]', n: 1, total: null });
    expect(await db.runAs(as('anon'), ROWS, [sub, 'all'], true)).toEqual({ body: '[]', n: 0, total: null });
    expect((await db.runAs(as('service'), ROWS, [sub, 'all'], true)).n).toBe(2);
  });

  it('without rows, n is the row count; a policy refusal is the database error', async () => {
    const insert = 'insert into public.notes (owner, note) values ($1[1]::text::uuid, $1[2])';
    expect(await db.runAs(as('authenticated'), insert, [sub, 'new'], false)).toEqual({ body: null, n: 1, total: null });
    const refused = await db.runAs(as('authenticated'), insert, ['33333333-3333-4333-8333-333333333333', 'x'], false).catch((e) => e);
    expect(refused).toBeInstanceOf(DbError);
    expect(refused.sqlstate).toBe('42501');
  });

  it('leaves neither role nor claims behind', async () => {
    await db.runAs(as('authenticated'), ROWS, [sub, 'x'], true);
    const after = await db.query<{ who: string; uid: string | null }>('select current_user as who, auth.uid()::text as uid');
    expect(after.rows[0].who).not.toBe('authenticated');
    expect(after.rows[0].uid).toBeNull();
  });

  it('the API roles cannot call plinth.run_as to become another role', async () => {
    const escalate =
      "select * from plinth.run_as('service', '{}', null, 'select null::text, count(*), null::int8 from public.notes', '{}', true)";
    for (const role of ['anon', 'authenticated', 'service'] as const) {
      const err = await db.runAs(as(role), escalate, [], false).catch((e) => e);
      expect(err, role).toBeInstanceOf(DbError);
      expect(err.sqlstate, role).toBe('42501');
    }
  });

  it('auth.uid() takes the uid given, and reads the claims when none was given', async () => {
    const uid = 'select null::text as body, count(*) as n, null::int8 as total from (select 1) x where auth.uid() = $1[1]::text::uuid';
    const claimsOnly = { role: 'authenticated' as const, claims: JSON.stringify({ sub, role: 'authenticated' }) };
    expect((await db.runAs(as('authenticated'), uid, [sub], true)).n).toBe(1);
    expect((await db.runAs(claimsOnly, uid, [sub], true)).n).toBe(1);
    // No user: null even if the claims were to say otherwise.
    expect((await db.runAs({ ...claimsOnly, uid: null }, uid, [sub], true)).n).toBe(0);
    // Claims set by hand afterwards on a connection that ran runAs (the SQL runner's way).
    const byHand = await db.transaction(async (tx) => {
      await tx.query("select set_config('request.jwt.claims', $1, true)", [JSON.stringify({ sub })]);
      return (await tx.query<{ uid: string }>('select auth.uid()::text as uid')).rows[0].uid;
    });
    expect(byHand).toBe(sub);
  });
});
