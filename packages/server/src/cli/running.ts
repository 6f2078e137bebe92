/**
 * The embedded server running on a data dir, and the keys the CLI uses. A running embedded
 * server holds its database (one process only), so the CLI goes through it: `keys`, `sql`,
 * `gen types`, `admin`, `backup` read the file it leaves in its data dir.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Db, DbError } from '../db/index.js';
import type { ProjectKeys } from '../http/index.js';
import { fail } from './output.js';

/**
 * The 0600 file a running embedded server leaves in its data dir: its URL and the keys it
 * uses (configured or made), so `plinth keys`, `sql` and `gen types` can reach it without
 * opening the database it holds, whatever environment they run in.
 */
export const serverFile = (dataDir: string) => join(dataDir, 'server.json');

export function writeServerFile(dataDir: string, url: string, keys: ProjectKeys) {
  const f = serverFile(dataDir);
  const body = { url, pid: process.pid, public_key: keys.publicKey, secret_key: keys.secretKey };
  writeFileSync(f, JSON.stringify(body), { mode: 0o600 });
  chmodSync(f, 0o600);
}

export interface RunningServer {
  url: string;
  pid: number;
  keys: ProjectKeys | null;
}

/** A running embedded server on this data dir, if any (its process is alive). */
export function runningServer(dataDir: string): RunningServer | null {
  const f = serverFile(dataDir);
  if (!existsSync(f)) return null;
  try {
    const s = JSON.parse(readFileSync(f, 'utf8')) as { url: string; pid: number; public_key?: string; secret_key?: string };
    process.kill(s.pid, 0);
    return { url: s.url, pid: s.pid, keys: s.public_key && s.secret_key ? { publicKey: s.public_key, secretKey: s.secret_key } : null };
  } catch {
    return null;
  }
}

/** The running embedded server of the project, or null (PostgreSQL projects have none to go through). */
export function serverOf(config: Config): RunningServer | null {
  return config.databaseUrl ? null : runningServer(config.dataDir);
}

/**
 * The keys the CLI uses, never made here: those of the server running on the data dir; else
 * the configured ones (PLINTH_PUBLIC_KEY, PLINTH_SECRET_KEY) over the ones a first start made,
 * exactly as a server would choose. Fails with one line when there are none yet.
 */
export async function projectKeys(config: Config): Promise<ProjectKeys> {
  const configured = { publicKey: config.publicKey ?? undefined, secretKey: config.secretKey ?? undefined };
  const running = serverOf(config)?.keys;
  if (running) return running;
  // Loaded here: a running server answered above without the settings' modules.
  const { readKeysFile, withConfigured } = await import('../settings/index.js');
  const both = withConfigured(null, configured);
  if (both) return both;
  const made = config.databaseUrl ? await databaseKeys(config) : readKeysFile(config.dataDir);
  const keys = withConfigured(made, configured);
  if (keys) return keys;
  const where = config.databaseUrl ? `in the database of ${config.databaseUrlVariable}` : `in ${config.dataDir}`;
  fail(`no keys yet ${where}: start the server once (plinth start), or set PLINTH_PUBLIC_KEY and PLINTH_SECRET_KEY`);
}

async function databaseKeys(config: Config): Promise<ProjectKeys | null> {
  const { openDatabase } = await import('../db/index.js');
  const { readDatabaseKeys } = await import('../settings/index.js');
  try {
    const db = await openDatabase({ ...config, dbPoolSize: 1 });
    try {
      return await readDatabaseKeys(db);
    } finally {
      await db.close();
    }
  } catch (err) {
    fail(`cannot read the keys from ${config.databaseUrlVariable}: ${(err as Error).message}`);
  }
}

/**
 * A management request to the running server with the secret key; a server that does not
 * answer is one line. Resolves with the status and the parsed JSON body (or the raw response).
 * @example const { status, body } = await callServer(config, server, 'POST', '/api/v1/sql', { query });
 */
export async function callServer(
  config: Config,
  server: RunningServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown>; response: Response }> {
  const keys = await projectKeys(config);
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${keys.secretKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch(() => fail(`the server on ${config.dataDir} (${server.url}) does not answer; is it still starting, or stuck?`));
  const type = response.headers.get('content-type') ?? '';
  const parsed = type.includes('json') ? ((await response.json().catch(() => ({}))) as Record<string, unknown>) : {};
  return { status: response.status, body: parsed, response };
}

/**
 * Runs `fn` on an open database and closes it (and its lock) before anything else happens,
 * also when `fn` fails: a SQL error is then the one line of its message.
 */
export async function closingAfter<T>(db: Db, fn: () => Promise<T>, onDbError?: (err: DbError) => never): Promise<T> {
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    await db.close().catch(() => undefined);
    const { DbError } = await import('../db/index.js');
    if (err instanceof DbError) (onDbError ?? ((e: DbError) => fail(e.message)))(err);
    throw err;
  }
  await db.close();
  return result;
}
