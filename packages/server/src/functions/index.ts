/**
 * Functions (docs/functions.md): the project's own server code beside its data. A function is
 * `functions/<name>.ts` (or `functions/<name>/index.ts`; `supabase/functions/<name>/index.ts`
 * in a Supabase folder) exporting a Web handler `(req: Request, ctx) => Response`; it is
 * bundled with esbuild on its first call and runs in a worker thread of its own (pool.ts).
 * What it adds: `GET|POST|PUT|PATCH|DELETE /api/v1/functions/<name>` (routes.ts), the error
 * codes `function_error`, `function_timeout` and `function_busy`, and `dispatch` for
 * Supabase's face (`/functions/v1`). A project without a functions folder loads nothing more.
 */
import { mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Db } from '../db/index.js';
import { type Clock, iso } from '../lib/index.js';
import { ApiError, type App, type CallerGuards, type ProjectKeys } from '../http/index.js';
import { BundleError, bundleFunction, prepareRuntime, withRuntime } from './bundle.js';
import { createDeployed, type Deployed, type LiveVersion } from './deployed.js';
import { findFunction, folderSchedules, functionsFolder, listFunctions, type FunctionsFolder } from './discover.js';
import {
  type Bridge,
  type CallOutcome,
  createRunner,
  DEFAULT_LIMITS,
  type FunctionSettings,
  type Runner,
  servicePlaceholder,
} from './pool.js';
import { registerFunctionAdminRoutes, registerFunctionRoutes } from './routes.js';
import { createScheduler, type Scheduler } from './schedules.js';
import type { FunctionCaller } from './runtime.js';
import { type CallLog, createCallLog, type FunctionCall } from './calls.js';
import { createStoredSecrets, readSecrets, type StoredSecrets } from './secrets.js';

export { BundleError, DEPLOYED_RUNTIME, bundleCode } from './bundle.js';
export { CALLS_KEPT, type FunctionCall } from './calls.js';
export { DEPLOYED_TTL_MS, MAX_BUNDLE_BYTES, type VersionRow } from './deployed.js';
export { SCHEDULE_LEASE_MS, type ScheduleState, type Scheduler } from './schedules.js';
export { DEFAULT_LIMITS, type CallOutcome, type FunctionLimits, type FunctionSettings } from './pool.js';
export { FUNCTION_METHODS, sendAnswer } from './routes.js';
export { FUNCTION_NAME, findFunction, folderSchedules, functionsFolder, listFunctions, type FunctionsFolder } from './discover.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The functions area of this server (`plinth dev` asks it to watch the folder). */
    functions?: Functions;
  }
}

export interface FunctionsDeps {
  config: Config;
  callers: CallerGuards;
  keys: ProjectKeys;
  log: Logger;
  /** For schedules (schedules.ts): their state, and the time they run on. */
  db: Db;
  clock: Clock;
  /** Tests: how often schedules look for due runs (null: only on `schedules.tick()`). */
  schedulePollMs?: number | null;
}

export interface Functions {
  /** The project's functions folder, or null (no project). */
  folder: FunctionsFolder | null;
  /**
   * Runs one call of the function `name` for a face: the caller checked (verify_jwt), the
   * request handed over as `url` says. Throws ApiError `function_not_found`, `unauthorized`
   * (or another of the caller's errors); the function's own failures are in the outcome.
   * @example const out = await functions.dispatch(req, 'hello', 'http://localhost:8080/hello');
   */
  dispatch(req: FastifyRequest, name: string, url: string): Promise<CallOutcome>;
  /**
   * Runs one call of `name` as the service (the caller is the project itself: a schedule, a
   * webhook delivery), with the body as given (content-type JSON unless `headers` says); not
   * through verify_jwt. Throws ApiError `function_not_found` or `function_error`
   * (did not build or start); the function's own failures are in the outcome.
   */
  invokeAsService(name: string, body: string, headers?: Record<string, string>): Promise<CallOutcome>;
  /** Whether the project has a function of that name (a file, not switched off in config.toml). */
  exists(name: string): boolean;
  /** The schedules: the project's (plinth.json, config.json) and the live deployed versions'. */
  schedules: Scheduler | null;
  /** Writes the schedules again after the live versions changed (a deploy, rollback or delete through this instance). */
  syncSchedules(): Promise<void>;
  /** Deployed versions (docs/functions.md "Deploying"): stored in the database, one live per function. */
  deployed: Deployed;
  /** The recent calls of `name` on every instance, newest first (at most CALLS_KEPT). */
  calls(name: string): Promise<FunctionCall[]>;
  /** The secrets set through the admin API, stored (sealed) in the database for every instance. */
  secrets: StoredSecrets;
  /**
   * Loads the live version of `name` and starts its worker now (after a deploy or rollback on this
   * instance), so that its first call does not pay for it; false when it does not build or start.
   */
  warm(name: string): Promise<boolean>;
  /** Every function this instance knows: the folder's files and the deployed ones. */
  list(): Promise<FunctionListing[]>;
  /** Every loaded function is bundled again on its next call (in-flight calls finish on the old version). */
  reload(): void;
  /**
   * Reloads when a file of the functions folder changes (`plinth dev`); returns the stop.
   * @example const stop = plinth.app.functions?.watch();
   */
  watch(): () => void;
  close(): Promise<void>;
}

interface Loaded {
  runner: Runner;
  file: string;
}

export interface FunctionListing {
  name: string;
  /** The live deployed version (it overrides the file), or null. */
  version: number | null;
  /** The project folder's file, relative to the project root, or null. */
  file: string | null;
  schedule: string | null;
}

const FAILURE_STATUS = { function_error: 500, function_timeout: 504, function_busy: 503 } as const;

const DROP_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive']);

/**
 * The functions of the project in `config`, and the routes that serve them.
 * @example const functions = await registerFunctions(app, { config, callers, keys, log });
 */
export async function registerFunctions(app: App, deps: FunctionsDeps): Promise<Functions> {
  const functions = createFunctions(app, deps);
  await registerFunctionRoutes(app, functions, deps.config.bodyLimit);
  registerFunctionAdminRoutes(app, deps.callers.operator(), functions);
  app.decorate('functions', functions);
  app.addHook('onClose', () => functions.close());
  await functions.deployed.live();
  await functions.syncSchedules();
  return functions;
}

function createFunctions(app: App, deps: FunctionsDeps): Functions {
  const { config, callers, keys, log } = deps;
  const project = config.project;
  const folder = project ? functionsFolder(project.root, Boolean(project.supabase)) : null;
  const tomlFunctions = project?.supabase?.settings.functions ?? {};
  const selfOrigin = new URL(config.publicUrl).origin;
  const placeholder = servicePlaceholder();
  const loaded = new Map<string, Promise<Loaded>>();
  const files = new Map<string, string>();
  /** The deployed version each loaded function runs (absent: the folder's file). */
  const versions = new Map<string, number>();
  const deployed = createDeployed(deps.db, deps.clock);
  const callLog: CallLog = createCallLog(deps.db, log);
  const stored = createStoredSecrets(deps.db, deps.clock, keys.secretKey, log);
  /** The stored secrets the loaded functions were started with (null: none read yet). */
  let storedSig: string | null = null;
  let storedValues: Record<string, string> = {};
  let outDir: string | null = null;
  let runtime: Promise<string> | null = null;
  let closed = false;

  const bridge: Bridge = async (r) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of r.headers) if (!DROP_HEADERS.has(k)) headers[k] = v;
    if (r.as !== 'raw') {
      delete headers.apikey;
      delete headers.authorization;
      // A caller without a key (a function with verify_jwt: false) acts as anon: the public key.
      if (r.as === 'caller') Object.assign(headers, Object.keys(r.credentials).length ? r.credentials : { apikey: keys.publicKey });
      else headers.authorization = `Bearer ${keys.secretKey}`;
    } else {
      // supabase-js with SUPABASE_SERVICE_ROLE_KEY: the stand-in becomes the secret key here only.
      for (const k of ['apikey', 'authorization'])
        if (headers[k]?.includes(placeholder)) headers[k] = headers[k].replace(placeholder, keys.secretKey);
    }
    const res = await app.inject({ method: r.method as 'GET', url: r.path, headers, payload: r.body ?? undefined });
    const out: Array<[string, string]> = [];
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined || DROP_HEADERS.has(k)) continue;
      for (const one of Array.isArray(v) ? v : [v]) out.push([k, String(one)]);
    }
    return { status: res.statusCode, headers: out, body: res.rawPayload };
  };

  const prepared = async (): Promise<{ dir: string; runtime: string }> => {
    outDir ??= mkdtempSync(join(tmpdir(), 'plinth-functions-'));
    const dir = outDir;
    runtime ??= prepareRuntime(dir);
    runtime.catch(() => {
      runtime = null;
    });
    return { dir, runtime: await runtime };
  };

  const runnerOf = (name: string, bundle: string, layout: 'plinth' | 'supabase'): Runner => {
    const env: Record<string, string> = {
      ...readSecrets(project?.root ?? '', folder?.dir ?? '', config.databaseUrlVariable),
      ...storedValues,
    };
    if (layout === 'supabase') {
      // What Supabase's runtime gives every function, without the server's secrets: the URL and
      // the public key, and a stand-in for the service key that only this server's bridge accepts.
      env.SUPABASE_URL ??= selfOrigin;
      env.SUPABASE_ANON_KEY ??= keys.publicKey;
      env.SUPABASE_SERVICE_ROLE_KEY ??= placeholder;
    }
    const defaults: FunctionSettings = { verify_jwt: tomlFunctions[name]?.verify_jwt ?? true, limits: DEFAULT_LIMITS };
    return createRunner({ name, bundle, layout, env, selfOrigin, servicePlaceholder: placeholder, bridge, log }, defaults);
  };

  /** Forgets the loaded version of `name` (its calls in flight finish on it). */
  const unload = (name: string) => {
    const p = loaded.get(name);
    loaded.delete(name);
    files.delete(name);
    versions.delete(name);
    p?.then(
      (l) => l.runner.close(),
      () => undefined,
    );
  };

  const load = (name: string, file: string, live?: LiveVersion): Promise<Loaded> => {
    let p = loaded.get(name);
    if (p) return p;
    p = (async () => {
      const { dir, runtime: rt } = await prepared();
      if (live) {
        // A deployed version: its stored bundle, its runtime import pointed at this server's runtime.
        const code = await deployed.code(name, live.version);
        const path = join(dir, `${name}-v${live.version}-${live.sha256.slice(0, 16)}.mjs`);
        writeFileSync(path, withRuntime(code, rt));
        return { runner: runnerOf(name, path, live.layout), file };
      }
      const bundle = await bundleFunction(file, name, dir, rt);
      return { runner: runnerOf(name, bundle.path, folder?.layout ?? 'plinth'), file };
    })();
    loaded.set(name, p);
    files.set(name, file);
    if (live) versions.set(name, live.version);
    // A function that did not build is bundled again on its next call (after the fix).
    p.catch(() => {
      if (loaded.get(name) === p) loaded.delete(name);
    });
    return p;
  };

  const callerOf = async (req: FastifyRequest, verify: boolean): Promise<FunctionCaller> => {
    let principal: Awaited<ReturnType<CallerGuards['callerOf']>>;
    try {
      principal = await callers.callerOf(req);
    } catch (err) {
      if (verify) throw err;
      return { role: 'anon', user: null, claims: {} };
    }
    const claims = JSON.parse(principal.claims) as Record<string, unknown>;
    if (principal.role !== 'authenticated') return { role: principal.role, user: null, claims };
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    return { role: 'authenticated', user: { id: principal.sub, email: str(claims.email), phone: str(claims.phone) }, claims };
  };

  /** The function's running version and its settings; function_not_found, or function_error when it does not build or start. */
  const ready = async (name: string): Promise<{ entry: Loaded; settings: FunctionSettings; version: number | null }> => {
    // config.toml's [functions.<name>] enabled = false: as if there were no such function.
    // A loaded function is not looked for again (up to 8 stat calls); a reload forgets them all.
    // A deployed version overrides the folder's file; a rollback or delete shows here within DEPLOYED_TTL_MS.
    if (!closed) {
      // A secret set or unset (through any instance): the functions start again with the new values.
      const sec = await stored.current();
      if (sec.sig !== storedSig) {
        if (storedSig !== null) functions.reload();
        storedSig = sec.sig;
        storedValues = sec.values;
      }
    }
    const lives = closed ? null : await deployed.live();
    if (lives) noticeLive(lives);
    const live = lives?.get(name);
    if (loaded.has(name) && versions.get(name) !== live?.version) unload(name);
    if (live) {
      const entry = await loadOrFail(name, `deployed:${name}@${live.version}`, live);
      return started(name, entry);
    }
    const known = loaded.has(name) ? files.get(name) : undefined;
    const file = known ?? (folder && !closed && tomlFunctions[name]?.enabled !== false ? findFunction(folder, name) : null);
    if (!file || !folder) {
      const where =
        folder?.layout === 'supabase' ? `supabase/functions/${name}/index.ts` : `functions/${name}.ts or functions/${name}/index.ts`;
      throw new ApiError('function_not_found', `No function "${name}" in this project (write ${where}).`);
    }
    return started(name, await loadOrFail(name, file));
  };

  const loadOrFail = async (name: string, file: string, live?: LiveVersion): Promise<Loaded> => {
    try {
      return await load(name, file, live);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      log.warn({ fn: name, err: err instanceof BundleError ? err.message : err }, `function ${name} did not build`);
      throw new ApiError('function_error', `The function ${name} did not build; the server's log has the cause.`);
    }
  };

  const started = async (name: string, entry: Loaded): Promise<{ entry: Loaded; settings: FunctionSettings; version: number | null }> => {
    const version = versions.get(name) ?? null;
    try {
      return { entry, settings: await entry.runner.settings(), version };
    } catch (err) {
      log.warn({ fn: name, err }, `function ${name} did not start: ${(err as Error).message}`);
      throw new ApiError('function_error', `The function ${name} did not start; the server's log has the cause.`);
    }
  };

  /** Runs one call and keeps it in the function's recent calls (status, duration, console output). */
  const timed = async (name: string, version: number | null, trigger: FunctionCall['trigger'], run: () => Promise<CallOutcome>) => {
    const t0 = performance.now();
    const at = deps.clock.now();
    const out = await run();
    callLog.add({
      function: name,
      at,
      version,
      trigger,
      status: out.ok ? out.status : FAILURE_STATUS[out.code],
      code: out.ok ? null : out.code,
      duration_ms: Math.round((performance.now() - t0) * 10) / 10,
      logs: out.logs ?? '',
    });
    return out;
  };

  const fromProject: Record<string, string> = {};
  for (const [name, f] of Object.entries(project?.settings.functions ?? {})) if (f.schedule) fromProject[name] = f.schedule;
  // And the functions' own config.json (a wrong one stops the start with one line).
  const declared = folder && project ? folderSchedules(folder, fromProject, project.root) : fromProject;
  /** The schedules that run: the project's, a deployed function's replaced by its live version's (none if it has none). */
  const effective = (live: Map<string, LiveVersion>): Record<string, string> => {
    const out = { ...declared };
    for (const [name, v] of live) {
      if (v.schedule) out[name] = v.schedule;
      else delete out[name];
    }
    return out;
  };
  const schedules = createScheduler({
    db: deps.db,
    clock: deps.clock,
    log,
    declared,
    pollMs: deps.schedulePollMs,
    async run(name, scheduledAt) {
      const body = JSON.stringify({ schedule: name, scheduled_at: iso(scheduledAt) });
      const out = await functions.invokeAsService(name, body, { 'x-plinth-schedule': name });
      if (!out.ok) return { status: 'failed', detail: `${out.code}: ${out.message}` };
      return out.status < 400 ? { status: 'ok', detail: null } : { status: 'failed', detail: `the function answered ${out.status}` };
    },
  });
  /** The live versions' schedules last written (another instance's deploy shows on a call here). */
  let seenLive: Map<string, LiveVersion> | null = null;
  let seenSchedules = '';
  const syncSchedules = async (): Promise<void> => {
    const live = await deployed.live();
    seenLive = live;
    seenSchedules = JSON.stringify([...live].map(([n, v]) => [n, v.schedule]));
    await schedules.sync(effective(live));
  };
  /** A call here read live versions another instance changed: their schedules are written again (in the background). */
  const noticeLive = (live: Map<string, LiveVersion>) => {
    if (live === seenLive || closed) return;
    seenLive = live;
    const sig = JSON.stringify([...live].map(([n, v]) => [n, v.schedule]));
    if (sig === seenSchedules) return;
    seenSchedules = sig;
    void schedules.sync(effective(live)).catch((err) => log.warn({ err }, 'function schedules: writing the deployed schedules failed'));
  };

  const functions: Functions = {
    folder,
    schedules,
    syncSchedules,
    deployed,
    calls: (name) => callLog.recent(name),
    secrets: stored,
    warm: (name) =>
      ready(name).then(
        () => true,
        () => false,
      ),
    async list() {
      const live = await deployed.live();
      const out = new Map<string, FunctionListing>();
      const all = effective(live);
      const schedule = (name: string) => all[name] ?? null;
      if (folder && project)
        for (const f of listFunctions(folder))
          if (tomlFunctions[f.name]?.enabled !== false)
            out.set(f.name, { name: f.name, version: null, file: relative(project.root, f.file), schedule: schedule(f.name) });
      for (const [name, v] of live)
        out.set(name, { name, version: v.version, file: out.get(name)?.file ?? null, schedule: schedule(name) });
      return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
    },
    exists(name) {
      if (closed) return false;
      if (deployed.peek().has(name)) return true;
      if (!folder || tomlFunctions[name]?.enabled === false) return false;
      return loaded.has(name) || findFunction(folder, name) !== null;
    },
    async invokeAsService(name, body, extra = {}) {
      const { entry, version } = await ready(name);
      const headers = Object.entries({ 'content-type': 'application/json', ...extra });
      return timed(name, version, 'service', () =>
        entry.runner.call({
          method: 'POST',
          url: `${selfOrigin}/api/v1/functions/${name}`,
          headers,
          body: Buffer.from(body),
          caller: { role: 'service', user: null, claims: { role: 'service' } },
          // ctx.client acts as the caller, here the service; the key stays in this thread (the bridge adds it).
          credentials: { apikey: keys.secretKey, authorization: `Bearer ${keys.secretKey}` },
        }),
      );
    },
    async dispatch(req, name, url) {
      const { entry, settings, version } = await ready(name);
      const caller = await callerOf(req, settings.verify_jwt);
      const credentials: Record<string, string> = {};
      for (const k of ['apikey', 'authorization'] as const) {
        const v = req.headers[k];
        if (typeof v === 'string') credentials[k] = v;
      }
      const headers: Array<[string, string]> = [];
      for (const [k, v] of Object.entries(req.headers)) {
        if (v === undefined || DROP_HEADERS.has(k)) continue;
        for (const one of Array.isArray(v) ? v : [v]) headers.push([k, one]);
      }
      const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : null;
      return timed(name, version, 'request', () => entry.runner.call({ method: req.method, url, headers, body, caller, credentials }));
    },
    reload() {
      const old = [...loaded.values()];
      loaded.clear();
      versions.clear();
      for (const p of old)
        p.then(
          (l) => l.runner.close(),
          () => undefined,
        );
    },
    watch() {
      if (!folder) return () => undefined;
      let timer: NodeJS.Timeout | null = null;
      let watcher: ReturnType<typeof watch>;
      try {
        watcher = watch(folder.dir, { recursive: true }, () => {
          if (timer) clearTimeout(timer);
          timer = setTimeout(() => {
            functions.reload();
            log.info('functions changed: reloaded on their next call');
          }, 100);
        });
      } catch {
        log.info(`no ${folder.dir} folder: functions are not watched (plinth functions new <name> makes one; restart plinth dev)`);
        return () => undefined;
      }
      watcher.on('error', (err) => log.warn({ err: err.message }, `stopped watching ${folder.dir}`));
      log.info(`watching ${folder.dir} for function changes`);
      return () => {
        if (timer) clearTimeout(timer);
        watcher.close();
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await schedules.close();
      const all = [...loaded.values()];
      loaded.clear();
      await Promise.all(
        all.map((p) =>
          p.then(
            (l) => l.runner.close(true),
            () => undefined,
          ),
        ),
      );
      // Scheduled runs cut short by the close end with function_error, written before the database closes.
      await schedules.settled();
      await callLog.flush();
      if (outDir) rmSync(outDir, { recursive: true, force: true });
    },
  };
  return functions;
}

/** The function names of a project, for `plinth functions list`. */
export function functionNames(folder: FunctionsFolder): string[] {
  return listFunctions(folder).map((f) => f.name);
}
