import { Redis } from 'ioredis';
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
 * @example const c = memoryCounter(systemClock); await c.hit('k', 60) // { count: 1, resetMs: 60000 }
 */
export function memoryCounter(clock: Clock, maxKeys = 100_000): Counter {
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
 * time (key TTL), so the fake clock does not apply here.
 * @example const c = redisCounter('redis://localhost:6379', 'plinth:auth:'); await c.hit('k', 60)
 */
export function redisCounter(url: string, prefix: string): Counter & { redis: Redis } {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
  // Connection errors reach the caller through the failing command (a 500, not a silent
  // pass); without a listener ioredis would also print each one as unhandled.
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
