/**
 * `plinth start --workers N` (WORKERS): N processes serving one port, each a whole Plinth (its
 * own pool, schema cache, outbox worker), as N instances behind a balancer would be. node:cluster
 * rather than `reusePort`: the latter needs Node 22.12 and Linux, and the cluster's primary hands
 * each new connection to the next worker in turn (round robin), which spreads keep-alive clients
 * evenly where the kernel's choice among listeners on one port may not.
 *
 * The primary opens no database and serves nothing: it starts the workers, prints the banner
 * the first one sends once all listen, replaces a worker that dies (and logs it), and on
 * SIGTERM or SIGINT stops them all gracefully before exiting.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** What a worker tells the primary. */
export type WorkerMessage = { type: 'listening'; banner: string } | { type: 'failed'; message: string; code: number };

/** True in a process the primary started. */
export const isWorker = () => cluster.isWorker;

/** Sends a message to the primary (a worker only). */
export function tellPrimary(message: WorkerMessage): void {
  process.send?.(message);
}

/** A worker that dies this soon after starting counts towards the crash-loop limit. */
const EARLY_DEATH_MS = 10_000;
const MAX_EARLY_DEATHS = 5;
const STOP_GRACE_MS = 20_000;

/**
 * Runs the primary until every worker has stopped; resolves with the exit code.
 * `fail` prints one line and exits (a worker that could not start: its own one line).
 * @example process.exitCode = await runPrimary(4, log, (line) => fail(line));
 */
export function runPrimary(count: number, log: Logger, fail: (line: string, code: number) => never): Promise<number> {
  return new Promise<number>((resolve) => {
    const started = new Map<number, number>();
    const listening = new Set<number>();
    let banner: string | null = null;
    let announced = false;
    let stopping = false;
    /** When workers died soon after starting: more than MAX_EARLY_DEATHS in a minute is a crash loop. */
    let earlyDeaths: number[] = [];

    const fork = () => {
      const worker = cluster.fork();
      started.set(worker.id, Date.now());
      worker.on('message', (m: WorkerMessage) => onMessage(worker, m));
    };

    const onMessage = (worker: Worker, m: WorkerMessage) => {
      if (m?.type === 'listening') {
        listening.add(worker.id);
        banner ??= m.banner;
        if (!announced && listening.size >= count) {
          announced = true;
          const pids = Object.values(cluster.workers ?? {}).map((w) => w?.process.pid);
          process.stdout.write(banner.replace(/\n\n {2}REST:/, `\n  Workers:     ${count} processes (pids ${pids.join(', ')})\n\n  REST:`));
          log.info({ workers: count }, 'listening');
        } else if (announced) {
          log.info({ pid: worker.process.pid }, 'worker replaced: the new one is listening');
        }
      } else if (m?.type === 'failed' && !announced && !stopping) {
        // The first start failed (configuration, database, port): the same one line as
        // without workers, once, and the others stop.
        stopAll();
        fail(m.message, m.code);
      }
    };

    cluster.on('exit', (worker, code, signal) => {
      listening.delete(worker.id);
      const lived = Date.now() - (started.get(worker.id) ?? 0);
      started.delete(worker.id);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
        return;
      }
      log.error(
        { pid: worker.process.pid, code, signal },
        `worker ${worker.process.pid} died (${signal ?? `exit ${code}`}); starting another`,
      );
      if (lived < EARLY_DEATH_MS) {
        const now = Date.now();
        earlyDeaths = [...earlyDeaths.filter((t) => now - t < 60_000), now];
        if (earlyDeaths.length > MAX_EARLY_DEATHS) {
          stopAll();
          fail(
            `workers keep dying within ${EARLY_DEATH_MS / 1000} s of starting (${earlyDeaths.length} in a minute); the log above says why`,
            1,
          );
        }
      }
      fork();
    });

    const stopAll = () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      const force = setTimeout(() => {
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      }, STOP_GRACE_MS);
      force.unref();
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
    };

    const onSignal = (signal: string) => {
      if (stopping) return;
      log.info({ signal }, 'shutting down the workers');
      stopAll();
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));

    for (let i = 0; i < count; i++) fork();
  });
}
