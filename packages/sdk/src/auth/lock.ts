import type { LockFunction, SupportedStorage } from '../types.js';

/** How long a tab waits for another tab's lock before going ahead; the server's 10 s reuse grace covers the overlap. */
const ACQUIRE_TIMEOUT_MS = 10_000;

/**
 * A FIFO mutex per name inside this JS realm. Always used, so concurrent calls in one tab or one
 * Node process never interleave a read-modify-write of the session, whatever cross-tab lock is
 * available. Not reentrant: code holding the lock must not ask for it again.
 * @example const lock = processLock(); await lock('refresh', async () => doRefresh());
 */
export function processLock(): LockFunction {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const previous = tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    tails.set(name, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (tails.get(name) === tail) tails.delete(name);
    }
  };
}

interface LockManagerLike {
  request<T>(name: string, options: { signal?: AbortSignal }, fn: () => Promise<T>): Promise<T>;
}

/**
 * The Web Locks API (`navigator.locks`), shared by every tab and worker of the origin, or null
 * where it is missing (Node, old Safari). A lock that stays taken longer than 10 s (a tab frozen
 * mid-refresh) is given up on and `fn` runs anyway.
 * @example const lock = navigatorLock() ?? processLock();
 */
export function navigatorLock(): LockFunction | null {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  if (!locks || typeof locks.request !== 'function') return null;
  return async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), ACQUIRE_TIMEOUT_MS);
    let started = false;
    try {
      return await locks.request(name, { signal: controller.signal }, async () => {
        started = true;
        clearTimeout(timer);
        return fn();
      });
    } catch (error) {
      if (!started) return fn();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A best-effort cross-tab lock kept in storage, for browsers without `navigator.locks`: a lease
 * `{id, until}` is written, then read back after a pause so that of two tabs writing at once
 * only the last writer proceeds. Leases expire so a closed tab cannot hold the lock forever.
 * @example const lock = storageLock(localStorage);
 */
export function storageLock(storage: SupportedStorage, leaseMs = ACQUIRE_TIMEOUT_MS): LockFunction {
  return async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const key = `${name}.lock`;
    const id = Math.random().toString(36).slice(2);
    const deadline = Date.now() + leaseMs;
    let held = false;
    while (!held && Date.now() < deadline) {
      const lease = parseLease(await storage.getItem(key));
      if (!lease || lease.until < Date.now()) {
        await storage.setItem(key, JSON.stringify({ id, until: Date.now() + leaseMs }));
        await sleep(25);
        held = parseLease(await storage.getItem(key))?.id === id;
      }
      if (!held) await sleep(50 + Math.random() * 50);
    }
    try {
      return await fn();
    } finally {
      if (held && parseLease(await storage.getItem(key))?.id === id) await storage.removeItem(key);
    }
  };
}

function parseLease(raw: string | null): { id: string; until: number } | null {
  if (!raw) return null;
  try {
    const lease = JSON.parse(raw) as { id?: unknown; until?: unknown };
    return typeof lease.id === 'string' && typeof lease.until === 'number' ? { id: lease.id, until: lease.until } : null;
  } catch {
    return null;
  }
}

/**
 * Wraps a cross-tab lock with the in-process one so a single tab queues locally first and takes
 * the shared lock once per turn.
 * @example const lock = layeredLock(processLock(), navigatorLock());
 */
export function layeredLock(local: LockFunction, shared: LockFunction | null): LockFunction {
  if (!shared) return local;
  return <T>(name: string, fn: () => Promise<T>) => local(name, () => shared(name, fn));
}
