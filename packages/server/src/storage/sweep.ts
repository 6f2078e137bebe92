/**
 * Deleting bytes no row points to. Two sources:
 * - `storage.garbage`: keys the trigger of migration 0020 wrote in the same transaction that
 *   deleted or replaced their row. `drain()` runs right after such a commit (and with every
 *   sweep) and deletes them from the backend; a crash in between leaves them queued.
 * - orphans of crashes: an upload whose bytes were renamed into place but whose row was never
 *   committed, temporary files and unfinished multipart uploads. `sweep()` lists the backend
 *   and deletes keys older than the grace period that no row names. The grace period covers the
 *   moment between an upload's rename and its commit, so bytes about to be committed stay.
 * One instance sweeps per period (a conditional update of `storage.sweeps`); draining is safe
 * on several at once (`FOR UPDATE SKIP LOCKED`).
 */
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { type Clock, openWorker } from '../lib/index.js';
import type { StorageBackend } from './backends/types.js';

export interface SweepOptions {
  /** How often an instance tries to sweep (ms). */
  intervalMs: number;
  /** Bytes younger than this are never orphans (ms). */
  graceMs: number;
  /** Temporary files and unfinished multipart uploads older than this are abandoned (ms). */
  incompleteMs: number;
}

export const SWEEP_DEFAULTS: SweepOptions = { intervalMs: 10 * 60_000, graceMs: 60 * 60_000, incompleteMs: 24 * 60 * 60_000 };

const BATCH = 500;
/** The upload a key holds the bytes of: its own, or the one a stored transform was made from (`.t…`). */
const UUID_OF_KEY = /\/([0-9a-f-]{36})(?:\.t[0-9a-f]{16})?$/;

export interface SweepReport {
  garbage: number;
  orphans: number;
  incomplete: number;
}

/**
 * @example const sweeper = createSweeper({ db, backend, clock, log }); sweeper.start(); … await sweeper.sweep();
 */
export function createSweeper(deps: { db: Db; backend: StorageBackend; clock: Clock; log: Logger; options?: Partial<SweepOptions> }) {
  const { db, backend, log } = deps;
  const options = { ...SWEEP_DEFAULTS, ...deps.options };
  const timers: NodeJS.Timeout[] = [];
  let closed = false;
  let sweeping: Promise<unknown> | null = null;
  /** Backups under way: while one copies the files, no bytes are deleted (the garbage stays queued). */
  let holds = 0;

  async function drainOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      if (holds) return total;
      const { rows } = await db.query<{ key: string }>(
        `delete from storage.garbage where key in (select key from storage.garbage order by at limit ${BATCH} for update skip locked) returning key`,
      );
      if (rows.length === 0) return total;
      // The stored transforms of those uploads go with them (image-cache.ts).
      const versions = rows.map((r) => UUID_OF_KEY.exec(r.key)?.[1]).filter((v): v is string => v !== undefined);
      const variants = versions.length
        ? await db.query<{ key: string }>(
            'delete from storage.variants where version = any(select x::uuid from jsonb_array_elements_text($1::jsonb) x) returning key',
            [JSON.stringify(versions)],
          )
        : { rows: [] };
      // Deleted from the queue first: should the backend fail now, the keys are orphans the sweep finds.
      await backend.remove([...rows.map((r) => r.key), ...variants.rows.map((r) => r.key)]);
      total += rows.length;
    }
  }

  /** Files deleted by the garbage worker so far (what one drain deleted is the difference). */
  let deleted = 0;
  const garbage = openWorker({
    pollMs: null,
    async run() {
      deleted += await drainOnce();
    },
    onError: (err) => log.warn({ err }, 'storage: deleting replaced files failed; the sweep retries'),
  });

  /** Deletes the queued garbage; concurrent calls share one run (and ask for one more after it). */
  async function drain(): Promise<number> {
    const before = deleted;
    await garbage.drain();
    return deleted - before;
  }

  async function orphans(before: number): Promise<number> {
    let n = 0;
    let batch: string[] = [];
    const flush = async () => {
      const versions = batch.map((k) => UUID_OF_KEY.exec(k)?.[1] ?? '');
      const { rows } = await db.query<{ v: string }>(
        'select version::text as v from storage.objects where version = any(select x::uuid from jsonb_array_elements_text($1::jsonb) x)',
        [JSON.stringify(versions)],
      );
      const live = new Set(rows.map((r) => r.v));
      const dead = batch.filter((k) => !live.has(UUID_OF_KEY.exec(k)?.[1] ?? ''));
      if (dead.length) await backend.remove(dead);
      n += dead.length;
      batch = [];
    };
    for await (const { key, modified } of backend.list()) {
      if (modified >= before) continue;
      batch.push(key);
      if (batch.length >= BATCH) await flush();
    }
    if (batch.length) await flush();
    return n;
  }

  const sweeper = {
    drain,
    /**
     * One full sweep, when no other instance swept within the interval (or `force`): garbage,
     * orphans, abandoned uploads. Returns what it deleted, or null when it was not its turn.
     */
    async sweep(force = false): Promise<SweepReport | null> {
      if (holds) return null;
      const now = deps.clock.now();
      const turn = await db.query(
        `update storage.sweeps set last_at = to_timestamp($1::float8 / 1000) where id = 1 and ($2 or last_at <= to_timestamp(($1::float8 - $3::float8) / 1000)) returning 1`,
        [now, force, options.intervalMs],
      );
      if (turn.rows.length === 0) return null;
      const garbage = await drain();
      const orphaned = await orphans(now - options.graceMs);
      const incomplete = await backend.cleanIncomplete(now - options.incompleteMs);
      if (orphaned || incomplete) log.info({ garbage, orphans: orphaned, incomplete }, 'storage: swept leftovers');
      return { garbage, orphans: orphaned, incomplete };
    },
    /** Drains and sweeps every interval until `close()`; failures are logged and retried next time. */
    start() {
      const tick = () => {
        if (closed) return;
        if (sweeping) return;
        sweeping = sweeper
          .sweep()
          .catch((err) => log.warn({ err }, 'storage: the sweep failed; it runs again later'))
          .finally(() => {
            sweeping = null;
          });
      };
      timers.push(setInterval(tick, options.intervalMs), setTimeout(tick, 5000));
      for (const t of timers) t.unref();
    },
    /**
     * Stops deleting bytes until the returned function is called, once the deletions under way
     * have ended: a backup copies the database first and the files after, and every file a row
     * of that copy names must still be there. The garbage queued meanwhile is deleted after.
     * @example const release = await sweeper.hold(); try { … } finally { release(); }
     */
    async hold(): Promise<() => void> {
      holds++;
      await garbage.drain();
      await sweeping;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds--;
        if (!holds) sweeper.kick();
      };
    },
    /** Right after a commit that left garbage; never throws (the sweep retries). */
    kick: garbage.kick,
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      await sweeping;
      await garbage.close();
    },
  };
  return sweeper;
}

export type Sweeper = ReturnType<typeof createSweeper>;
