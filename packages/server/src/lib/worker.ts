/**
 * One coalescing worker loop for every background job (the outbox, the webhook sender and
 * fan-out, the change log's numbering and fetching, storage's garbage): never two runs at once,
 * a kick during a run asks for one more run after it (no kick is lost), an idle worker polls,
 * and `drain` / `close` mean the same thing everywhere.
 */

export interface WorkerOptions {
  /**
   * One unit of work. Returns true when there is more to do right away (a full batch), so the
   * loop runs again without waiting for the poll.
   */
  run(): Promise<unknown>;
  /** An idle worker runs this often (another instance may have queued work). null: only on kicks. */
  pollMs: number | null;
  /** At least this long between the starts of two runs (kicks in between are coalesced). */
  minGapMs?: number;
  /** A failed run: logged here; the loop carries on at its next poll or kick. */
  onError(err: unknown): void;
  /** The first run starts at once (default), or on the first kick / `start()`. */
  autoStart?: boolean;
  /** Tests: the clock the gap is measured on. */
  now?: () => number;
}

export interface Worker {
  /** Asks for a run soon; coalesced with a run under way (it runs once more after it). */
  kick(): void;
  /** Starts polling (when `autoStart: false`). */
  start(): void;
  /** Runs until nothing is left to do right now, then resolves (tests, a clean shutdown). */
  drain(): Promise<void>;
  /** Stops polling and kicks; resolves once the run under way has ended. */
  close(): Promise<void>;
}

/**
 * @example const w = openWorker({ run: () => sendBatch(), pollMs: 1000, onError: (err) => log.warn({ err }, 'outbox run failed') });
 *          w.kick(); await w.drain(); await w.close();
 */
export function openWorker(o: WorkerOptions): Worker {
  const now = o.now ?? Date.now;
  const gap = o.minGapMs ?? 0;
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;
  let started = o.autoStart !== false;
  let poll: NodeJS.Timeout | null = null;
  let later: NodeJS.Timeout | null = null;
  let lastStart = Number.NEGATIVE_INFINITY;
  let soon = false;

  const schedulePoll = () => {
    if (closed || !started || o.pollMs === null) return;
    if (poll) clearTimeout(poll);
    poll = setTimeout(() => void go(false), o.pollMs);
    poll.unref();
  };

  async function loop(): Promise<void> {
    do {
      again = false;
      lastStart = now();
      try {
        if ((await o.run()) === true) again = true;
      } catch (err) {
        o.onError(err);
        return; // retried at the next poll or kick, never in a tight loop
      }
    } while (again && !closed);
  }

  /** Runs now (or after the gap); `force` ignores the gap (drain). */
  function go(force: boolean): Promise<void> {
    if (closed) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    const wait = force ? 0 : lastStart + gap - now();
    if (wait > 0) {
      later ??= setTimeout(() => {
        later = null;
        void go(false);
      }, wait);
      later.unref();
      return Promise.resolve();
    }
    running = loop().finally(() => {
      running = null;
      schedulePoll();
    });
    return running;
  }

  if (started) setImmediate(() => void go(false));

  return {
    kick() {
      if (closed) return;
      if (running) again = true;
      else if (!soon) {
        // Kicks before the run starts share it.
        soon = true;
        setImmediate(() => {
          soon = false;
          void go(false);
        });
      }
    },
    start() {
      if (started || closed) return;
      started = true;
      void go(false);
    },
    async drain() {
      while (running) await running;
      await go(true);
      while (running) await running;
    },
    async close() {
      closed = true;
      if (poll) clearTimeout(poll);
      if (later) clearTimeout(later);
      while (running) await running;
    },
  };
}

/**
 * How long to wait before attempt `attempts + 1` after `attempts` failures: doubling from `min`,
 * at most `max`.
 * @example retryAfterMs(3, { min: 5_000, max: 600_000 }) // 20000
 */
export function retryAfterMs(attempts: number, bounds: { min: number; max: number }): number {
  return Math.min(bounds.min * 2 ** Math.min(Math.max(0, attempts - 1), 40), bounds.max);
}
