/**
 * One function's calls, off the server's event loop: its bundle loaded in worker threads
 * (node:worker_threads), each with a heap cap (`resourceLimits`), an environment of its secrets
 * only, a wall-clock limit per call and a cap of calls in flight (the rest wait in a short
 * queue). A worker serves several calls at once, as Supabase's edge runtime does with an
 * isolate; a function starts with one and grows to `limits.workers` (at most 4, at most the
 * cores) while every worker it has is busy, each call going to the least busy. A call
 * past its time answers 504 `function_timeout`; its worker takes no more calls and is
 * terminated (and, on the next call, replaced) once the calls left in it finish, or at once if
 * it does not answer a ping: a function stuck in a loop blocks only its own worker. A worker
 * that runs out of memory or throws outside a call dies alone; the calls it held answer 500
 * `function_error`.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { CallMessage, FunctionCaller, WorkerSetup } from './runtime.js';

/** The limits of one function (its `config` export may lower or raise them: docs/functions.md). */
export interface FunctionLimits {
  /** Wall-clock time of one call. */
  timeoutMs: number;
  /** The worker's V8 heap (old generation). */
  memoryMb: number;
  /** Calls in flight at once. */
  concurrency: number;
  /** Calls waiting for a free slot beyond those; one more is 503 `function_busy`. */
  queue: number;
  /** Worker threads at most (each with `memoryMb`): a second one starts when every one has a call in flight. */
  workers: number;
}

export const DEFAULT_LIMITS: FunctionLimits = {
  timeoutMs: 30_000,
  memoryMb: 128,
  concurrency: 16,
  queue: 64,
  workers: Math.max(1, Math.min(4, availableParallelism())),
};

/** What a function's `config` export says (unknown keys are ignored). */
export interface FunctionSettings {
  verify_jwt: boolean;
  limits: FunctionLimits;
}

/** A call's request, as the worker rebuilds it. */
export interface CallRequest {
  method: string;
  url: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
  caller: FunctionCaller;
  /** The caller's own `apikey` and `authorization`: what `ctx.client` sends. */
  credentials: Record<string, string>;
}

/** `logs`: the call's console output, bounded (runtime.ts LOG_LINES, LOG_CHARS); absent when the worker never answered. */
export type CallOutcome =
  | { ok: true; status: number; headers: Array<[string, string]>; body: Buffer | null; logs?: string }
  | { ok: false; code: 'function_error' | 'function_timeout' | 'function_busy'; message: string; logs?: string };

/** A request of a function's client or of its fetch of the project's URL, made by the parent. */
export interface BridgeRequest {
  as: 'caller' | 'service' | 'raw';
  credentials: Record<string, string>;
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
}
export type Bridge = (req: BridgeRequest) => Promise<{ status: number; headers: Array<[string, string]>; body: Buffer }>;

export interface RunnerOptions {
  name: string;
  bundle: string;
  layout: 'plinth' | 'supabase';
  /** The worker's whole environment (process.env inside it). */
  env: Record<string, string>;
  /** The project's own URL (what the worker routes through the bridge). */
  selfOrigin: string;
  /** Stands for the service key in the worker (SUPABASE_SERVICE_ROLE_KEY); the bridge swaps it. */
  servicePlaceholder: string;
  bridge: Bridge;
  log: Logger;
}

interface Pending {
  resolve: (o: CallOutcome) => void;
  timer: NodeJS.Timeout;
  credentials: Record<string, string>;
}

interface Live {
  worker: Worker;
  ready: Promise<Record<string, unknown>>;
  inflight: Map<number, Pending>;
  /** Its module is loaded: it takes calls. */
  isReady: boolean;
  retired: boolean;
  pongs: Map<number, () => void>;
}

/** `config.verify_jwt`, `config.timeout_ms`, `config.memory_mb`, `config.concurrency` of a function's module, checked. */
export function settingsOf(config: Record<string, unknown>, defaults: FunctionSettings): FunctionSettings {
  const num = (v: unknown, min: number, max: number, d: number) =>
    typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? Math.floor(v) : d;
  const l = defaults.limits;
  return {
    verify_jwt: typeof config.verify_jwt === 'boolean' ? config.verify_jwt : defaults.verify_jwt,
    limits: {
      timeoutMs: num(config.timeout_ms, 10, 15 * 60_000, l.timeoutMs),
      memoryMb: num(config.memory_mb, 16, 4096, l.memoryMb),
      concurrency: num(config.concurrency, 1, 1000, l.concurrency),
      queue: num(config.queue, 0, 10_000, l.queue),
      workers: num(config.workers, 1, 64, l.workers),
    },
  };
}

/**
 * The calls of one version of one function. `settings` is known once its first worker has
 * loaded the module (its `config` export).
 * @example const r = createRunner(opts, defaults); await r.settings(); const out = await r.call(req);
 */
export function createRunner(options: RunnerOptions, defaults: FunctionSettings) {
  const { log, name } = options;
  /** The workers taking calls (started or starting), at most `limits.workers`. */
  const lives: Live[] = [];
  /** The worker being started, if one is. */
  let starting: Live | null = null;
  let settings: FunctionSettings | null = null;
  let active = 0;
  let nextId = 1;
  let closed = false;
  const waiting: Array<() => void> = [];
  const all = new Set<Live>();

  const start = (memoryMb: number): Live => {
    const setup: WorkerSetup = {
      name,
      layout: options.layout,
      selfOrigin: options.selfOrigin,
      servicePlaceholder: options.servicePlaceholder,
      resolveFrom: fileURLToPath(import.meta.url),
    };
    const worker = new Worker(options.bundle, {
      env: { ...options.env },
      workerData: setup,
      argv: [],
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(16, Math.max(2, memoryMb / 8)) },
    });
    const me: Live = {
      worker,
      ready: null as unknown as Promise<Record<string, unknown>>,
      inflight: new Map(),
      isReady: false,
      retired: false,
      pongs: new Map(),
    };
    all.add(me);
    let readyDone = false;
    let lastError: string | null = null;
    me.ready = new Promise((resolveReady, rejectReady) => {
      worker.on('message', (msg: { t: string; id: number } & Record<string, unknown>) => {
        if (msg.t === 'ready') {
          readyDone = true;
          resolveReady(msg.config as Record<string, unknown>);
        } else if (msg.t === 'boot-failed') {
          readyDone = true;
          rejectReady(new Error(String(msg.message)));
          void worker.terminate();
        } else if (msg.t === 'answer' || msg.t === 'failed') {
          const p = me.inflight.get(msg.id);
          if (!p) return;
          finish(me, msg.id);
          if (msg.t === 'answer') {
            const body = msg.body ? Buffer.from(msg.body as ArrayBuffer) : null;
            const logs = msg.logs as string | undefined;
            p.resolve({ ok: true, status: msg.status as number, headers: msg.headers as Array<[string, string]>, body, logs });
          } else {
            log.warn({ fn: name, err: msg.stack }, `function ${name} threw: ${msg.message}`);
            const logs = msg.logs as string | undefined;
            p.resolve({ ok: false, code: 'function_error', message: `The function ${name} failed; the server's log has the cause.`, logs });
          }
        } else if (msg.t === 'pong') {
          me.pongs.get(msg.id)?.();
        } else if (msg.t === 'fetch') {
          void relay(me, msg);
        }
      });
      worker.on('error', (err: Error & { code?: string }) => {
        lastError =
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `The function ${name} ran out of memory (its limit is ${memoryMb} MB).`
            : `The function ${name} failed; the server's log has the cause.`;
        log.warn({ fn: name, err }, `function ${name}: its worker stopped: ${err.message}`);
        if (!readyDone) {
          readyDone = true;
          rejectReady(err);
        }
      });
      worker.on('exit', () => {
        all.delete(me);
        drop(me);
        if (!readyDone) {
          readyDone = true;
          rejectReady(new Error('the worker stopped while loading the function'));
        }
        const message = lastError ?? `The function ${name} stopped; the server's log has the cause.`;
        for (const [id, p] of me.inflight) {
          finish(me, id);
          p.resolve({ ok: false, code: 'function_error', message });
        }
      });
    });
    me.ready.catch(() => undefined);
    return me;
  };

  /** A call left its worker (answered, failed or timed out): its slot goes to the next waiting call. */
  const finish = (me: Live, id: number) => {
    const p = me.inflight.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    me.inflight.delete(id);
    active--;
    waiting.shift()?.();
    if (me.retired && me.inflight.size === 0) void me.worker.terminate();
  };

  const relay = async (me: Live, msg: Record<string, unknown>) => {
    const call = me.inflight.get(msg.call as number);
    const reply = (m: Record<string, unknown>, transfer: ArrayBuffer[] = []) => {
      if (all.has(me)) me.worker.postMessage({ t: 'fetched', id: msg.id, ...m }, transfer);
    };
    try {
      const res = await options.bridge({
        as: msg.as as BridgeRequest['as'],
        credentials: call?.credentials ?? {},
        method: msg.method as string,
        path: msg.path as string,
        headers: msg.headers as Array<[string, string]>,
        body: msg.body ? Buffer.from(msg.body as ArrayBuffer) : null,
      });
      const body = res.body.buffer.slice(res.body.byteOffset, res.body.byteOffset + res.body.byteLength) as ArrayBuffer;
      reply({ status: res.status, headers: res.headers, body }, [body]);
    } catch (err) {
      reply({ error: (err as Error).message });
    }
  };

  /** The worker stopped answering or a call ran past its time: no more calls for it; it goes once empty, or now if it is stuck. */
  const retire = (me: Live, graceMs: number) => {
    if (me.retired) return;
    me.retired = true;
    drop(me);
    if (me.inflight.size === 0) {
      void me.worker.terminate();
      return;
    }
    const id = nextId++;
    const timer = setTimeout(() => {
      me.pongs.delete(id);
      log.warn({ fn: name }, `function ${name}: its worker did not answer after a call ran past its time; it was stopped`);
      for (const [cid, p] of me.inflight) {
        finish(me, cid);
        p.resolve({ ok: false, code: 'function_timeout', message: timeoutMessage() });
      }
      void me.worker.terminate();
    }, graceMs);
    me.pongs.set(id, () => {
      clearTimeout(timer);
      me.pongs.delete(id);
    });
    me.worker.postMessage({ t: 'ping', id });
  };

  const timeoutMessage = () => `The function ${name} did not answer within ${settings?.limits.timeoutMs ?? defaults.limits.timeoutMs} ms.`;

  /** A worker no longer takes calls. */
  const drop = (me: Live) => {
    const i = lives.indexOf(me);
    if (i >= 0) lives.splice(i, 1);
    if (starting === me) starting = null;
  };

  /** Starts one more worker (its module loaded in it); it takes calls once ready. */
  const grow = (): Live => {
    const me = start(settings?.limits.memoryMb ?? defaults.limits.memoryMb);
    lives.push(me);
    starting = me;
    me.ready.then(
      () => {
        me.isReady = true;
        if (starting === me) starting = null;
      },
      () => drop(me),
    );
    return me;
  };

  /**
   * The worker to send a call to: the ready one with the fewest calls in flight. When that one
   * is busy too and the function may have more, one more starts for the next calls (this call
   * does not wait for it); with none ready, the call waits for one to start.
   */
  const worker = async (): Promise<Live> => {
    for (;;) {
      let best: Live | null = null;
      for (const w of lives) if (w.isReady && !w.retired && (best === null || w.inflight.size < best.inflight.size)) best = w;
      if (best) {
        if (best.inflight.size > 0 && settings && !starting && !closed && lives.length < settings.limits.workers) grow();
        return best;
      }
      const first = settings === null;
      const me = starting ?? grow();
      try {
        const config = await me.ready;
        if (first && settings === null) {
          settings = settingsOf(config, defaults);
          if (settings.limits.memoryMb !== defaults.limits.memoryMb) {
            // Its own memory limit: a worker is made with its heap size, so this one is replaced.
            me.retired = true;
            drop(me);
            void me.worker.terminate();
          }
        }
      } catch (err) {
        drop(me);
        throw err;
      }
    }
  };

  return {
    /** verify_jwt and the limits of the function's `config` export (its module is loaded for it). */
    async settings(): Promise<FunctionSettings> {
      if (!settings) await worker();
      return settings as unknown as FunctionSettings;
    },
    /** Runs one call and says how it ended; never throws for the function's own failures. */
    async call(req: CallRequest): Promise<CallOutcome> {
      if (closed) return { ok: false, code: 'function_error', message: `The function ${name} is being replaced; retry.` };
      let s: FunctionSettings;
      let me: Live;
      try {
        s = await this.settings();
      } catch (err) {
        log.warn({ fn: name, err }, `function ${name} did not start: ${(err as Error).message}`);
        return { ok: false, code: 'function_error', message: `The function ${name} did not start; the server's log has the cause.` };
      }
      if (active >= s.limits.concurrency) {
        if (waiting.length >= s.limits.queue)
          return {
            ok: false,
            code: 'function_busy',
            message: `The function ${name} has ${s.limits.concurrency} calls in flight and ${s.limits.queue} waiting; retry shortly.`,
          };
        const got = await new Promise<boolean>((resolveSlot) => {
          const grant = () => {
            clearTimeout(timer);
            resolveSlot(true);
          };
          const timer = setTimeout(() => {
            const i = waiting.indexOf(grant);
            if (i >= 0) waiting.splice(i, 1);
            resolveSlot(false);
          }, s.limits.timeoutMs);
          waiting.push(grant);
        });
        if (!got) return { ok: false, code: 'function_timeout', message: timeoutMessage() };
        if (closed) return { ok: false, code: 'function_error', message: `The function ${name} is being replaced; retry.` };
      }
      active++;
      try {
        me = await worker();
      } catch (err) {
        active--;
        waiting.shift()?.();
        log.warn({ fn: name, err }, `function ${name} did not start: ${(err as Error).message}`);
        return { ok: false, code: 'function_error', message: `The function ${name} did not start; the server's log has the cause.` };
      }
      const id = nextId++;
      return new Promise<CallOutcome>((resolveCall) => {
        const timer = setTimeout(
          () => {
            finish(me, id);
            me.worker.postMessage({ t: 'abort', id });
            resolveCall({ ok: false, code: 'function_timeout', message: timeoutMessage() });
            retire(me, Math.min(1000, s.limits.timeoutMs));
          },
          // From the hand-over to a ready worker: its start (bundle, thread) and the queue are not
          // the function's time, so a limit means the same on a slow machine as on a fast one.
          s.limits.timeoutMs,
        );
        me.inflight.set(id, { resolve: resolveCall, timer, credentials: req.credentials });
        const body = req.body ? req.body.buffer.slice(req.body.byteOffset, req.body.byteOffset + req.body.byteLength) : null;
        const msg: CallMessage = {
          t: 'call',
          id,
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: body as ArrayBuffer | null,
          caller: req.caller,
        };
        me.worker.postMessage(msg, body ? [body as ArrayBuffer] : []);
      });
    },
    /** Calls in flight (for the tests and the list). */
    get active() {
      return active;
    },
    /** Stops taking calls; the workers end once their calls have (or now, with `now`). */
    async close(now = false): Promise<void> {
      closed = true;
      for (const grant of waiting.splice(0)) grant();
      const workers = [...all];
      await Promise.all(
        workers.map((w) => {
          w.retired = true;
          return now || w.inflight.size === 0 ? w.worker.terminate() : new Promise((r) => w.worker.once('exit', r));
        }),
      );
    },
  };
}

export type Runner = ReturnType<typeof createRunner>;

/** A fresh stand-in for the service key inside one server's workers. */
export function servicePlaceholder(): string {
  return `plinth-function-service-${randomUUID()}`;
}
