import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite } from '../src/db/pglite.js';

/**
 * Once per test run: a fresh embedded data dir, made the way a first start makes it, which
 * every test server then copies instead of running initdb again (test/db.ts). A fresh server
 * per test file stays, at a fraction of its cost; the first-start path itself is still run
 * by the process tests (main.pglite.test.ts, the README test) and db/data-dir.pglite.test.ts.
 */
export default async function setup() {
  if (process.env.PLINTH_TEST_DB === 'postgres') return;
  const dir = mkdtempSync(join(tmpdir(), 'plinth-template-'));
  const db = await openPglite(dir);
  await db.close();
  process.env.PLINTH_TEST_PGLITE_TEMPLATE = join(dir, 'pgdata');
  return () => rmSync(dir, { recursive: true, force: true });
}
