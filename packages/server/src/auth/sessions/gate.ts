import type { Db } from '../../db/index.js';
import type { Clock } from '../../lib/index.js';
import { isSessionOpen, SESSIONS_CHANNEL } from './state.js';

const CACHE_MAX = 50_000;
const CHANGED_MAX = 10_000;

/**
 * Whether an access token's session is still open (state.ts says what open means). A JWT alone
 * stays valid until it expires; the gate is what makes "ends its sessions" true for the REST
 * API and storage too.
 *
 * Answers are cached per session for `ttlMs` (a few seconds), so the hot path costs a Map
 * lookup. A revocation evicts at once on the instance that made it and, through NOTIFY at
 * commit, on every other instance; the TTL only bounds a missed notification. An answer read
 * while a notification about its user arrived is not kept (it may predate the revocation).
 */
export interface SessionGate {
  /**
   * `fresh`: ask the database, not the cache (the auth endpoints, where credentials change).
   * @example if (!(await gate.isOpen(sid, sub))) throw new ApiError('invalid_token', …)
   */
  isOpen(sessionId: string, userId: string, options?: { fresh?: boolean }): Promise<boolean>;
  /** Forgets what is cached for a user's sessions (their state just changed); `*`: everyone's. */
  evictUser(userId: string): void;
  close(): Promise<void>;
}

/**
 * @example const gate = await createSessionGate(db, clock, 5000); if (!(await gate.isOpen(sid, sub))) throw …
 */
export async function createSessionGate(db: Db, clock: Clock, ttlMs: number): Promise<SessionGate> {
  const cache = new Map<string, { open: boolean; userId: string; at: number }>();
  // The generation at which each user's sessions last changed (and `all`, everyone's): a read
  // that started before a change is not cached. Without it, a lookup under way while the
  // revocation committed stored "open" for the whole TTL.
  let generation = 0;
  let all = 0;
  const changed = new Map<string, number>();
  const evictUser = (userId: string) => {
    generation++;
    if (userId === '*' || changed.size >= CHANGED_MAX) {
      all = generation;
      changed.clear();
      cache.clear();
      return;
    }
    changed.set(userId, generation);
    for (const [sid, entry] of cache) if (entry.userId === userId) cache.delete(sid);
  };
  const changedSince = (userId: string, since: number) => all > since || (changed.get(userId) ?? 0) > since;
  const unlisten = await db.listen(SESSIONS_CHANNEL, (userId) => evictUser(userId));
  return {
    async isOpen(sessionId, userId, options) {
      const now = clock.now();
      const hit = options?.fresh ? undefined : cache.get(sessionId);
      if (hit && hit.userId === userId && now - hit.at < ttlMs) return hit.open;
      let open = false;
      // At most twice: a change noticed during the first read means it may predate the change.
      for (let attempt = 0; attempt < 2; attempt++) {
        const started = generation;
        open = await isSessionOpen(db, sessionId, userId, now);
        if (changedSince(userId, started)) continue;
        if (cache.size >= CACHE_MAX) cache.clear();
        cache.set(sessionId, { open, userId, at: now });
        return open;
      }
      return open;
    },
    evictUser,
    close: () => unlisten(),
  };
}
