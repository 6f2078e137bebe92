/**
 * `plinth dev`: the server for the development loop. As `plinth start --migrate`, and then every
 * new `*.sql` file that appears in the project's migrations folder is applied while the server
 * runs (a failing one is logged with its file and line and applied once fixed); logs are
 * readable lines (pino-pretty) with one line per request, where `start` writes JSON for a log
 * collector. A save of plinth.json applies its auth settings and buckets again.
 */
import { existsSync, mkdirSync, readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import pretty from 'pino-pretty';
import { createLogger, type Plinth } from '../app.js';
import { migrateApp } from '../db/index.js';
import type { CommandContext } from './context.js';
import { reapplyProjectFile } from './project-apply.js';
import { startServer } from './start.js';
import { AS_WRITTEN, interceptSupabase, SUPABASE_SEARCH_PATH } from './supabase-apply.js';

/** The request line of the debug level (http/server.ts) as `GET /path 200 3 ms`; other messages as they are. */
const REQUEST_FIELDS = 'reqId,method,path,status,ms';
function message(log: Record<string, unknown>, key: string): string {
  if (log[key] !== 'request' || log.method === undefined) return String(log[key] ?? '');
  return `${log.method} ${log.path} ${log.status} ${log.ms} ms`;
}

/** Readable log lines on stdout: time, level, message and the fields, colours on a terminal. */
export function prettyLogger(level: string): Logger {
  const stream = pretty({
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'HH:MM:ss.l',
    ignore: `pid,hostname,service,${REQUEST_FIELDS}`,
    messageFormat: message,
    singleLine: true,
    sync: true,
  });
  return createLogger(level, stream);
}

/** How long the folder must be quiet before its files are read: an editor may write a file in several steps. */
const SETTLE_MS = 300;

/**
 * Applies the folder's new migrations whenever a file in it changes, one run at a time; logs
 * what was applied, and a failure once (until it changes).
 * @example const stop = watchMigrations(plinth, './migrations');
 */
export function watchMigrations(plinth: Plinth, dir: string): () => void {
  const { log } = plinth;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let lastProblem = '';
  const apply = () => {
    running = running.then(async () => {
      try {
        // A Supabase folder's migrations run as at start (its search path, PostgREST settings kept).
        const applied = plinth.config.project?.supabase
          ? await migrateApp(plinth.db, dir, { prelude: [SUPABASE_SEARCH_PATH, AS_WRITTEN], intercept: interceptSupabase })
          : await migrateApp(plinth.db, dir);
        lastProblem = '';
        if (applied.length) {
          await plinth.schema.reload();
          log.info({ applied }, `migrations applied: ${applied.join(', ')}`);
        }
      } catch (err) {
        const message = (err as Error).message;
        if (message !== lastProblem) log.warn(`migration not applied: ${message}`);
        lastProblem = message;
      }
    });
  };
  const watcher = watch(dir, (_event, name) => {
    if (name && !String(name).endsWith('.sql')) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(apply, SETTLE_MS);
  });
  watcher.on('error', (err) => log.warn({ err: err.message }, `stopped watching ${dir}`));
  log.info(`watching ${dir} for new migrations`);
  return () => {
    if (timer) clearTimeout(timer);
    watcher.close();
  };
}

/**
 * Applies plinth.json again each time it is saved (its `auth` and `storage.buckets`); a
 * mistake in it is one logged `config:` line and the server keeps what it had.
 * @example const stop = watchProjectFile(plinth, '/app/plinth.json');
 */
export function watchProjectFile(plinth: Plinth, file: string): () => void {
  let last = readFileSync(file, 'utf8');
  let running = Promise.resolve();
  // The folder is watched, not the file: editors save by replacing it.
  const watcher = watch(dirname(file), (_event, name) => {
    if (name !== basename(file)) return;
    running = running.then(async () => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return; // between an editor's delete and write
      }
      if (text === last) return;
      last = text;
      await reapplyProjectFile(plinth, file);
    });
  });
  watcher.on('error', (err) => plinth.log.warn({ err: err.message }, `stopped watching ${file}`));
  return () => watcher.close();
}

export async function run({ config }: CommandContext): Promise<void> {
  const project = config.project;
  const dir = project ? resolve(project.root, project.settings.migrations_dir) : resolve('migrations');
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  // LOG_LEVEL wins; by default dev shows each request (the debug level's one line per request).
  const level = process.env.LOG_LEVEL ?? 'debug';
  await startServer(
    { ...config, migrationsDir: dir, logLevel: level },
    {
      logger: prettyLogger(level),
      onReady: (plinth) => {
        watchMigrations(plinth, dir);
        if (project && !project.supabase) watchProjectFile(plinth, project.file);
        plinth.app.functions?.watch(); // functions reloaded on save (docs/functions.md)
      },
    },
  );
}
