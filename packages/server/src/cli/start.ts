/**
 * `plinth start`: the server, on the project's embedded database or on PostgreSQL; with
 * `--workers N`, N processes on one port (workers.ts). `plinth dev` starts it the same way.
 */
import { rmSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Plinth } from '../app.js';
import { type Config, DEFAULT_STATEMENT_TIMEOUT_MS } from '../config/index.js';
import { type Db, migrateApp, migrateSystem, openDatabase } from '../db/index.js';
import { type CommandContext, shown as shownPath } from './context.js';
import { fail } from './output.js';
import { serverFile, writeServerFile } from './running.js';
import { isWorker, runPrimary, tellPrimary } from './workers.js';

/**
 * Opens the database and applies the app's migrations when asked (`--migrate`,
 * MIGRATIONS_DIR) before anything is served, so the API starts with the schema it expects.
 */
async function openAndMigrate(config: Config): Promise<{ db: Db; applied: string[] }> {
  const db = await openDatabase(config);
  try {
    if (config.project?.supabase && !isWorker()) {
      // A Supabase CLI folder: its migrations, then its seeds on a fresh data dir (issue 33).
      await migrateSystem(db);
      const { applySupabaseFolder } = await import('./supabase-apply.js');
      const done = await applySupabaseFolder(db, config.project);
      if (done.migrations.length) process.stdout.write(`  migrations applied: ${done.migrations.join(', ')}\n`);
      for (const f of done.missingSeeds) process.stdout.write(`  seed ${f} (supabase/config.toml [db.seed]) is not there: skipped\n`);
      if (done.seeds.length) process.stdout.write(`  seeds applied: ${done.seeds.map((f) => shownPath(f)).join(', ')}\n`);
      if (done.openTables.length) {
        process.stdout.write(
          `  WARNING: open to anyone with the anon key (no row-level security, as the folder's SQL made them): ${done.openTables.join(', ')}; close each with alter table … enable row level security\n`,
        );
      }
      return { db, applied: [] };
    }
    if (!config.migrationsDir) return { db, applied: [] };
    await migrateSystem(db);
    return { db, applied: await migrateApp(db, config.migrationsDir) };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

export interface StartOptions {
  /** The logger (plinth dev: readable lines); JSON lines at the config's level otherwise. */
  logger?: Logger;
  /**
   * Called once the app is built, before it listens (plinth dev watches the migrations from
   * here): a file written as soon as /health answers is seen.
   */
  onReady?: (plinth: Plinth) => void;
}

/**
 * Starts the server of a configuration, prints the banner and stops cleanly on SIGTERM/SIGINT.
 * @example await startServer(config);
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<void> {
  if (config.workers > 1 && !isWorker()) {
    if (!config.databaseUrl) {
      fail(
        `--workers ${config.workers} (WORKERS) needs DATABASE_URL: the embedded database belongs to one process; set DATABASE_URL to a PostgreSQL, or start one worker`,
      );
    }
    // The migrations run once, here, before the workers start (each would wait for the lock).
    if (config.migrationsDir || config.project?.supabase) {
      const { db, applied } = await openAndMigrate(config);
      await db.close();
      if (applied.length) process.stdout.write(`  migrations applied: ${applied.join(', ')}\n`);
    }
    const [{ createLogger }, { installPrimaryMetrics }] = await Promise.all([import('../app.js'), import('../http/index.js')]);
    installPrimaryMetrics();
    process.exitCode = await runPrimary(config.workers, options.logger ?? createLogger(config.logLevel), fail);
    return;
  }
  if (isWorker()) config.migrationsDir = null;
  // The server's modules load (1.3 s of a 3.4 s restart on the 2-core CI machine, issue 32)
  // while the embedded database starts in its worker thread, on the other core.
  const loading = import('../app.js');
  loading.catch(() => undefined); // a failed open is the error to report, not this
  const { db, applied } = await openAndMigrate(config);
  const { buildApp } = await loading.catch(async (err) => {
    await db.close().catch(() => undefined);
    throw err;
  });
  if (applied.length) process.stdout.write(`  migrations applied: ${applied.join(', ')}\n`);
  const plinth = await buildApp({ config, db, processMetrics: true, logger: options.logger }).catch(async (err) => {
    await db.close().catch(() => undefined);
    throw err;
  });
  const { app, keys, log } = plinth;
  try {
    await (await import('./project-apply.js')).applyProjectFile(plinth); // plinth.json's auth and buckets (issue 33)
    options.onReady?.(plinth);
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
  const supabase = await supabaseBanner(plinth);
  if (isWorker()) tellPrimary({ type: 'listening', banner: banner(plinth, url) + supabase });
  else process.stdout.write(banner(plinth, url) + supabase);
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

/** A Supabase folder's keys under the banner, as `supabase start` prints them (plinth status prints them again). */
async function supabaseBanner(plinth: Plinth): Promise<string> {
  const settings = plinth.config.project?.supabase?.settings;
  if (!settings) return '';
  const [{ isLoopbackHost, supabaseKeysOf }, { SUPABASE_LOCAL_JWT_SECRET }] = await Promise.all([
    import('../http/index.js'),
    import('../config/index.js'),
  ]);
  if (settings.auth.jwt_secret === SUPABASE_LOCAL_JWT_SECRET && !isLoopbackHost(plinth.config.host))
    return `  Supabase folder: its keys are refused on ${plinth.config.host}: the local default JWT secret signs nothing off loopback; set [auth] jwt_secret\n\n`;
  const keys = await supabaseKeysOf(settings.auth.jwt_secret);
  return `  Supabase folder: ${plinth.config.project?.file}\n  anon key:         ${keys.anon}\n  service_role key: ${keys.service_role}\n\n`;
}

/** SIGTERM (process managers, `npm start`'s stop) and SIGINT (Ctrl-C) stop the server cleanly. */
function handleSignals(plinth: Plinth, config: Config) {
  const { app, log } = plinth;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // The server file goes whichever way the process ends: it names a server that no longer answers.
    const forget = () => {
      if (!config.databaseUrl) rmSync(serverFile(config.dataDir), { force: true });
    };
    const force = setTimeout(() => {
      log.error('shutdown did not finish in 15 s; exiting anyway');
      forget();
      process.exit(1);
    }, 15_000);
    force.unref();
    // Closing stops new connections and waits for the requests in flight; but a keep-alive
    // connection whose request ends after that would stay open until its idle timeout, past
    // the forced exit above: close each connection as soon as it is idle.
    const idle = setInterval(() => app.server.closeIdleConnections(), 50);
    idle.unref();
    try {
      await plinth.close();
      forget();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A worker whose primary is gone (killed) stops too, rather than serve on alone.
  if (isWorker()) process.on('disconnect', () => void stop('disconnect'));
}

export async function run({ config }: CommandContext): Promise<void> {
  await startServer(config);
}
