import type { Db } from '../../db/index.js';
import type { Clock } from '../../lib/index.js';
import { iso } from '../../lib/index.js';

/** NOTIFY channel on which a revocation (or a ban) names the user whose sessions changed. */
export const SESSIONS_CHANNEL = 'plinth_sessions';
const CACHE_MAX = 50_000;

/**
 * Whether an access token's session is still open: not signed out, not revoked by a proof or
 * a password change, its user not banned. A JWT alone stays valid until it expires; the gate
 * is what makes "ends its sessions" true for the REST API and storage too.
 *
 * Answers are cached per session for `ttlMs` (a few seconds), so the hot path costs a Map
 * lookup. A revocation evicts at once on the instance that made it and, through NOTIFY at
 * commit, on every other instance; the TTL only bounds a missed notification.
 */
export interface SessionGate {
  isOpen(sessionId: string, userId: string): Promise<boolean>;
  /** Forgets what is cached for a user's sessions (their state just changed). */
  evictUser(userId: string): void;
  close(): Promise<void>;
}

/**
 * @example const gate = await createSessionGate(db, clock, 5000); if (!(await gate.isOpen(sid, sub))) throw …
 */
export async function createSessionGate(db: Db, clock: Clock, ttlMs: number): Promise<SessionGate> {
  const cache = new Map<string, { open: boolean; userId: string; at: number }>();
  const evictUser = (userId: string) => {
    for (const [sid, entry] of cache) if (entry.userId === userId) cache.delete(sid);
  };
  const unlisten = await db.listen(SESSIONS_CHANNEL, (userId) => evictUser(userId));
  return {
    async isOpen(sessionId, userId) {
      const now = clock.now();
      const hit = cache.get(sessionId);
      if (hit && hit.userId === userId && now - hit.at < ttlMs) return hit.open;
      const { rows } = await db.query<{ open: boolean }>(
        `select s.revoked_at is null and (u.banned_until is null or u.banned_until <= $3::timestamptz) as open
         from auth.sessions s join auth.users u on u.id = s.user_id where s.id = $1::uuid and s.user_id = $2::uuid`,
        [sessionId, userId, iso(now)],
      );
      const open = rows[0]?.open === true;
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(sessionId, { open, userId, at: now });
      return open;
    },
    evictUser,
    close: () => unlisten(),
  };
}
