import { spawn } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { acquireDataDirLock, closeToOthers } from './lock.js';
import { type Migration, migrateSystem, systemMigrations } from './migrate.js';
import { commandOf, splitStatements } from './statements.js';
import {
  type Db,
  DbError,
  DbUnavailableError,
  type QueryResult,
  type Queryable,
  type ScriptOptions,
  setAsSql,
  toDbError,
} from './types.js';
import { Reply, STATEMENT_GONE, Session } from './run-as.js';
import { ensureTemplate } from './template.js';
import { MessageReader } from './wire.js';

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface WorkerError {
  message: string;
  code?: string;
  detail?: string;
  constraint?: string;
  position?: string | number;
  column?: string;
  table?: string;
  hint?: string;
}

const WORKER_URL = new URL('../../worker/pglite-worker.mjs', import.meta.url);
const INIT_URL = new URL('../../worker/pglite-init.mjs', import.meta.url);

function fromWorker(e: WorkerError): Error {
  if (e.code && /^[0-9A-Z]{5}$/.test(e.code)) {
    const pos = e.position !== undefined ? Number(e.position) : undefined;
    return new DbError(e.message, e.code, e.detail, e.constraint, Number.isFinite(pos) ? pos : undefined, e.column, e.table, e.hint);
  }
  return new Error(e.message);
}

/** Clears what an interrupted making of `pgData` left beside it; returns the folder to make it in. */
function makingPath(pgData: string): string {
  const parent = dirname(pgData);
  for (const name of readdirSync(parent))
    if (name.startsWith(`${basename(pgData)}.init-`)) rmSync(join(parent, name), { recursive: true, force: true });
  return `${pgData}.init-${process.pid}`;
}

/**
 * Runs PGlite's initdb in a process of its own (worker/pglite-init.mjs says why) into `pgData`.
 * @example await initdb('/tmp/x/pgdata');
 */
export function initdb(pgData: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(INIT_URL), pgData], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`The embedded database could not be created in ${pgData}: ${stderr.trim() || `exit ${code ?? signal}`}`));
    });
  });
}

/**
 * The template a new project's database is copied from (db/template.ts): initdb and these
 * migrations, made once and kept in the build folder.
 * @example const pgdata = await pgliteTemplate(); // …/dist/pglite-template/<key>/pgdata
 */
export function pgliteTemplate(migrations: Migration[] = systemMigrations(), root?: string): Promise<string> {
  return ensureTemplate({
    migrations,
    root,
    async build(dataDir) {
      const db = await openPglite(dataDir, { fromTemplate: false, extensions: true });
      try {
        if (migrations.length) await migrateSystem(db, migrations);
        await db.query('checkpoint');
      } finally {
        await db.close();
      }
    },
  });
}

/**
 * Makes a fresh data dir beside the final one, renamed into place when complete: a start
 * interrupted halfway (Ctrl-C, a crash) leaves no half-made database behind to fail the next
 * start. A copy of the migrated template when there is one (or it can be made), else initdb
 * alone (the start then runs the migrations).
 */
async function makeDataDir(pgData: string, fromTemplate: boolean): Promise<void> {
  const temp = makingPath(pgData);
  try {
    const template = fromTemplate ? await pgliteTemplate().catch(() => null) : null;
    // Asynchronous: the server's modules load meanwhile (cli/start.ts); 1,166 files, 0.3–1.3 s.
    if (template) await cp(template, temp, { recursive: true });
    else await initdb(temp);
    renameSync(temp, pgData);
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * WebAssembly runs on V8's baseline compiler only (issue 10 §6): by default V8 also compiles
 * PGlite's hot functions again with its optimizing compiler, which holds about 80 MB more of
 * an idle server's memory, for no speed `npm run bench` can tell apart on this workload
 * (queries spend their time in PostgreSQL's storage and executor code, not in tight loops).
 * A process-wide V8 flag, read when a module is compiled: set before the worker compiles.
 */
let baselineOnly = false;
function wasmBaselineOnly() {
  if (baselineOnly) return;
  baselineOnly = true;
  setFlagsFromString('--liftoff-only');
}

/** Starts the worker on a data dir; resolves once PGlite answers, with its session user. */
async function startWorker(pgData: string, extensions: boolean): Promise<{ worker: Worker; sessionUser: string }> {
  wasmBaselineOnly();
  const worker = new Worker(WORKER_URL, { workerData: { dataDir: pgData, extensions } });
  let sessionUser = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const onMessage = (msg: { ready?: boolean; sessionUser?: string; error?: WorkerError }) => {
        if (msg.ready === undefined) return;
        worker.off('message', onMessage);
        sessionUser = msg.sessionUser ?? '';
        if (msg.ready) resolve();
        else reject(new Error(`The embedded database did not open: ${msg.error?.message}`));
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`The embedded database did not open (its worker exited with ${code}).`)));
    });
  } catch (err) {
    void worker.terminate();
    throw err;
  }
  return { worker, sessionUser };
}

export interface PgliteOptions {
  /** A missing database is copied from the migrated template (default), or made by initdb alone. */
  fromTemplate?: boolean;
  /**
   * Load pgcrypto and uuid-ossp (migration 0140's `extensions` schema): a Supabase project
   * folder's SQL calls them. Off by default: they cost about 28 MB of resident memory.
   */
  extensions?: boolean;
}

/**
 * PGlite in a worker thread, its data dir guarded by Plinth's lock and closed to other users.
 * @example const db = await openPglite('./data'); await db.query('select 1');
 */
export async function openPglite(dataDir: string, options: PgliteOptions = {}): Promise<Db> {
  const pgData = join(dataDir, 'pgdata');
  const release = acquireDataDirLock(dataDir, pgData);
  let worker: Worker;
  let session: Session;
  try {
    if (!existsSync(pgData)) await makeDataDir(pgData, options.fromTemplate !== false);
    // PGlite writes its files 0666 whatever the umask, and the WAL holds the token-signing key.
    closeToOthers(pgData);
    const started = await startWorker(pgData, options.extensions === true);
    worker = started.worker;
    // runAs's statements on PGlite's one session (db/run-as.ts).
    session = new Session(started.sessionUser);
  } catch (err) {
    release();
    throw err;
  }
  const stopped = `The embedded database in ${dataDir} stopped.`;
  const pending = new Map<number, Pending>();
  const listeners = new Map<string, Set<(payload: string) => void>>();
  let nextId = 1;
  let dead: Error | null = null;
  /** What a /health check found broken after its answer was given (it took over a second). */
  let lateBroken: string | undefined;
  const brokenSession = (reason?: string) =>
    new DbUnavailableError(`The embedded database in ${dataDir} had a broken connection: ${reason}.`, 'broken session');

  worker.on('message', (msg: { id?: number; ok?: boolean; result?: unknown; error?: WorkerError; notify?: string; payload?: string }) => {
    if (msg.notify !== undefined) {
      for (const fn of listeners.get(msg.notify) ?? []) fn(msg.payload ?? '');
      return;
    }
    if (msg.id === undefined) return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    // A statement in flight when the database closed (PGlite's own words): the database is gone,
    // as for every call after it, not a failure of that statement (the realtime and outbox polls
    // meet it at every close).
    else if (msg.error?.message === 'PGlite is closed' && !msg.error.code) p.reject(new DbUnavailableError(stopped, 'stopped'));
    else p.reject(fromWorker(msg.error ?? { message: 'unknown error' }));
  });
  const onDeath = (err: Error) => {
    dead = err;
    for (const p of pending.values()) p.reject(new DbUnavailableError(stopped, 'stopped'));
    pending.clear();
    release();
  };
  worker.on('error', onDeath);
  worker.on('exit', () => onDeath(new Error('worker exited')));

  function call<T>(msg: Record<string, unknown>): Promise<T> {
    if (dead) return Promise.reject(new DbUnavailableError(stopped, 'stopped'));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, ...msg });
    });
  }

  const withCommand = (r: QueryResult, sql: string): QueryResult => {
    r.command = commandOf(sql);
    return r;
  };

  const db: Db = {
    kind: 'pglite',
    async query<R>(sql: string, params?: unknown[]) {
      return withCommand(await call<QueryResult>({ op: 'query', sql, params }), sql) as QueryResult<R>;
    },
    async runAs(ctx, text, params, rows) {
      // The batch PostgreSQL gets (db/run-as.ts), through PGlite's execProtocolRaw in the
      // worker: one call into PGlite instead of plinth.run_as's five protocol steps, PL/pgSQL
      // and an EXECUTE; measured 0.49 → 0.20 ms of CPU per read (bench's read, issue 21).
      const once = async () => {
        const batch = session.batch(ctx, text, params, rows);
        const bytes = await call<Uint8Array>({ op: 'batch', bytes: batch.bytes });
        const reply = new Reply(rows);
        new MessageReader().push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), (m) => reply.take(m));
        if (reply.error) session.failed(batch, reply.error, reply.parses);
        return reply.result();
      };
      try {
        try {
          return await once();
        } catch (err) {
          // A script ran in between (its cleanup deallocates all): the batch ran nothing; once more.
          if ((err as { code?: string }).code !== STATEMENT_GONE) throw err;
          return await once();
        }
      } catch (err) {
        throw toDbError(err);
      }
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const txId = await call<number>({ op: 'begin' });
      const tx: Queryable = {
        async query<R>(sql: string, params?: unknown[]) {
          return withCommand(await call<QueryResult>({ op: 'query', sql, params, txId }), sql) as QueryResult<R>;
        },
      };
      let result: T;
      try {
        result = await fn(tx);
      } catch (err) {
        await call({ op: 'rollback', txId }).catch(() => undefined);
        throw err;
      }
      await call({ op: 'commit', txId });
      return result;
    },
    async script(sql: string, options?: ScriptOptions) {
      const as = setAsSql(options?.as, true);
      if (options?.params?.length) {
        // In the worker: `as` and the statement in one transaction, then the session's cleanup.
        const [r] = await call<QueryResult[]>({ op: 'script', sql, params: options.params, as });
        return [withCommand(r, sql)];
      }
      // `set local` in front: a multi-statement script is one implicit transaction, so the
      // role ends with it and never sticks to PGlite's single connection.
      const prefix = as.map((s) => `${s};`).join(' ');
      let results: QueryResult[];
      try {
        results = await call<QueryResult[]>({ op: 'script', sql: prefix + sql, params: options?.params });
      } catch (err) {
        if (!prefix || !(err instanceof DbError) || err.position === undefined) throw err;
        throw new DbError(
          err.message,
          err.sqlstate,
          err.detail,
          err.constraint,
          err.position - prefix.length,
          err.column,
          err.table,
          err.hint,
        );
      }
      results = results.slice(as.length);
      const commands = splitStatements(sql).map(commandOf);
      return results.map((r, i) => ({ ...r, command: commands[i] ?? (r.fields.length ? 'SELECT' : 'OK') }));
    },
    async listen(channel, onNotify) {
      let set = listeners.get(channel);
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
        await call({ op: 'listen', channel });
      }
      set.add(onNotify);
      return async () => {
        set?.delete(onNotify);
      };
    },
    async ping() {
      if (dead) throw new DbUnavailableError(stopped, 'stopped');
      // Busy means alive: a check would wait behind the queries in flight (a slow one can
      // take minutes), and /health must answer at once.
      if (pending.size) return;
      // Nor behind a transaction a request holds open: past a second, busy too. A check that
      // answers later still counts: what it found broken (and put back) the next /health says.
      if (lateBroken) {
        const reason = lateBroken;
        lateBroken = undefined;
        throw brokenSession(reason);
      }
      let timedOut = false;
      const checking = call<{ ok: boolean; reason?: string }>({ op: 'check' }).then((c) => {
        if (timedOut && !c.ok) lateBroken = c.reason;
        return c;
      });
      const check = await Promise.race([
        checking,
        new Promise<{ ok: boolean; reason?: string }>((resolve) =>
          setTimeout(() => {
            timedOut = true;
            resolve({ ok: true });
          }, 1000).unref(),
        ),
      ]);
      if (!check.ok) throw brokenSession(check.reason);
    },
    async dumpDataDir() {
      return call<Uint8Array>({ op: 'dump' });
    },
    async close() {
      if (dead) return;
      try {
        await call({ op: 'close' });
      } finally {
        await worker.terminate();
        dead ??= new Error('closed');
        release();
      }
    },
  };
  return db;
}
