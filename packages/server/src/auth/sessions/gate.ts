import type { Db, Queryable } from '../../db/index.js';
import { type Clock, randomToken } from '../../lib/index.js';
import { checkSession, SESSIONS_CHANNEL, type SessionCheck } from './state.js';

const CACHE_MAX = 50_000;
const CHANGED_MAX = 10_000;
/** An instance says it is there this often; one not heard for three times as long is gone. */
const HELLO_EVERY_MS = 10_000;
/** How long a revocation's answer waits for the other instances to say they heard of it. */
const ACK_WAIT_MS = 2_000;

/**
 * Whether an access token's session is still open (state.ts says what open means). A JWT alone
 * stays valid until it expires; the gate is what makes "ends its sessions" true for the REST
 * API and storage too.
 *
 * Answers are cached per session for `ttlMs` (a few seconds), so the hot path costs a Map
 * lookup. A revocation evicts at once on the instance that made it and, through NOTIFY at
 * commit, on every other instance; an answer read while a notification about its user arrived
 * is not kept (it may predate the revocation). And the revocation's own answer waits until the
 * other instances have said they heard of it (`settled`), so a client that is told "signed out"
 * can send the token to any instance next and be refused: without that, the other instance
 * still served it from its cache on the next request (measured: 124 of 200 signed-out tokens
 * accepted with two instances on one PostgreSQL, docs/security.md).
 */
export interface SessionGate {
  /**
   * `fresh`: ask the database, not the cache (the auth endpoints, where credentials change).
   * @example if (!(await gate.isOpen(sid, sub))) throw new ApiError('invalid_token', …)
   */
  isOpen(sessionId: string, userId: string, options?: { fresh?: boolean }): Promise<boolean>;
  /**
   * The session's state, its level and its user's factors (state.ts `SessionCheck`), cached
   * like `isOpen`'s answer: a factor verified or removed evicts it on every instance.
   * @example const { open, aal, mfa } = await gate.check(sid, sub);
   */
  check(sessionId: string, userId: string, options?: { fresh?: boolean }): Promise<SessionCheck>;
  /** Forgets what is cached for a user's sessions (their state just changed); `*`: everyone's. */
  evictUser(userId: string): void;
  /**
   * In the transaction that changed sessions (after their NOTIFY): asks every instance to say
   * it heard of the change once it has committed. `settled()` then waits for them.
   */
  sync(tx: Queryable): Promise<void>;
  /**
   * Null when nothing waits; else resolves when every instance alive has acknowledged the
   * changes this one made (or after 2 s for one that does not answer): an answer about a
   * revocation waits for it before it leaves (app.ts).
   */
  settled(): Promise<void> | null;
  close(): Promise<void>;
}

interface Pending {
  /** The instances still to answer; null until this instance heard its own request (the commit). */
  waiting: Set<string> | null;
  done: () => void;
  promise: Promise<void>;
}

/**
 * @example const gate = await createSessionGate(db, clock, 5000); if (!(await gate.isOpen(sid, sub))) throw …
 */
export async function createSessionGate(db: Db, clock: Clock, ttlMs: number): Promise<SessionGate> {
  const me = randomToken(9);
  const cache = new Map<string, { state: SessionCheck; userId: string; at: number }>();
  // The generation at which each user's sessions last changed (and `all`, everyone's): a read
  // that started before a change is not cached. Without it, a lookup under way while the
  // revocation committed stored "open" for the whole TTL.
  let generation = 0;
  let all = 0;
  const changed = new Map<string, number>();
  /** Other instances on this database, by when they were last heard of (real time: liveness, not a token rule). */
  const peers = new Map<string, number>();
  const pending = new Map<string, Pending>();

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
  const say = (message: string) => db.query('select pg_notify($1, $2)', [SESSIONS_CHANNEL, message]).catch(() => undefined);
  const finish = (nonce: string) => {
    pending.get(nonce)?.done();
    pending.delete(nonce);
  };

  // Messages besides a user id: `?<nonce> <from>` asks for acknowledgements, `!<nonce> <from>`
  // acknowledges, `+<from>` says an instance is there, `-<from>` that it stopped.
  const onMessage = (payload: string) => {
    const kind = payload[0];
    if (kind !== '?' && kind !== '!' && kind !== '+' && kind !== '-') return evictUser(payload);
    const [nonce, from] = payload.slice(1).split(' ');
    if (kind === '+' || kind === '-') {
      if (nonce === me) return;
      if (kind === '+') {
        const known = peers.has(nonce);
        peers.set(nonce, Date.now());
        if (!known) void say(`+${me}`); // a newcomer learns of this instance at once
      } else peers.delete(nonce);
      return;
    }
    if (kind === '?') {
      if (from !== me) {
        peers.set(from, Date.now());
        void say(`!${nonce} ${me}`); // every notice before it in the same commit was heard and evicted
        return;
      }
      const p = pending.get(nonce);
      if (!p) return;
      const now = Date.now();
      for (const [id, seen] of peers) if (now - seen > 3 * HELLO_EVERY_MS) peers.delete(id);
      p.waiting = new Set(peers.keys());
      if (p.waiting.size === 0) finish(nonce);
      return;
    }
    const p = pending.get(nonce);
    if (!p?.waiting) return;
    p.waiting.delete(from);
    if (p.waiting.size === 0) finish(nonce);
  };

  const unlisten = await db.listen(SESSIONS_CHANNEL, onMessage);
  await say(`+${me}`);
  const hello = setInterval(() => void say(`+${me}`), HELLO_EVERY_MS);
  hello.unref();

  const check = async (sessionId: string, userId: string, options?: { fresh?: boolean }): Promise<SessionCheck> => {
    const now = clock.now();
    const hit = options?.fresh ? undefined : cache.get(sessionId);
    if (hit && hit.userId === userId && now - hit.at < ttlMs) return hit.state;
    let state: SessionCheck = { open: false, aal: 'aal1', mfa: false };
    // At most twice: a change noticed during the first read means it may predate the change.
    for (let attempt = 0; attempt < 2; attempt++) {
      const started = generation;
      state = await checkSession(db, sessionId, userId, now);
      if (changedSince(userId, started)) continue;
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(sessionId, { state, userId, at: now });
      return state;
    }
    return state;
  };

  return {
    check,
    async isOpen(sessionId, userId, options) {
      return (await check(sessionId, userId, options)).open;
    },
    evictUser,
    async sync(tx) {
      const nonce = randomToken(12);
      let done!: () => void;
      const promise = new Promise<void>((resolve) => {
        done = resolve;
      });
      // Rolled back (no notice ever comes) or an instance that does not answer: not for ever.
      const timer = setTimeout(() => finish(nonce), ACK_WAIT_MS);
      timer.unref();
      pending.set(nonce, {
        waiting: null,
        promise,
        done: () => {
          clearTimeout(timer);
          done();
        },
      });
      await tx.query('select pg_notify($1, $2)', [SESSIONS_CHANNEL, `?${nonce} ${me}`]);
    },
    settled() {
      if (pending.size === 0) return null;
      return Promise.all([...pending.values()].map((p) => p.promise)).then(() => undefined);
    },
    async close() {
      clearInterval(hello);
      await say(`-${me}`);
      for (const nonce of [...pending.keys()]) finish(nonce);
      await unlisten();
    },
  };
}
