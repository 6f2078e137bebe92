import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { buildApp, type Plinth } from '../src/app.js';
import { DEFAULT_PROJECT, loadConfig, type ProjectSettings, supabaseProject } from '../src/config/index.js';
import type { Clock } from '../src/lib/index.js';
import { freshDbTarget } from './db.js';
import { capturingLogger } from './harness.js';

export interface FunctionsServer extends Plinth {
  /** The database's URL (PostgreSQL), for a second instance on it; null on PGlite. */
  databaseUrl: string | null;
  /** The project folder the files were written in. */
  root: string;
  /** Writes a file of the project (folders made as needed). */
  write(path: string, text: string): void;
  anon: Record<string, string>;
  service: Record<string, string>;
  user(token: string): Record<string, string>;
  mintToken(sub: string, extra?: Record<string, unknown>): Promise<string>;
  sqlOk(query: string): Promise<void>;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * A Plinth serving a project folder made of `files` (a Plinth project, or with `supabase` a
 * Supabase CLI folder: supabase/config.toml is written when missing), on a fresh database.
 * @example const s = await functionsServer({ 'functions/hello.ts': 'export default () => new Response("hi")' });
 */
export async function functionsServer(
  files: Record<string, string>,
  options: {
    supabase?: boolean;
    env?: Record<string, string>;
    /** plinth.json settings beside the defaults (`functions` schedules). */
    settings?: Partial<ProjectSettings>;
    /** The clock the server runs on (schedules). */
    clock?: Clock;
    /** How often schedules look for due runs (null: only on `functions.schedules.tick()`). */
    schedulePollMs?: number | null;
    /** A second instance: the database of this PostgreSQL URL (left in place by `stop`). */
    databaseUrl?: string;
  } = {},
): Promise<FunctionsServer> {
  const root = mkdtempSync(join(tmpdir(), 'plinth-fn-project-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  if (options.supabase && !files['supabase/config.toml']) write('supabase/config.toml', 'project_id = "fn-test"\n');
  for (const [path, text] of Object.entries(files)) write(path, text);
  const project = options.supabase
    ? supabaseProject(root, {})
    : { root, file: join(root, 'plinth.json'), settings: { ...DEFAULT_PROJECT, ...options.settings } };
  const target = options.databaseUrl
    ? { dataDir: mkdtempSync(join(tmpdir(), 'plinth-test-')), databaseUrl: options.databaseUrl, cleanup: async () => undefined }
    : await freshDbTarget({ migrated: true });
  const config = loadConfig(
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'info', PUBLIC_URL: 'http://localhost:8080', ...options.env },
    { dataDir: target.dataDir, databaseUrl: target.databaseUrl, port: 0, project },
    root,
  );
  const logs: string[] = [];
  const plinth = await buildApp({
    config,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.schedulePollMs !== undefined ? { schedulePollMs: options.schedulePollMs } : {}),
    logger: options.env?.NO_LOG_CAPTURE ? pino({ level: 'silent' }) : capturingLogger(config.logLevel, logs),
  });
  return {
    ...plinth,
    root,
    write,
    logs,
    databaseUrl: target.databaseUrl ?? null,
    anon: { apikey: plinth.keys.publicKey },
    service: { authorization: `Bearer ${plinth.keys.secretKey}` },
    user: (t) => ({ apikey: plinth.keys.publicKey, authorization: `Bearer ${t}` }),
    async mintToken(sub, extra = {}) {
      const sessionId = await plinth.db.transaction(async (tx) => {
        await tx.query('insert into auth.users (id) values ($1) on conflict (id) do nothing', [sub]);
        const { rows } = await tx.query<{ id: string }>('insert into auth.sessions (user_id) values ($1) returning id', [sub]);
        return rows[0].id;
      });
      return (await plinth.tokens.sign({ sub, session_id: sessionId, ...extra }, 3600)).token;
    },
    async sqlOk(query) {
      const res = await plinth.app.inject({
        method: 'POST',
        url: '/api/v1/sql',
        headers: { authorization: `Bearer ${plinth.keys.secretKey}` },
        payload: { query },
      });
      if (res.statusCode !== 200) throw new Error(`SQL answered ${res.statusCode}: ${res.body}\n${query}`);
    },
    async stop() {
      await plinth.close();
      await target.cleanup();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
