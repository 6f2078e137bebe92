#!/usr/bin/env node
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { adminCommand, CliError } from './admin/index.js';
import { buildApp, createLogger } from './app.js';
import { type Config, loadConfig } from './config/index.js';
import { DataDirLockedError, DbSetupError, migrateApp, migrateSystem, openDatabase } from './db/index.js';
import type { ProjectKeys } from './http/principal.js';
import { readDatabaseKeys, readKeysFile, withConfigured } from './settings/keys.js';

const USAGE = `Usage: plinth <command> [options]

Commands:
  start [--port N] [--data-dir D]   start the server (PGlite in the data dir, or DATABASE_URL)
  keys [--data-dir D] [--json]      print the project's public and secret keys
  sql "<query>" [--data-dir D]      run SQL (through the running server when there is one)
  migrate [dir] [--data-dir D]      apply ./migrations/*.sql once each, in order
  gen types [--out F] [--data-dir D] write TypeScript types of the tables (for createClient<Database>)
  admin create --email E [--password P]   add a console admin (asks for the password when not given)
  admin set-password --email E [--password P]

Environment: PORT, PUBLIC_URL, DATA_DIR, DATABASE_URL, LOG_LEVEL, MAX_ROWS, PLINTH_PUBLIC_KEY,
PLINTH_SECRET_KEY, SMTP_URL, SMTP_FROM, SMS_PROVIDER, REDIS_URL (also read from ./.env).`;

interface Args {
  command: string;
  positional: string[];
  flags: Record<string, string | boolean>;
}

export function parseArgs(argv: string[]): Args {
  const [command = 'help', ...rest] = argv;
  const positional: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a.startsWith('--')) {
      const [k, v] = a.slice(2).split('=', 2);
      if (v !== undefined) flags[k] = v;
      else if (rest[i + 1] !== undefined && !rest[i + 1].startsWith('--') && k !== 'json') flags[k] = rest[++i];
      else flags[k] = true;
    } else positional.push(a);
  }
  return { command, positional, flags };
}

function configFrom(args: Args): Config {
  const port = typeof args.flags.port === 'string' ? Number(args.flags.port) : undefined;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    fail(`--port must be a port number, got ${args.flags.port}`);
  return loadConfig(process.env, {
    port,
    dataDir: typeof args.flags['data-dir'] === 'string' ? args.flags['data-dir'] : undefined,
  });
}

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

async function start(args: Args) {
  const config = configFrom(args);
  let plinth: Awaited<ReturnType<typeof buildApp>>;
  try {
    plinth = await buildApp({ config });
  } catch (err) {
    if (err instanceof DataDirLockedError || err instanceof DbSetupError) fail(err.message);
    throw err;
  }
  const { app, keys, log } = plinth;
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = config.publicUrl.replace(`:${config.port}`, `:${port}`);
  if (!config.databaseUrl) writeServerFile(config.dataDir, `http://127.0.0.1:${port}`, keys);
  process.stdout.write(
    [
      '',
      `  Plinth is running (${plinth.db.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
      '',
      `  API:         ${url}/api/v1`,
      `  Console:     ${url}/console`,
      `  Public key:  ${keys.publicKey}`,
      `  Secret key:  ${keys.secretKey}   (server-side only: it bypasses row-level security)`,
      ...(plinth.admin.setupToken
        ? ['', `  First admin: ${url}/console/setup?token=${plinth.admin.setupToken}`, '               (one-time link, valid 1 hour)']
        : []),
      '',
    ].join('\n') + '\n',
  );
  log.info({ url, database: plinth.db.kind }, 'listening');
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
}

/** A running embedded server on this data dir, if any (its lock is held by a live process). */
function runningServer(dataDir: string): { url: string; keys: ProjectKeys | null } | null {
  const f = serverFile(dataDir);
  if (!existsSync(f)) return null;
  try {
    const s = JSON.parse(readFileSync(f, 'utf8')) as { url: string; pid: number; public_key?: string; secret_key?: string };
    process.kill(s.pid, 0);
    return { url: s.url, keys: s.public_key && s.secret_key ? { publicKey: s.public_key, secretKey: s.secret_key } : null };
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
  const keys = await projectKeys(configFrom(args));
  if (args.flags.json) process.stdout.write(`${JSON.stringify({ public_key: keys.publicKey, secret_key: keys.secretKey })}\n`);
  else process.stdout.write(`public key: ${keys.publicKey}\nsecret key: ${keys.secretKey}\n`);
}

async function sqlCommand(args: Args) {
  const query = args.positional.join(' ').trim();
  if (!query) fail('usage: plinth sql "<query>"', 2);
  const config = configFrom(args);
  const server = config.databaseUrl ? null : runningServer(config.dataDir);
  if (server) {
    const keys = await projectKeys(config);
    const res = await fetch(`${server.url}/api/v1/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.secretKey}` },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as { results?: unknown[]; message?: string };
    if (!res.ok) fail(body.message ?? `HTTP ${res.status}`);
    printResults(body.results as Array<{ command: string; rowCount: number; rows: unknown[] }>);
    return;
  }
  const db = await openDatabase(config).catch((err) => fail(err instanceof DataDirLockedError ? err.message : String(err)));
  try {
    await migrateSystem(db);
    const results = await db.script(query);
    printResults(results);
  } catch (err) {
    fail((err as Error).message);
  } finally {
    await db.close();
  }
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
  if (!config.databaseUrl && runningServer(config.dataDir)) {
    fail('The embedded database is held by a running server; stop it first, or run migrations at its start.');
  }
  const db = await openDatabase(config).catch((err) => fail(err instanceof DataDirLockedError ? err.message : String(err)));
  try {
    await migrateSystem(db);
    const applied = await migrateApp(db, dir);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'nothing to apply\n');
  } catch (err) {
    fail((err as Error).message);
  } finally {
    await db.close();
  }
}

/** The OpenAPI document: from the running embedded server, else from an in-process Plinth. */
async function openApiDocument(config: Config): Promise<object> {
  const server = config.databaseUrl ? null : runningServer(config.dataDir);
  if (server) {
    const keys = await projectKeys(config);
    const res = await fetch(`${server.url}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${keys.secretKey}` } });
    if (!res.ok) fail(`the server answered ${res.status} for /api/v1/openapi.json`);
    return (await res.json()) as object;
  }
  const plinth = await buildApp({ config: { ...config, logLevel: 'warn' } }).catch((err) =>
    fail(err instanceof DataDirLockedError ? err.message : String(err)),
  );
  try {
    const res = await plinth.app.inject({ url: '/api/v1/openapi.json', headers: { authorization: `Bearer ${plinth.keys.secretKey}` } });
    return res.json() as object;
  } finally {
    await plinth.close();
  }
}

async function genCommand(args: Args) {
  if (args.positional[0] !== 'types') fail('usage: plinth gen types [--out file.ts]', 2);
  const config = configFrom(args);
  const { generateTypes } = await import('@plinth/sdk/gen');
  const source = generateTypes(await openApiDocument(config));
  if (typeof args.flags.out === 'string') {
    writeFileSync(resolve(args.flags.out), source);
    process.stderr.write(`wrote ${args.flags.out}\n`);
  } else process.stdout.write(source);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
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
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      fail(`unknown command "${args.command}"\n\n${USAGE}`, 2);
  }
}

main().catch((err) => {
  createLogger('error').error({ err }, 'plinth failed');
  process.exit(1);
});
