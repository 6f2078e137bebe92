import { createClient, type HttpConfig, type PlinthClient } from '@plinth/sdk';
import type { SentRequest } from '../../lib/snippets';

/**
 * The try-it's callers: SDK clients whose `fetch` hook records every request exactly as it
 * leaves the browser and its answer as it comes back (status, headers, body, elapsed time).
 * The test user's session lives in this client's memory only (`persistSession: false`): no
 * token, and no key, is ever written to localStorage, sessionStorage, IndexedDB or a URL.
 */

/** One request and its answer, as the browser saw them. */
export interface Exchange {
  request: SentRequest;
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  text: string;
  elapsedMs: number;
  /** The request never got an answer (network error, CSP, abort). */
  failure?: string;
}

function sentRequest(input: RequestInfo | URL, init: RequestInit | undefined): SentRequest {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const headers: Array<[string, string]> = [];
  const h = init?.headers;
  if (h instanceof Headers) {
    h.forEach((v, k) => {
      headers.push([k, v]);
    });
  } else if (Array.isArray(h)) for (const [k, v] of h) headers.push([k.toLowerCase(), v]);
  else if (h) for (const [k, v] of Object.entries(h)) headers.push([k.toLowerCase(), v]);
  return { method: (init?.method ?? 'GET').toUpperCase(), url, headers, body: typeof init?.body === 'string' ? init.body : null };
}

/**
 * A `fetch` that reports each exchange to whatever `sink()` returns at call time.
 * @example const f = capturingFetch(() => (e) => log.push(e)); createClient(url, key, { fetch: f })
 */
export function capturingFetch(sink: () => ((e: Exchange) => void) | null, dry: () => boolean = () => false): typeof fetch {
  return async (input, init) => {
    const request = sentRequest(input, init);
    const report = sink();
    const started = performance.now();
    if (dry()) {
      // A dry run (the snippets of a request not sent): the request is recorded as the SDK made
      // it and answered here, so nothing reaches the server.
      const headers: Array<[string, string]> = [['content-type', 'application/json']];
      report?.({ request, status: 200, statusText: 'OK', headers, text: '[]', elapsedMs: 0 });
      return new Response('[]', { status: 200, headers });
    }
    try {
      const res = await globalThis.fetch(input, init);
      const text = await res.clone().text();
      const headers: Array<[string, string]> = [];
      res.headers.forEach((v, k) => {
        headers.push([k, v]);
      });
      report?.({ request, status: res.status, statusText: res.statusText, headers, text, elapsedMs: performance.now() - started });
      return res;
    } catch (err) {
      report?.({ request, status: 0, statusText: '', headers: [], text: '', elapsedMs: performance.now() - started, failure: String(err) });
      throw err;
    }
  };
}

/** The clients of one page load: anon, the test user, and (after Reveal) the secret key. */
export interface Callers {
  base: string;
  publicKey: string;
  fetch: typeof fetch;
  anon: PlinthClient;
  user: PlinthClient;
  secret(secretKey: string): PlinthClient;
  /** Where the next exchanges go; set by the one try-it under way. */
  sink: ((e: Exchange) => void) | null;
  /** While true, requests are recorded and answered without leaving the browser (a dry run). */
  dry: boolean;
  /** Runs `fn` alone: one try-it or dry run at a time owns `sink` and `dry`. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Plain HTTP settings for endpoints the query builder does not cover (`/{pk}`, auth). */
  http(key: string): HttpConfig;
}

/**
 * Makes the callers for a server and its public key.
 * @example const callers = makeCallers(serverUrl, keys.public_key); await callers.anon.from('todos').select();
 */
export function makeCallers(base: string, publicKey: string): Callers {
  const callers: Callers = {
    base,
    publicKey,
    sink: null,
    dry: false,
    exclusive: (fn) => {
      const run = queue.then(fn);
      queue = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },
    fetch: capturingFetch(
      () => callers.sink,
      () => callers.dry,
    ),
    anon: null as unknown as PlinthClient,
    user: null as unknown as PlinthClient,
    secret: (key) => {
      if (secretClient?.key !== key) secretClient = { key, client: memoryClient(base, key, callers.fetch) };
      return secretClient.client;
    },
    http: (key) => ({ url: base, publicKey: key, fetch: callers.fetch }),
  };
  let secretClient: { key: string; client: PlinthClient } | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  callers.anon = memoryClient(base, publicKey, callers.fetch);
  callers.user = memoryClient(base, publicKey, callers.fetch);
  return callers;
}

/**
 * No refresh timer: the SDK still refreshes an expiring token before a call, and a client left
 * behind when the admin signs out then holds no timer that would keep refreshing.
 */
function memoryClient(base: string, key: string, f: typeof fetch): PlinthClient {
  return createClient(base, key, { fetch: f, auth: { persistSession: false, autoRefreshToken: false, multiTab: false } });
}
