#!/usr/bin/env node
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { adminCommand, CliError } from './admin/index.js';
import { buildApp, createLogger, type Plinth } from './app.js';
import { type Rotation, rotateSigningKeyOffline } from './auth/index.js';
import { type Args, expectedFailure, flagValue, isWorker, parseArgs, runPrimary, tellPrimary, UsageError } from './cli/index.js';
import { type Config, DEFAULT_STATEMENT_TIMEOUT_MS, loadConfig } from './config/index.js';
import { type Db, DbError, migrateApp, migrateSystem, openDatabase } from './db/index.js';
import { installPrimaryMetrics, type ProjectKeys } from './http/index.js';
import { systemClock } from './lib/index.js';
import { readDatabaseKeys, readKeysFile, withConfigured } from './settings/index.js';

const USAGE = `Usage: plinth <command> [options]

Commands:
  start [--port N] [--data-dir D] [--migrate [dir]] [--workers N|auto]
                                    start the server (PGlite in the data dir, or DATABASE_URL);
                                    --migrate applies ./migrations/*.sql (or dir) first;
                                    --workers runs N processes on the port (PostgreSQL only)
  keys [--data-dir D] [--json]      print the project's public and secret keys
  keys rotate-signing [--revoke] [--data-dir D]
                                    a new token-signing key signs from now on; --revoke drops the
                                    old one at once (every session signs in again)
  sql "<query>" [--data-dir D]      run SQL (through the running server when there is one)
  migrate [dir] [--data-dir D]      apply ./migrations/*.sql once each, in order
  gen types [--out F] [--data-dir D] write TypeScript types of the tables (for createClient<Database>)
  admin create --email E [--password P]   add a console admin (asks for the password when not given)
  admin set-password --email E [--password P]

Environment: PORT, WORKERS, PUBLIC_URL, DATA_DIR, DATABASE_URL, MIGRATIONS_DIR, LOG_LEVEL, MAX_ROWS,
PLINTH_PUBLIC_KEY, PLINTH_SECRET_KEY, SMTP_URL, SMTP_FROM, SMS_PROVIDER, REDIS_URL (also read
from ./.env). README.md has them all.`;

/** The configuration of this run once read, for the failure messages. */
let loaded: Config | null = null;

function configFrom(args: Args): Config {
  const portFlag = flagValue(args, 'port');
  const port = portFlag !== undefined ? Number(portFlag) : undefined;
  if (port !== undefined && (!/^\d+$/.test(portFlag ?? '') || port > 65535)) {
    throw new UsageError(`--port must be a port number (0–65535), got "${portFlag}"`);
  }
  const migrate = args.flags.migrate;
  loaded = loadConfig(process.env, {
    port,
    dataDir: flagValue(args, 'data-dir'),
    workers: flagValue(args, 'workers'),
    migrationsDir: migrate === undefined ? undefined : resolve(migrate === true ? './migrations' : migrate),
  });
  return loaded;
}

/** Ends the process with one line on stderr: `plinth: <message>`. */
function fail(message: string, code = 1): never {
  process.stderr.write(`plinth: ${message}\n`);
  process.exit(code);
}

/**
 * The 0600 file a running embedded server leaves in its data dir: its URL and the keys it
 * uses (configured or made), so `plinth keys`, `sql` and `gen types` can reach it without
 * opening the database it holds, whatever environment they run in.
 */
const serverFile = (dataDir: string) => join(dataDir, 'server.json');

function writeServerFile(dataDir: string, url: string, keys: ProjectKeys) {
  const f = serverFile(dataDir);
  const body = { url, pid: process.pid, public_key: keys.publicKey, secret_key: keys.secretKey };
  writeFileSync(f, JSON.stringify(body), { mode: 0o600 });
  chmodSync(f, 0o600);
}

/**
 * Opens the database and applies the app's migrations when asked (`--migrate`,
 * MIGRATIONS_DIR) before anything is served, so the API starts with the schema it expects.
 */
async function openAndMigrate(config: Config): Promise<{ db: Db; applied: string[] }> {
  const db = await openDatabase(config);
  try {
    if (!config.migrationsDir) return { db, applied: [] };
    await migrateSystem(db);
    return { db, applied: await migrateApp(db, config.migrationsDir) };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

async function start(args: Args) {
  const config = configFrom(args);
  if (config.workers > 1 && !isWorker()) {
    if (!config.databaseUrl) {
      fail(
        `--workers ${config.workers} (WORKERS) needs DATABASE_URL: the embedded database belongs to one process; set DATABASE_URL to a PostgreSQL, or start one worker`,
      );
    }
    // The migrations run once, here, before the workers start (each would wait for the lock).
    if (config.migrationsDir) {
      const { db, applied } = await openAndMigrate(config);
      await db.close();
      if (applied.length) process.stdout.write(`  migrations applied: ${applied.join(', ')}\n`);
    }
    installPrimaryMetrics();
    process.exitCode = await runPrimary(config.workers, createLogger(config.logLevel), fail);
    return;
  }
  if (isWorker()) config.migrationsDir = null;
  const { db, applied } = await openAndMigrate(config);
  if (applied.length) process.stdout.write(`  migrations applied: ${applied.join(', ')}\n`);
  const plinth = await buildApp({ config, db, processMetrics: true }).catch(async (err) => {
    await db.close().catch(() => undefined);
    throw err;
  });
  const { app, keys, log } = plinth;
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await plinth.close().catch(() => undefined);
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = config.publicUrl.replace(`:${config.port}`, `:${port}`);
  if (!config.databaseUrl) writeServerFile(config.dataDir, `http://127.0.0.1:${port}`, keys);
  // With --workers the primary prints one banner for all.
  if (isWorker()) tellPrimary({ type: 'listening', banner: banner(plinth, url) });
  else process.stdout.write(banner(plinth, url));
  log.info({ url, database: plinth.db.kind }, 'listening');
  if (plinth.db.kind === 'pglite' && config.statementTimeoutMs !== DEFAULT_STATEMENT_TIMEOUT_MS) {
    log.warn(
      'STATEMENT_TIMEOUT_MS has no effect on the embedded database (PGlite cannot cancel a statement); it applies with DATABASE_URL',
    );
  }
  handleSignals(plinth, config);
}

/** What a start prints: the base URL the SDK and the README's $API take, the console, the keys. */
function banner(plinth: Plinth, url: string): string {
  const where = plinth.db.kind === 'pglite' ? `embedded database in ${plinth.config.dataDir}` : 'PostgreSQL';
  return `${[
    '',
    `  Plinth is running (${where})`,
    '',
    `  API:         ${url}`,
    `  Console:     ${url}/console`,
    `  Public key:  ${plinth.keys.publicKey}`,
    `  Secret key:  ${plinth.keys.secretKey}   (server-side only: it bypasses row-level security)`,
    ...(plinth.admin.setupToken
      ? ['', `  First admin: ${url}/console/setup?token=${plinth.admin.setupToken}`, '               (one-time link, valid 1 hour)']
      : []),
    '',
    `  REST: ${url}/api/v1/db/<table>   Auth: ${url}/v1/auth   CLI: npx plinth help`,
    '',
  ].join('\n')}\n`;
}

/** SIGTERM (process managers, `npm start`'s stop) and SIGINT (Ctrl-C) stop the server cleanly. */
function handleSignals(plinth: Plinth, config: Config) {
  const { app, log } = plinth;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    // Closing stops new connections and waits for the requests in flight; but a keep-alive
    // connection whose request ends after that would stay open until its idle timeout, past
    // the forced exit above: close each connection as soon as it is idle.
    const idle = setInterval(() => app.server.closeIdleConnections(), 50);
    idle.unref();
    try {
      await plinth.close();
      if (!config.databaseUrl) rmSync(serverFile(config.dataDir), { force: true });
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A worker whose primary is gone (killed) stops too, rather than serve on alone.
  if (isWorker()) process.on('disconnect', () => void stop('disconnect'));
}

/** A running embedded server on this data dir, if any (its lock is held by a live process). */
function runningServer(dataDir: string): { url: string; pid: number; keys: ProjectKeys | null } | null {
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

/**
 * The keys the CLI uses, never made here: those of the server running on the data dir; else
 * the configured ones (PLINTH_PUBLIC_KEY, PLINTH_SECRET_KEY) over the ones a first start made,
 * exactly as a server would choose. Fails with one line when there are none yet.
 */
async function projectKeys(config: Config): Promise<ProjectKeys> {
  const configured = { publicKey: config.publicKey ?? undefined, secretKey: config.secretKey ?? undefined };
  if (!config.databaseUrl) {
    const running = runningServer(config.dataDir)?.keys;
    if (running) return running;
  }
  const both = withConfigured(null, configured);
  if (both) return both;
  const made = config.databaseUrl ? await databaseKeys(config) : readKeysFile(config.dataDir);
  const keys = withConfigured(made, configured);
  if (keys) return keys;
  const where = config.databaseUrl ? 'in the database of DATABASE_URL' : `in ${config.dataDir}`;
  fail(`no keys yet ${where}: start the server once (plinth start), or set PLINTH_PUBLIC_KEY and PLINTH_SECRET_KEY`);
}

async function databaseKeys(config: Config): Promise<ProjectKeys | null> {
  try {
    const db = await openDatabase({ ...config, dbPoolSize: 1 });
    try {
      return await readDatabaseKeys(db);
    } finally {
      await db.close();
    }
  } catch (err) {
    fail(`cannot read the keys from DATABASE_URL: ${(err as Error).message}`);
  }
}

async function keysCommand(args: Args) {
  if (args.positional[0] === 'rotate-signing') return rotateSigningCommand(args);
  if (args.positional.length)
    throw new UsageError(`plinth keys takes no "${args.positional[0]}"; did you mean plinth keys rotate-signing?`);
  if (args.flags.revoke) throw new UsageError('--revoke goes with plinth keys rotate-signing');
  const keys = await projectKeys(configFrom(args));
  if (args.flags.json) process.stdout.write(`${JSON.stringify({ public_key: keys.publicKey, secret_key: keys.secretKey })}\n`);
  else process.stdout.write(`public key: ${keys.publicKey}\nsecret key: ${keys.secretKey}\n`);
}

/**
 * `plinth keys rotate-signing [--revoke]`: through the running embedded server when there is one
 * (it holds the database), else on the database directly; the instances running on it hear of
 * the rotation and follow (docs/security.md, "Signing keys").
 */
async function rotateSigningCommand(args: Args) {
  const revoke = args.flags.revoke === true;
  const config = configFrom(args);
  const server = config.databaseUrl ? null : runningServer(config.dataDir);
  let rotation: Rotation;
  if (server) {
    const keys = await projectKeys(config);
    const res = await fetch(`${server.url}/api/v1/admin/signing-keys/rotate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.secretKey}` },
      body: JSON.stringify({ revoke }),
    }).catch(() => fail(`the server on ${config.dataDir} (${server.url}) does not answer; is it still starting, or stuck?`));
    const body = (await res.json().catch(() => ({}))) as Rotation & { message?: string };
    if (!res.ok) fail(body.message ?? `HTTP ${res.status}`);
    rotation = body;
  } else {
    const db = await openDatabase(config);
    rotation = await closingAfter(db, async () => {
      await migrateSystem(db);
      return rotateSigningKeyOffline(db, systemClock, { revoke });
    });
  }
  const old = rotation.previous.length ? rotation.previous.join(', ') : 'none';
  process.stdout.write(
    rotation.revoked
      ? `signing key ${rotation.kid} signs from now on; the old keys (${old}) are removed: ${rotation.sessions_ended} sessions ended, every user signs in again\n`
      : `signing key ${rotation.kid} signs from now on; the old keys (${old}) stay in the JWKS until ${rotation.retire_at}\n`,
  );
}

async function sqlCommand(args: Args) {
  const query = args.positional.join(' ').trim();
  if (!query) throw new UsageError('plinth sql needs a query: plinth sql "select 1"');
  const config = configFrom(args);
  const server = config.databaseUrl ? null : runningServer(config.dataDir);
  if (server) {
    const keys = await projectKeys(config);
    const res = await fetch(`${server.url}/api/v1/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.secretKey}` },
      body: JSON.stringify({ query }),
    }).catch(() => fail(`the server on ${config.dataDir} (${server.url}) does not answer; is it still starting, or stuck?`));
    const body = (await res.json().catch(() => ({}))) as { results?: unknown[]; message?: string };
    if (!res.ok) fail(body.message ?? `HTTP ${res.status}`);
    printResults(body.results as Array<{ command: string; rowCount: number; rows: unknown[] }>);
    return;
  }
  const db = await openDatabase(config);
  const results = await closingAfter(db, async () => {
    await migrateSystem(db);
    return db.script(query);
  });
  printResults(results);
}

/**
 * Runs `fn` on an open database and closes it (and its lock) before anything else happens,
 * also when `fn` fails: a SQL error is then the one line of its message.
 */
async function closingAfter<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    await db.close().catch(() => undefined);
    if (err instanceof DbError) fail(err.message);
    throw err;
  }
  await db.close();
  return result;
}

function printResults(results: Array<{ command: string; rowCount: number; rows: unknown[] }>) {
  for (const r of results) {
    if (r.rows.length) console.table(r.rows);
    process.stdout.write(`${r.command} ${r.rowCount}\n`);
  }
}

async function migrateCommand(args: Args) {
  const config = configFrom(args);
  const dir = resolve(args.positional[0] ?? './migrations');
  const server = config.databaseUrl ? null : runningServer(config.dataDir);
  if (server) {
    fail(
      `the embedded database in ${config.dataDir} is held by the running server (pid ${server.pid}); stop it, then run plinth migrate, or restart it with plinth start --migrate ${args.positional[0] ?? ''}`.trimEnd(),
    );
  }
  const db = await openDatabase(config);
  const applied = await closingAfter(db, async () => {
    await migrateSystem(db);
    return migrateApp(db, dir);
  });
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'nothing to apply\n');
}

/** The OpenAPI document: from the running embedded server, else from an in-process Plinth. */
async function openApiDocument(config: Config): Promise<object> {
  const server = config.databaseUrl ? null : runningServer(config.dataDir);
  if (server) {
    const keys = await projectKeys(config);
    const res = await fetch(`${server.url}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${keys.secretKey}` } }).catch(() =>
      fail(`the server on ${config.dataDir} (${server.url}) does not answer; is it still starting, or stuck?`),
    );
    if (!res.ok) fail(`the server answered ${res.status} for /api/v1/openapi.json`);
    return (await res.json()) as object;
  }
  const plinth = await buildApp({ config: { ...config, logLevel: 'warn' } });
  try {
    const res = await plinth.app.inject({ url: '/api/v1/openapi.json', headers: { authorization: `Bearer ${plinth.keys.secretKey}` } });
    return res.json() as object;
  } finally {
    await plinth.close();
  }
}

async function genCommand(args: Args) {
  if (args.positional[0] !== 'types') throw new UsageError('plinth gen makes types only: plinth gen types [--out file.ts]');
  const config = configFrom(args);
  const out = flagValue(args, 'out');
  // Checked first: a missing folder is one line, before any database work.
  if (out !== undefined) {
    const folder = dirname(resolve(out));
    if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
      fail(`cannot write ${out}: the folder ${folder} does not exist; create it first (mkdir -p ${folder})`);
    }
  }
  const { generateTypes } = await import('@plinth/sdk/gen');
  const source = generateTypes(await openApiDocument(config));
  if (out !== undefined) {
    try {
      writeFileSync(resolve(out), source);
    } catch (err) {
      fail(`cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    process.stderr.write(`wrote ${out}\n`);
  } else process.stdout.write(source);
}

async function main(argv: string[]) {
  const args = parseArgs(argv);
  switch (args.command) {
    case 'start':
      return start(args);
    case 'keys':
      return keysCommand(args);
    case 'sql':
      return sqlCommand(args);
    case 'migrate':
      return migrateCommand(args);
    case 'gen':
      return genCommand(args);
    case 'admin':
      return adminCommand(args.positional, args.flags, process.env).then(
        (line) => void process.stdout.write(`${line}\n`),
        (err) => (err instanceof CliError ? fail(err.message) : Promise.reject(err)),
      );
    default:
      process.stdout.write(`${USAGE}\n`);
  }
}

/**
 * Every failure a user can meet is one line naming the cause and the fix (cli/failures.ts),
 * exit 2 for a wrong command line, 1 otherwise. Anything else is a bug: one line too, and
 * its stack only with LOG_LEVEL=debug.
 */
function onFailure(err: unknown): void {
  const known = expectedFailure(err, { databaseUrl: loaded?.databaseUrl, port: loaded?.port, host: loaded?.host });
  if (isWorker()) {
    // The primary prints it, once for all the workers that met it.
    const message =
      known ?? `unexpected error: ${(err as Error)?.message ?? String(err)} (LOG_LEVEL=debug prints its stack; please report it)`;
    if (!known && process.env.LOG_LEVEL === 'debug') createLogger('debug').error({ err }, 'plinth failed');
    process.send?.({ type: 'failed', message, code: 1 }, () => process.exit(1));
    return;
  }
  if (known) fail(known, err instanceof UsageError ? 2 : 1);
  if (process.env.LOG_LEVEL === 'debug') createLogger('debug').error({ err }, 'plinth failed');
  fail(`unexpected error: ${(err as Error)?.message ?? String(err)} (LOG_LEVEL=debug prints its stack; please report it)`);
}

main(process.argv.slice(2)).catch(onFailure);
