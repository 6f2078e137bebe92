import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../../lib/index.js';

/** A window's count and how long until it resets. */
export interface Count {
  count: number;
  resetMs: number;
}

/**
 * Fixed-window counters by key: the small abstraction behind the per-email and
 * per-recipient limits (per-IP request limits use @fastify/rate-limit).
 */
export interface Counter {
  peek(key: string): Promise<Count>;
  /** Adds one; the count returned includes this hit. */
  hit(key: string, windowSeconds: number): Promise<Count>;
  close(): Promise<void>;
}

/**
 * In-process counters on the injected clock (one instance, or tests that move time).
 * @example const c = createMemoryCounter(systemClock); await c.hit('k', 60) // { count: 1, resetMs: 60000 }
 */
export function createMemoryCounter(clock: Clock, maxKeys = 100_000): Counter {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const live = (key: string) => {
    const w = windows.get(key);
    if (w && w.resetAt <= clock.now()) {
      windows.delete(key);
      return undefined;
    }
    return w;
  };
  return {
    async peek(key) {
      const w = live(key);
      return w ? { count: w.count, resetMs: w.resetAt - clock.now() } : { count: 0, resetMs: 0 };
    },
    async hit(key, windowSeconds) {
      let w = live(key);
      if (!w) {
        // Bounded memory under a flood of distinct keys: drop expired, then oldest windows.
        if (windows.size >= maxKeys) {
          for (const k of windows.keys()) {
            if (windows.size < maxKeys * 0.9) break;
            windows.delete(k);
          }
        }
        w = { count: 0, resetAt: clock.now() + windowSeconds * 1000 };
        windows.set(key, w);
      }
      w.count++;
      return { count: w.count, resetMs: w.resetAt - clock.now() };
    },
    async close() {
      windows.clear();
    },
  };
}

// INCR and the first PEXPIRE in one step, so a crash between them cannot leave a key forever.
const HIT = `local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {c, redis.call('PTTL', KEYS[1])}`;

/**
 * Counters in Redis, shared by every instance of the project (`REDIS_URL`). Redis keeps the
 * time (key TTL), so the fake clock does not apply here. A command fails at once while Redis
 * is not connected, and within a second when it does not answer (no queue of commands waiting
 * for a reconnection: that made every failed sign-in take ~7 s); `createFallbackCounter` decides
 * what happens then.
 * @example const c = createRedisCounter('redis://localhost:6379', 'plinth:auth:'); await c.hit('k', 60)
 */
export function createRedisCounter(url: string, prefix: string): Counter & { redis: Redis } {
  // ioredis is loaded only when REDIS_URL is set: it is a start's and every test file's cost otherwise (issue 32).
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: 1000,
    connectTimeout: 1000,
    lazyConnect: false,
    // Reconnect soon after Redis is back (ioredis waits up to 2 s by default).
    retryStrategy: (times) => Math.min(times * 100, 500),
  });
  // Connection errors reach the caller through the failing command; without a listener
  // ioredis would also print each one as unhandled.
  redis.on('error', () => undefined);
  return {
    redis,
    async peek(key) {
      const [[, count], [, ttl]] = (await redis
        .multi()
        .get(prefix + key)
        .pttl(prefix + key)
        .exec()) as [[unknown, string | null], [unknown, number]];
      return { count: Number(count ?? 0), resetMs: Math.max(0, Number(ttl)) };
    },
    async hit(key, windowSeconds) {
      const [count, ttl] = (await redis.eval(HIT, 1, prefix + key, windowSeconds * 1000)) as [number, number];
      return { count: Number(count), resetMs: Math.max(0, Number(ttl)) };
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Redis counters that fall back to this instance's own counters while Redis cannot be used,
 * so a Redis outage never turns a request into a 5xx or a long wait: limits hold per instance
 * meanwhile (the same as without REDIS_URL). One warning when it starts, one line when Redis is
 * back and the counts are shared again. Counts made during the outage stay local.
 * @example const c = createFallbackCounter(createRedisCounter(url, 'p:'), createMemoryCounter(clock), log);
 */
export function createFallbackCounter(
  shared: Counter & { redis: Redis },
  local: Counter,
  log: Logger,
  where: string,
): Counter & { mode(): 'shared' | 'local' } {
  let mode: 'shared' | 'local' = 'shared';
  const toLocal = (reason: string) => {
    if (mode === 'local') return;
    mode = 'local';
    log.warn({ redis: where, reason }, `Redis at ${where} is unavailable (${reason}): rate limits count per instance until it is back`);
  };
  shared.redis.on('ready', () => {
    if (mode === 'shared') return;
    mode = 'shared';
    log.info({ redis: where }, `Redis at ${where} is back: rate limits are shared again`);
  });
  const use = async <T>(fn: (c: Counter) => Promise<T>): Promise<T> => {
    if (shared.redis.status !== 'ready') {
      toLocal(`not connected (${shared.redis.status})`);
      return fn(local);
    }
    try {
      return await fn(shared);
    } catch (err) {
      toLocal((err as Error).message);
      return fn(local);
    }
  };
  return {
    mode: () => mode,
    peek: (key) => use((c) => c.peek(key)),
    hit: (key, windowSeconds) => use((c) => c.hit(key, windowSeconds)),
    async close() {
      await Promise.all([shared.close(), local.close()]);
    },
  };
}

/** Resolves once the client is connected, or after `ms` (a start does not wait longer for Redis). */
export function redisReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/**
 * A store for @fastify/rate-limit over a Counter: with REDIS_URL the per-IP request limit
 * counts in the fallback counter too, so it is shared while Redis works and per instance while
 * it does not (the plugin's own Redis store would answer 500, or with `skipOnError` not limit at all).
 */
export function createRateLimitStore(counter: Counter, prefix: string): FastifyRateLimitStoreCtor {
  type Callback = (err: Error | null, res?: { current: number; ttl: number }) => void;
  return class CounterStore implements FastifyRateLimitStore {
    incr(key: string, cb: Callback, timeWindow: number) {
      counter.hit(prefix + key, timeWindow / 1000).then(
        (c) => cb(null, { current: c.count, ttl: c.resetMs }),
        (err: Error) => cb(err),
      );
    }
    read(key: string, cb: Callback) {
      counter.peek(prefix + key).then(
        (c) => cb(null, { current: c.count, ttl: c.resetMs }),
        (err: Error) => cb(err),
      );
    }
    child(options: { method?: string | string[]; url?: string }) {
      const Store = createRateLimitStore(counter, `${prefix}${String(options.method ?? '')}${options.url ?? ''}-`);
      return new Store({});
    }
  };
}
