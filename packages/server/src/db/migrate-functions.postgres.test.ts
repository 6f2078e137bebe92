import { afterAll, beforeAll, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { migrateSystem, systemMigrations } from './migrate.js';
import type { Db } from './types.js';

// A system migration that makes a function outside public and revokes it keeps it closed after
// the next securing run. With event triggers (a superuser) the trigger secures each new function
// at once; without them (TEST_DATABASE_OWNER: a database owner, as hosted PostgreSQL gives) the
// migration runs plinth.secure_new_functions() after each statement itself. Before that, the
// securing run took the function for new and gave it execute for public (how realtime's
// functions were reopened, migration 0154).

let db: Db;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ db, cleanup } = await openTestDb());
  await migrateSystem(db, [
    ...systemMigrations(),
    {
      version: 9999,
      name: '9999_test_closed_function',
      sql: `create or replace function plinth.test_closed() returns int language sql as 'select 1';
revoke all on function plinth.test_closed() from public;
create or replace function plinth.test_open() returns int language sql as 'select 2';`,
    },
  ]);
});
afterAll(async () => {
  await cleanup?.();
});

it('a function a system migration revokes stays closed to the API roles after a securing run; one it leaves keeps the default', async () => {
  await db.query('select plinth.secure_new_relations()');
  await db.query('select plinth.secure_new_functions()');
  const can = async (fn: string, role: string) =>
    (await db.query<{ ok: boolean }>(`select has_function_privilege($1, $2, 'execute') as ok`, [role, fn])).rows[0].ok;
  for (const role of ['anon', 'authenticated']) {
    expect(await can('plinth.test_closed()', role)).toBe(false);
    expect(await can('plinth.test_open()', role)).toBe(true);
  }
});
