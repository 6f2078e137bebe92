import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../db/index.js';
import type { ProjectKeys } from '../http/index.js';
import { randomToken } from '../lib/index.js';

/** Keys given in config (`PLINTH_PUBLIC_KEY`, `PLINTH_SECRET_KEY`): either may be missing. */
export type ConfiguredKeys = Partial<ProjectKeys> | null;

export function newKeys(): ProjectKeys {
  return { publicKey: `pk_${randomToken(32)}`, secretKey: `sk_${randomToken(32)}` };
}

/** Where the embedded project keeps its keys: a 0600 file, readable while the server holds the data dir. */
export function keysFile(dataDir: string): string {
  return join(dataDir, 'keys.json');
}

export function readKeysFile(dataDir: string): ProjectKeys | null {
  const f = keysFile(dataDir);
  if (!existsSync(f)) return null;
  const j = JSON.parse(readFileSync(f, 'utf8')) as { public_key: string; secret_key: string };
  return { publicKey: j.public_key, secretKey: j.secret_key };
}

/**
 * The keys a server uses: a configured key wins over the made one, key by key; null when a key
 * is neither configured nor made yet. The server and the CLI both decide through this.
 * @example withConfigured(readKeysFile('./data'), { secretKey: 'sk_…' })
 */
export function withConfigured(made: ProjectKeys | null, configured: ConfiguredKeys): ProjectKeys | null {
  const publicKey = configured?.publicKey || made?.publicKey;
  const secretKey = configured?.secretKey || made?.secretKey;
  return publicKey && secretKey ? { publicKey, secretKey } : null;
}

/**
 * The keys kept in the database (PostgreSQL) by a first start, or null before it. Reads only:
 * it neither migrates nor makes keys, so `plinth keys` never changes the database.
 * @example const made = await readDatabaseKeys(db);
 */
export async function readDatabaseKeys(db: Db): Promise<ProjectKeys | null> {
  const exists = await db.query<{ t: string | null }>(`select to_regclass('plinth.project_keys')::text as t`);
  if (!exists.rows[0]?.t) return null;
  const row = (
    await db.query<{ public_key: string; secret_key: string }>('select public_key, secret_key from plinth.project_keys where id = 1')
  ).rows[0];
  return row ? { publicKey: row.public_key, secretKey: row.secret_key } : null;
}

/**
 * The project's keys: from config when both are given (then nothing is made or written); else
 * kept in the data dir (embedded) or in the database (PostgreSQL, so every instance shares
 * them), made once at first start, with a configured key winning over its made one.
 * @example const keys = await loadOrCreateKeys(db, { dataDir: './data', configured: null });
 */
export async function loadOrCreateKeys(db: Db, opts: { dataDir: string; configured: ConfiguredKeys }): Promise<ProjectKeys> {
  const c = opts.configured;
  if (c?.publicKey && c.secretKey) return { publicKey: c.publicKey, secretKey: c.secretKey };
  let keys: ProjectKeys;
  if (db.kind === 'pglite') {
    keys = readKeysFile(opts.dataDir) ?? newKeys();
    mkdirSync(opts.dataDir, { recursive: true });
    const f = keysFile(opts.dataDir);
    writeFileSync(f, JSON.stringify({ public_key: keys.publicKey, secret_key: keys.secretKey }, null, 2), { mode: 0o600 });
    chmodSync(f, 0o600);
  } else {
    const fresh = newKeys();
    await db.query('insert into plinth.project_keys (id, public_key, secret_key) values (1, $1, $2) on conflict (id) do nothing', [
      fresh.publicKey,
      fresh.secretKey,
    ]);
    keys = (await readDatabaseKeys(db)) as ProjectKeys;
  }
  return withConfigured(keys, c) as ProjectKeys;
}
