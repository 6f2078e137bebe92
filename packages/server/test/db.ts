import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { openPglite } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';
import { apiLoginName } from '../src/db/api-login.js';
import type { Db } from '../src/db/types.js';

/** Which database the suite runs on: `PLINTH_TEST_DB=postgres` with `TEST_DATABASE_URL`, else PGlite. */
export const TEST_DB_KIND: 'pglite' | 'postgres' = process.env.PLINTH_TEST_DB === 'postgres' ? 'postgres' : 'pglite';

export interface TestDbTarget {
  /** DATABASE_URL of a fresh database, or null for PGlite. */
  databaseUrl: string | null;
  /** The test cluster's superuser URL (PostgreSQL), for what a test does as the cluster's admin. */
  adminUrl: string | null;
  /** Data dir (PGlite): a fresh database (a copy of the run's template, test/global-setup.ts), else empty. */
  dataDir: string;
  cleanup(): Promise<void>;
}

/**
 * A fresh database for one test file: a new PGlite data dir, or a new database on the test
 * PostgreSQL cluster (dropped afterwards, with the API login Plinth made for it). Empty, or with
 * `migrated` a copy of the run's migrated template (test/global-setup.ts): what a test server
 * starts on, so fifty of them do not each replay every system migration.
 * With `TEST_DATABASE_OWNER` (scripts/test.sh's second PostgreSQL run) the database belongs to
 * that role, a non-superuser as on hosted PostgreSQL, and the server connects as it.
 */
export async function freshDbTarget(options: { migrated?: boolean } = {}): Promise<TestDbTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-test-'));
  if (TEST_DB_KIND === 'pglite') {
    // A copy of the data dir made once for the run (test/global-setup.ts).
    const template = options.migrated ? process.env.PLINTH_TEST_PGLITE_MIGRATED : process.env.PLINTH_TEST_PGLITE_TEMPLATE;
    if (template) cpSync(template, join(dataDir, 'pgdata'), { recursive: true });
    return { databaseUrl: null, adminUrl: null, dataDir, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('PLINTH_TEST_DB=postgres needs TEST_DATABASE_URL');
  const name = `plinth_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const owner = process.env.TEST_DATABASE_OWNER;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  const template = options.migrated ? process.env.PLINTH_TEST_PG_TEMPLATE : undefined;
  await admin.unsafe(`create database ${name}${owner ? ` owner ${owner}` : ''}${template ? ` template ${template}` : ''}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  if (owner) url.username = owner;
  return {
    databaseUrl: url.toString(),
    adminUrl,
    dataDir,
    cleanup: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const a = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      await a.unsafe(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await a.unsafe(`drop role if exists ${apiLoginName(name)}`).catch(() => undefined);
      await a.end();
    },
  };
}

/** An open Db on a fresh database. */
export async function openTestDb(): Promise<{ db: Db; target: TestDbTarget; cleanup: () => Promise<void> }> {
  const target = await freshDbTarget();
  const db = target.databaseUrl
    ? await openPostgres(target.databaseUrl, { max: 4 })
    : await openPglite(target.dataDir, { extensions: true });
  return {
    db,
    target,
    cleanup: async () => {
      await db.close();
      await target.cleanup();
    },
  };
}
