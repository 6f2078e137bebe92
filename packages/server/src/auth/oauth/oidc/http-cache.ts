import { type Clock, type GuardedFetch, UnreachableError } from '../../../lib/index.js';

/** Kept this long when the answer has no caching headers (RFC 9111 §4.2.2 lets a cache choose). */
export const DEFAULT_FRESH_MS = 60 * 60 * 1000;
/** At most this long, whatever the headers say: a provider's keys and endpoints do change. */
export const MAX_FRESH_MS = 24 * 60 * 60 * 1000;
/** A stale copy is used for this long while the provider cannot be reached (RFC 5861 stale-if-error). */
export const STALE_IF_ERROR_MS = 24 * 60 * 60 * 1000;
/** Discovery documents are a few KiB and JWKS a few keys: anything bigger is not one. */
const MAX_BYTES = 512 * 1024;
const MAX_ENTRIES = 200;

/**
 * How long an answer stays fresh, from its `Cache-Control` (`no-store`, `no-cache`, `max-age`) or
 * `Expires` (against its `Date`), capped at 24 hours; `no-store` means not kept at all.
 * @example freshness(new Headers({ 'cache-control': 'public, max-age=3600' }), Date.now()) // 3_600_000
 * @example freshness(new Headers({ 'cache-control': 'no-store' }), Date.now()) // 'no-store'
 */
export function freshness(headers: Headers, now: number): number | 'no-store' {
  const directives = new Map<string, string>();
  for (const part of (headers.get('cache-control') ?? '').split(',')) {
    const [name, ...value] = part.trim().toLowerCase().split('=');
    if (name) directives.set(name, value.join('=').replace(/^"|"$/g, ''));
  }
  if (directives.has('no-store')) return 'no-store';
  if (directives.has('no-cache')) return 0;
  const maxAge = directives.get('max-age');
  if (maxAge !== undefined) return /^\d{1,10}$/.test(maxAge) ? Math.min(Number(maxAge) * 1000, MAX_FRESH_MS) : 0;
  const expires = headers.get('expires');
  if (expires !== null) {
    const at = Date.parse(expires);
    const date = Date.parse(headers.get('date') ?? '');
    // An invalid Expires (often "0" or "-1") means already expired (RFC 9111 §5.3).
    if (Number.isNaN(at)) return 0;
    return Math.min(Math.max(0, at - (Number.isNaN(date) ? now : date)), MAX_FRESH_MS);
  }
  return DEFAULT_FRESH_MS;
}

/** Why a document could not be had: the network, the HTTP status, or a body that is not JSON. */
export class FetchProblem extends Error {}

interface Entry {
  body: unknown;
  freshUntil: number;
  storedAt: number;
  etag: string | null;
  lastModified: string | null;
}

/**
 * A private HTTP cache of JSON documents (discovery documents, key sets) by URL: fresh copies
 * are served without a request, stale ones revalidated (`If-None-Match`, `If-Modified-Since`),
 * a stale copy used for up to a day while the server is unreachable, and concurrent requests for
 * one URL share one fetch. Redirects are not followed (an issuer's documents live at its own URLs).
 * `fetch`: the server's guarded one (lib/guarded-fetch.ts: the address guard, docs/security.md).
 * @example const cache = jsonCache({ clock, timeoutMs: 10_000 }); const doc = await cache.get(url);
 */
export function jsonCache(opts: { clock: Clock; timeoutMs: number; fetch?: GuardedFetch; onStale?: (url: string, err: Error) => void }) {
  const get = opts.fetch ?? fetch;
  const entries = new Map<string, Entry>();
  const inflight = new Map<string, Promise<unknown>>();

  async function fetchEntry(url: string, old: Entry | undefined): Promise<Entry> {
    const headers: Record<string, string> = { accept: 'application/json, application/jwk-set+json' };
    if (old?.etag) headers['if-none-match'] = old.etag;
    if (old?.lastModified) headers['if-modified-since'] = old.lastModified;
    let res: Response;
    try {
      res = await get(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs) });
    } catch (err) {
      // The address guard's refusal says no more than this (no port or TLS detail: not a scanner).
      if (err instanceof UnreachableError) throw new FetchProblem(`${url} could not be reached`);
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new FetchProblem(
        `${url} could not be reached (${cause === 'TimeoutError' ? `no answer within ${opts.timeoutMs / 1000} s` : cause})`,
      );
    }
    const now = opts.clock.now();
    const fresh = freshness(res.headers, now);
    if (res.status === 304 && old) {
      await res.body?.cancel();
      return { ...old, freshUntil: now + (fresh === 'no-store' ? 0 : fresh) };
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      const where =
        res.status >= 300 && res.status < 400 ? ` (a redirect to ${res.headers.get('location')?.slice(0, 200) ?? 'nowhere'})` : '';
      throw new FetchProblem(`${url} answered HTTP ${res.status}${where}`);
    }
    const text = await readLimited(res, url);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new FetchProblem(`${url} did not answer JSON`);
    }
    const entry: Entry = {
      body,
      freshUntil: now + (fresh === 'no-store' ? 0 : fresh),
      storedAt: now,
      etag: res.headers.get('etag'),
      lastModified: res.headers.get('last-modified'),
    };
    return fresh === 'no-store' ? { ...entry, etag: null, lastModified: null, freshUntil: -1 } : entry;
  }

  function remember(url: string, entry: Entry) {
    if (entry.freshUntil < 0) {
      entries.delete(url); // no-store
      return;
    }
    entries.delete(url);
    entries.set(url, entry);
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
  }

  return {
    /**
     * The document at `url`: the cached copy while fresh (unless `refresh`), else fetched. With
     * `allowStale` (sign-in, not the settings check) a copy up to a day past its freshness is used
     * when the fetch fails. Throws FetchProblem.
     */
    async get(url: string, options: { refresh?: boolean; allowStale?: boolean } = {}): Promise<unknown> {
      const old = entries.get(url);
      if (old && !options.refresh && opts.clock.now() < old.freshUntil) return old.body;
      const pending = inflight.get(url);
      if (pending) return pending;
      const p = (async () => {
        try {
          const entry = await fetchEntry(url, old);
          remember(url, entry);
          return entry.body;
        } catch (err) {
          if (options.allowStale && old && opts.clock.now() - old.freshUntil < STALE_IF_ERROR_MS) {
            opts.onStale?.(url, err as Error);
            return old.body;
          }
          throw err;
        } finally {
          inflight.delete(url);
        }
      })();
      inflight.set(url, p);
      return p;
    },
  };
}

export type JsonCache = ReturnType<typeof jsonCache>;

async function readLimited(res: Response, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_BYTES) {
    await res.body?.cancel();
    throw new FetchProblem(`${url} answered ${declared} bytes; a discovery document or key set is far smaller`);
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BYTES) throw new FetchProblem(`${url} answered more than ${MAX_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
