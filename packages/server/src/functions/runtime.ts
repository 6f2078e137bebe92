/**
 * The code around a function inside its worker thread (bundle.ts puts it first in each
 * function's bundle, so the `Deno` shim exists before the function's own module runs). It
 * takes calls from the pool (pool.ts) as plain messages, builds a Web `Request` and the
 * function's `ctx`, and posts the `Response` back. It imports nothing of the server but the
 * SDK: the server's keys and database never enter the worker. The clients of `ctx` and any
 * `fetch` of the project's own URL go through the parent (`fetch` messages), which adds the
 * caller's or the service's credentials there.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { format } from 'node:util';
import { parentPort, workerData } from 'node:worker_threads';
import { createClient } from '@plinth/sdk';

/** What the pool sends for one call. */
export interface CallMessage {
  t: 'call';
  id: number;
  method: string;
  url: string;
  headers: Array<[string, string]>;
  body: ArrayBuffer | null;
  caller: FunctionCaller;
}

/** Who called the function (`ctx.user`, `ctx.role`, `ctx.claims`). */
export interface FunctionCaller {
  role: 'anon' | 'authenticated' | 'service';
  user: { id: string; email: string | null; phone: string | null } | null;
  claims: Record<string, unknown>;
}

/** What the worker was started with (workerData). */
export interface WorkerSetup {
  name: string;
  layout: 'plinth' | 'supabase';
  /** The project's public URL: a `fetch` of it goes through the parent (no network, no key in the worker). */
  selfOrigin: string;
  /** A value standing for the service key in a `fetch` of the project's URL (SUPABASE_SERVICE_ROLE_KEY); swapped by the parent. */
  servicePlaceholder: string;
  /** A file of the server: packages the runtime loads on demand (ws) are resolved from there. */
  resolveFrom: string;
}

/** Statuses whose Response may have no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

type Handler = (req: Request, ctx: unknown) => Response | Promise<Response>;

if (!parentPort) throw new Error('functions/runtime.ts runs in a worker thread');
const port = parentPort;
const setup = workerData as WorkerSetup;
let served: Handler | null = null;
let nextFetch = 1;
const fetches = new Map<number, { resolve: (r: Response) => void; reject: (e: Error) => void }>();
const aborts = new Map<number, AbortController>();
const nativeFetch = globalThis.fetch;

/** `fetch` through the parent: `as` says whose credentials it adds (`raw`: the headers as given). */
function bridgeFetch(as: 'caller' | 'service' | 'raw', call: number): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const body = req.method === 'GET' || req.method === 'HEAD' ? null : await req.arrayBuffer();
    const id = nextFetch++;
    const answer = new Promise<Response>((resolve, reject) => fetches.set(id, { resolve, reject }));
    port.postMessage(
      { t: 'fetch', id, as, call, method: req.method, path: url.pathname + url.search, headers: [...req.headers], body },
      body ? [body] : [],
    );
    return answer;
  };
}

// Any fetch of the project's own URL (supabase-js in a Supabase function, with SUPABASE_URL) goes
// through the parent; the rest of the world is reached as usual.
globalThis.fetch = (input, init) => {
  const href = input instanceof Request ? input.url : String(input);
  if (href.startsWith(`${setup.selfOrigin}/`)) return bridgeFetch('raw', 0)(input, init);
  return nativeFetch(input, init);
};

// Node 20 has no WebSocket global; supabase-js's realtime client wants one at createClient. ws (a
// dependency of @fastify/websocket, the server's) is loaded the first time it is asked for.
if (!('WebSocket' in globalThis)) {
  let ws: unknown;
  Object.defineProperty(globalThis, 'WebSocket', {
    configurable: true,
    get: () => {
      ws ??= (createRequire(setup.resolveFrom)('ws') as { WebSocket: unknown }).WebSocket;
      return ws;
    },
  });
}

/** A call's console output, kept for its log (admin API): at most LOG_LINES lines and LOG_CHARS characters. */
export const LOG_LINES = 50;
export const LOG_CHARS = 4000;
interface CallLog {
  lines: string[];
  chars: number;
  cut: boolean;
}
const callLogs = new AsyncLocalStorage<CallLog>();
function record(buf: CallLog, line: string): void {
  if (buf.cut) return;
  if (buf.lines.length >= LOG_LINES || buf.chars + line.length > LOG_CHARS) {
    const room = LOG_CHARS - buf.chars;
    if (buf.lines.length < LOG_LINES && room > 0) buf.lines.push(line.slice(0, room));
    buf.lines.push('[more output cut]');
    buf.cut = true;
  } else {
    buf.lines.push(line);
    buf.chars += line.length;
  }
}
for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  const original = console[level].bind(console);
  console[level] = (...args: unknown[]) => {
    const buf = callLogs.getStore();
    if (buf) record(buf, `${level === 'log' ? '' : `${level}: `}${format(...args)}`);
    original(...args);
  };
}

const pending = new Set<Promise<unknown>>();
function waitUntil(promise: Promise<unknown>): void {
  const p = Promise.resolve(promise).catch((err) => console.error(`[${setup.name}] waitUntil:`, err));
  pending.add(p);
  p.finally(() => pending.delete(p));
}

// Supabase's globals: Deno.serve and Deno.env through a shim (no Deno runtime), EdgeRuntime.waitUntil.
const env = process.env;
Object.assign(globalThis, {
  Deno: {
    env: {
      get: (k: string) => env[k],
      set: (k: string, v: string) => {
        env[k] = v;
      },
      has: (k: string) => k in env,
      delete: (k: string) => {
        delete env[k];
      },
      toObject: () => ({ ...env }),
    },
    serve(a: unknown, b?: unknown) {
      const handler = typeof a === 'function' ? a : typeof b === 'function' ? b : (a as { handler?: unknown })?.handler;
      if (typeof handler !== 'function') throw new TypeError('Deno.serve needs a handler function');
      served = handler as Handler;
      return {
        finished: new Promise(() => undefined),
        shutdown: async () => undefined,
        ref() {},
        unref() {},
        addr: { transport: 'tcp', hostname: '127.0.0.1', port: 0 },
      };
    },
  },
  EdgeRuntime: { waitUntil },
});

function clientFor(as: 'caller' | 'service', call: number) {
  return createClient(setup.selfOrigin, 'pk_function', {
    fetch: bridgeFetch(as, call),
    auth: { persistSession: false, autoRefreshToken: false },
  });
}

function handle(handler: Handler, msg: CallMessage): Promise<void> {
  const buf: CallLog = { lines: [], chars: 0, cut: false };
  return callLogs.run(buf, () => handleIn(handler, msg, buf));
}

async function handleIn(handler: Handler, msg: CallMessage, buf: CallLog): Promise<void> {
  const abort = new AbortController();
  aborts.set(msg.id, abort);
  try {
    const hasBody = msg.body !== null && msg.method !== 'GET' && msg.method !== 'HEAD';
    const req = new Request(msg.url, { method: msg.method, headers: msg.headers, body: hasBody ? msg.body : null, signal: abort.signal });
    let client: unknown = null;
    let service: unknown = null;
    const ctx = {
      ...msg.caller,
      secrets: env,
      waitUntil,
      get client() {
        client ??= clientFor('caller', msg.id);
        return client;
      },
      get service() {
        service ??= clientFor('service', msg.id);
        return service;
      },
      remoteAddr: { transport: 'tcp', hostname: '127.0.0.1', port: 0 },
    };
    const res = await handler(req, ctx);
    if (!(res instanceof Response)) throw new TypeError(`the handler answered ${res === null ? 'null' : typeof res}, not a Response`);
    const body = res.body === null ? null : await res.arrayBuffer();
    port.postMessage(
      { t: 'answer', id: msg.id, status: res.status, headers: [...res.headers], body, logs: buf.lines.join('\n') },
      body ? [body] : [],
    );
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    record(buf, `error: ${e.stack ?? e.message}`);
    port.postMessage({ t: 'failed', id: msg.id, message: e.message, stack: e.stack ?? e.message, logs: buf.lines.join('\n') });
  } finally {
    aborts.delete(msg.id);
  }
}

/**
 * Starts serving the function's module: its default export (`(req, ctx) => Response`, or an
 * object with `fetch`), or the handler it gave `Deno.serve`. Its `config` export goes to the
 * pool (verify_jwt and the limits).
 */
export function start(mod: Record<string, unknown>): void {
  const def = mod.default as unknown;
  const handler: Handler | null =
    served ??
    (typeof def === 'function'
      ? (def as Handler)
      : def && typeof (def as { fetch?: unknown }).fetch === 'function'
        ? (req, ctx) => (def as { fetch: Handler }).fetch(req, ctx)
        : null);
  if (!handler) {
    port.postMessage({
      t: 'boot-failed',
      message: 'it exports no handler: write `export default async (req, ctx) => new Response(…)` (or call Deno.serve)',
    });
    return;
  }
  port.on('message', (msg: { t: string; id: number } & Record<string, unknown>) => {
    if (msg.t === 'call') void handle(handler, msg as unknown as CallMessage);
    else if (msg.t === 'ping') port.postMessage({ t: 'pong', id: msg.id });
    else if (msg.t === 'abort') aborts.get(msg.id)?.abort(new Error('the call ran past its time limit'));
    else if (msg.t === 'fetched') {
      const f = fetches.get(msg.id);
      fetches.delete(msg.id);
      if (!f) return;
      if (msg.error) f.reject(new TypeError(String(msg.error)));
      else {
        const status = msg.status as number;
        const body = NULL_BODY.has(status) ? null : (msg.body as ArrayBuffer | null);
        f.resolve(new Response(body, { status, headers: msg.headers as Array<[string, string]> }));
      }
    }
  });
  const config = mod.config && typeof mod.config === 'object' ? JSON.parse(JSON.stringify(mod.config)) : {};
  // Node loads its Web fetch classes (undici) on their first use: here, while the worker starts,
  // not in the version's first call (which it made ~10× slower than the next).
  void new Response(new Request('http://localhost/', { method: 'POST', body: '{}', headers: { a: 'b' } }).body).arrayBuffer();
  port.postMessage({ t: 'ready', config });
}
