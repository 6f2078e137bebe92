/**
 * Function schedules (docs/functions.md, "Schedules"): `"functions": {"<name>": {"schedule":
 * "*\/5 * * * *"}}` in plinth.json runs the function on that cron expression (UTC), as the
 * service, with a POST whose JSON body is `{"schedule": "<name>", "scheduled_at": "<ISO time>"}`.
 *
 * Once per occurrence across instances: every instance looks for due rows of
 * `plinth.function_schedules` (migration 0152) and the one whose conditional update moves the
 * row's `next_at` on runs it. Missed occurrences (no instance was up, or the previous run was
 * still going) are counted and logged, never made up: one run, then the next occurrence after
 * now. A run holds a lease; a run whose instance died is reported `lost` when the lease passes,
 * not run again (it may have done part of its work).
 */
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { type Clock, iso, nextRun, openWorker, parseCron, runsBetween, type Worker } from '../lib/index.js';

/** How long a run may go before it is reported lost: the longest `timeout_ms` a function may set (15 min) and a minute. */
export const SCHEDULE_LEASE_MS = 16 * 60_000;
/** How often an instance looks for due runs. */
export const SCHEDULE_POLL_MS = 1000;
/** Due rows taken per look. */
const BATCH = 100;

export interface ScheduleState {
  function: string;
  cron: string;
  next_at: string | null;
  last_started_at: string | null;
  last_finished_at: string | null;
  last_status: 'running' | 'ok' | 'failed' | 'lost' | null;
  last_detail: string | null;
  runs: number;
  missed: number;
}

/** What one run came to: `ok` for an answer under 400, else `failed` with the status or the error code. */
export type RunResult = { status: 'ok' | 'failed'; detail: string | null };

export interface SchedulerDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /** Function name → cron expression (checked when the project file was read, or when a version was deployed with it). */
  declared: Record<string, string>;
  /** Runs one occurrence. */
  run(name: string, scheduledAt: number): Promise<RunResult>;
  /** Tests: how often to look (default SCHEDULE_POLL_MS); null: only on `tick()`. */
  pollMs?: number | null;
}

export interface Scheduler {
  /** Writes the declared schedules (a changed expression starts from now; undeclared ones go), then starts looking. */
  start(): Promise<void>;
  /**
   * Writes these schedules instead (after a deploy, rollback or delete changed the live
   * versions' schedules): as `start` does, and starts looking if this instance was not.
   */
  sync(declared: Record<string, string>): Promise<void>;
  /** One look for due runs now (tests); the runs it starts go on (`settled()`). */
  tick(): Promise<void>;
  list(): Promise<ScheduleState[]>;
  /** Stops looking (runs under way go on: `settled()` waits for them, after their workers are closed). */
  close(): Promise<void>;
  /** Resolves once every run started has ended and its result is written. */
  settled(): Promise<void>;
}

const ms = (sql: string) => `(extract(epoch from ${sql}) * 1000)::float8`;
const ts = (param: string) => `to_timestamp(${param}::float8 / 1000)`;

/**
 * @example const s = createScheduler({ db, clock, log, declared: { cleanup: '0 3 * * *' }, run }); await s.start();
 */
export function createScheduler(deps: SchedulerDeps): Scheduler {
  const { db, clock, log } = deps;
  let closed = false;
  const running = new Set<Promise<void>>();
  let worker: Worker | null = null;

  async function finish(name: string, startedAt: number, result: RunResult): Promise<void> {
    await db.query(
      `update plinth.function_schedules set last_status = $3, last_detail = $4, last_finished_at = ${ts('$5')}, lease_until = null
        where function = $1 and ${ms('last_started_at')} = $2::float8 and last_status = 'running'`,
      [name, startedAt, result.status, result.detail, clock.now()],
    );
  }

  function launch(name: string, scheduledAt: number, startedAt: number): void {
    const p = (async () => {
      let result: RunResult;
      try {
        result = await deps.run(name, scheduledAt);
      } catch (err) {
        result = { status: 'failed', detail: (err as Error).message ?? String(err) };
      }
      const line = `schedule ${name} (${iso(scheduledAt)}): ${result.status}${result.detail ? ` (${result.detail})` : ''}`;
      if (result.status === 'ok') log.info(line);
      else log.warn(line);
      await finish(name, startedAt, result).catch((err) => log.warn({ err }, `schedule ${name}: its result was not written`));
    })();
    running.add(p);
    void p.finally(() => running.delete(p));
  }

  async function look(): Promise<void> {
    const now = clock.now();
    const { rows: lost } = await db.query<{ function: string }>(
      `update plinth.function_schedules set last_status = 'lost', lease_until = null,
              last_detail = 'the instance running it stopped before the run ended'
        where last_status = 'running' and lease_until < ${ts('$1')} returning function`,
      [now],
    );
    for (const r of lost)
      log.warn(`schedule ${r.function}: its run had no end within ${SCHEDULE_LEASE_MS / 60_000} minutes: lost (not run again)`);
    const { rows } = await db.query<{ function: string; cron: string; due: number; busy: boolean }>(
      `select function, cron, ${ms('next_at')} as due, last_status = 'running' as busy
         from plinth.function_schedules where next_at <= ${ts('$1')} order by next_at limit ${BATCH}`,
      [now],
    );
    for (const row of rows) {
      const due = Number(row.due);
      const cron = parseCron(row.cron);
      const next = nextRun(cron, now);
      // Occurrences after the due one that have passed too: reported, not made up.
      const passed = runsBetween(cron, due, now);
      if (row.busy) {
        const { rows: moved } = await db.query(
          `update plinth.function_schedules set next_at = ${ts('$3')}, missed = missed + 1 + $4::int
            where function = $1 and ${ms('next_at')} = $2::float8 returning 1`,
          [row.function, due, next, passed],
        );
        if (moved[0]) log.warn(`schedule ${row.function}: the run of ${iso(due)} skipped, the previous run is still going`);
        continue;
      }
      const { rows: claimed } = await db.query(
        `update plinth.function_schedules
            set next_at = ${ts('$3')}, missed = missed + $4::int, runs = runs + 1, last_started_at = ${ts('$5')},
                last_status = 'running', last_detail = null, last_finished_at = null, lease_until = ${ts('$6')}
          where function = $1 and ${ms('next_at')} = $2::float8 and last_status is distinct from 'running' returning 1`,
        [row.function, due, next, passed, now, now + SCHEDULE_LEASE_MS],
      );
      if (!claimed[0]) continue; // another instance took it
      if (passed > 0)
        log.warn(`schedule ${row.function}: ${passed}${passed >= 1000 ? '+' : ''} runs missed while no instance ran it; running once now`);
      launch(row.function, due, now);
    }
  }

  async function sync(declared: Record<string, string>): Promise<void> {
    const names = Object.keys(declared);
    const now = clock.now();
    for (const name of names) {
      const cron = declared[name];
      const next = nextRun(parseCron(cron), now);
      // A new schedule, or a changed expression, starts from now; an unchanged one keeps its next run.
      await db.query(
        `insert into plinth.function_schedules (function, cron, next_at) values ($1, $2, ${ts('$3')})
         on conflict (function) do update set cron = excluded.cron, next_at = excluded.next_at
          where function_schedules.cron is distinct from excluded.cron`,
        [name, cron, next],
      );
    }
    await db.query('delete from plinth.function_schedules where function <> all($1::text[])', [names]);
    if (!names.length || worker || closed) return;
    worker = openWorker({
      run: look,
      pollMs: deps.pollMs === undefined ? SCHEDULE_POLL_MS : deps.pollMs,
      autoStart: deps.pollMs !== null,
      onError: (err) => log.warn({ err }, 'function schedules: looking for due runs failed; trying again'),
    });
  }

  return {
    start: () => sync(deps.declared),
    sync,
    async tick() {
      if (worker) {
        worker.kick();
        await worker.drain();
      }
    },
    async list() {
      const { rows } = await db.query<ScheduleState & { runs: string; missed: string }>(
        `select function, cron, next_at, last_started_at, last_finished_at, last_status, last_detail, runs::text as runs, missed::text as missed
           from plinth.function_schedules order by function`,
      );
      const at = (v: unknown) => (v === null || v === undefined ? null : iso(new Date(v as string)));
      return rows.map((r) => ({
        ...r,
        next_at: at(r.next_at),
        last_started_at: at(r.last_started_at),
        last_finished_at: at(r.last_finished_at),
        runs: Number(r.runs),
        missed: Number(r.missed),
      }));
    },
    async close() {
      closed = true;
      await worker?.close();
    },
    async settled() {
      await Promise.all([...running]);
    },
  };
}
