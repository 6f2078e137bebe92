import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { buildApp, type Plinth } from '../app.js';
import { loadConfig } from '../config/index.js';

// docs/operations.md "Backups" on PostgreSQL, its pg_dump and pg_restore lines as written: a
// project's database dumped and restored into another database of the cluster (where Plinth's
// roles exist) serves the same rows, users and keys. As a superuser, and as a database owner
// without one (the owner-mode run).
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
/** The lines of the docs' blocks that start with `command`, in order, without their comments. */
const lines = (command: string) => {
  const found = doc
    .split('\n')
    .filter((l) => l.startsWith(`${command} `))
    .map((l) => l.replace(/\s+#.*$/, ''));
  if (!found.length) throw new Error(`docs/operations.md has no ${command} line`);
  return found;
};

const work = mkdtempSync(join(tmpdir(), 'plinth-pgdump-'));
const targets: TestDbTarget[] = [];
const apps: Plinth[] = [];
afterAll(async () => {
  for (const a of apps) await a.close().catch(() => undefined);
  for (const t of targets) await t.cleanup();
  rmSync(work, { recursive: true, force: true });
});

async function serve(databaseUrl: string): Promise<Plinth> {
  const plinth = await buildApp({
    config: loadConfig({ LOG_LEVEL: 'silent' }, { databaseUrl, port: 0 }),
    logger: pino({ level: 'silent' }),
  });
  apps.push(plinth);
  return plinth;
}

describe('pg_dump and pg_restore as docs/operations.md says', () => {
  it('restore into another database: the same rows, users and keys', async () => {
    const [source, copy] = [await freshDbTarget(), await freshDbTarget()];
    targets.push(source, copy);
    const a = await serve(source.databaseUrl as string);
    const sk = { authorization: `Bearer ${a.keys.secretKey}` };
    const made = await a.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: sk,
      payload: { query: "create table notes (id int primary key, body text); insert into notes values (1, 'kept')" },
    });
    expect(made.statusCode, made.body).toBe(200);
    const ada = { email: 'ada@example.com', password: 'correct horse battery' };
    expect(
      (await a.app.inject({ method: 'POST', url: '/v1/auth/signup', headers: { apikey: a.keys.publicKey }, payload: ada })).statusCode,
    ).toBe(200);
    const keys = a.keys;
    await a.close();

    const [dump] = lines('pg_dump');
    expect(dump).toBe('pg_dump --format=custom --file=app.dump "$DATABASE_URL"');
    execFileSync('bash', ['-c', dump], { cwd: work, env: { PATH: process.env.PATH ?? '', DATABASE_URL: source.databaseUrl as string } });
    // Into the new database, as its owner (no superuser in the owner-mode run): the two passes.
    const into = { PATH: process.env.PATH ?? '', DATABASE_URL: copy.databaseUrl as string };
    const restore = lines('pg_restore');
    expect(restore).toHaveLength(4);
    for (const command of restore) execFileSync('bash', ['-c', `set -euo pipefail\n${command}`], { cwd: work, env: into, stdio: 'pipe' });

    const b = await serve(copy.databaseUrl as string);
    expect(b.keys).toEqual(keys);
    const rows = await b.app.inject({ url: '/api/v1/db/notes', headers: { authorization: `Bearer ${keys.secretKey}` } });
    expect(rows.json()).toEqual([{ id: 1, body: 'kept' }]);
    const signin = await b.app.inject({ method: 'POST', url: '/v1/auth/signin', headers: { apikey: keys.publicKey }, payload: ada });
    expect(signin.statusCode, signin.body).toBe(200);
    // The API login of the restored database is its own (plinth_api_<database>), made at start.
    const anon = await b.app.inject({ url: '/api/v1/db/notes', headers: { apikey: keys.publicKey } });
    expect([anon.statusCode, anon.json()]).toEqual([200, []]);
  }, 120_000);
});
