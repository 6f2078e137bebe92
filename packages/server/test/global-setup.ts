import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrateSystem } from '../src/db/migrate.js';
import { pgliteTemplate } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';

/**
 * Once per test run, the databases every test copies instead of making its own (test/db.ts):
 * - PGlite: a fresh data dir, made the way initdb makes it, and one with the system migrations
 *   applied: the templates a first start copies (db/template.ts), kept in the build folder
 *   from one run to the next while the migrations do not change, and copied here for this run
 *   (a run elsewhere may replace the kept ones meanwhile);
 * - PostgreSQL: a database with the system migrations applied (as TEST_DATABASE_OWNER when
 *   set), which each test server's database is created from (`create database … template …`).
 * A test server then starts on a migrated database, as a restarted server does; the first-start
 * path itself is still run by the tests that open a fresh database (openTestDb, the migration
 * tests) and by the process tests (main.pglite.test.ts, the README test).
 */
export default async function setup() {
  if (process.env.PLINTH_TEST_DB === 'postgres') return postgresTemplate();
  const dir = mkdtempSync(join(tmpdir(), 'plinth-template-'));
  const fresh = join(dir, 'fresh', 'pgdata');
  const migrated = join(dir, 'migrated', 'pgdata');
  cpSync(await pgliteTemplate([]), fresh, { recursive: true });
  cpSync(await pgliteTemplate(), migrated, { recursive: true });
  process.env.PLINTH_TEST_PGLITE_TEMPLATE = fresh;
  process.env.PLINTH_TEST_PGLITE_MIGRATED = migrated;
  return () => rmSync(dir, { recursive: true, force: true });
}

async function postgresTemplate() {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return;
  const owner = process.env.TEST_DATABASE_OWNER;
  const name = `plinth_tpl_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`create database ${name}${owner ? ` owner ${owner}` : ''}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  if (owner) url.username = owner;
  const db = await openPostgres(url.toString(), { max: 1 });
  await migrateSystem(db);
  await db.close(); // a template must have no session open when it is copied
  process.env.PLINTH_TEST_PG_TEMPLATE = name;
  return async () => {
    const a = postgres(adminUrl, { max: 1, onnotice: () => undefined });
    await a.unsafe(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await a.end();
  };
}
