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
 *
 * An instance does not poll: one timer wakes it when the earliest `next_at` (or a running
 * lease's end) comes, and at least every SCHEDULE_RECHECK_MS, so that a schedule another
 * instance wrote is seen (that instance itself runs it on time). A look is one query when
 * nothing is due; the due rows are claimed in one statement and the runs' results written
 * together. 100 schedules firing each minute were, with a look every second and a claim and a
 * result per run, about 320 statements a minute; they are now about 10. What the runs still cost
 * an idle server is mostly V8's garbage collection in each function's worker after its run
 * (docs/functions.md "Speed").
 */
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { type Clock, iso, nextRun, openWorker, parseCron, runsBetween, type Worker } from '../lib/index.js';

/** How long a run may go before it is reported lost: the longest `timeout_ms` a function may set (15 min) and a minute. */
export const SCHEDULE_LEASE_MS = 16 * 60_000;
/** The longest an instance waits between two looks for due runs (when no run is due earlier). */
export const SCHEDULE_RECHECK_MS = 60_000;
/** Due rows taken per look. */
const BATCH = 100;
/** Results of runs that end within this long of each other are written in one statement. */
const FINISH_BATCH_MS = 100;
/** Writes of a run's result before it is left to its lease. */
const FINISH_TRIES = 5;

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
  /** The longest wait between two looks (default SCHEDULE_RECHECK_MS); null: only on `tick()` (tests). */
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
  const maxWait = deps.pollMs === undefined ? SCHEDULE_RECHECK_MS : deps.pollMs;
  let closed = false;
  const running = new Set<Promise<void>>();
  let worker: Worker | null = null;
  let timer: NodeJS.Timeout | null = null;
  let finished: Array<{ name: string; startedAt: number; result: RunResult; done: () => void; tries: number }> = [];
  let finishTimer: NodeJS.Timeout | null = null;

  /** Writes the results of the runs that ended (one statement for all of them). */
  async function writeFinished(): Promise<void> {
    finishTimer = null;
    const batch = finished;
    finished = [];
    if (!batch.length) return;
    try {
      await db.query(
        `update plinth.function_schedules s set last_status = v.status, last_detail = v.detail, last_finished_at = ${ts('v.finished')}, lease_until = null
           from unnest($1::text[], $2::float8[], $3::text[], $4::text[], $5::float8[]) as v(function, started, status, detail, finished)
          where s.function = v.function and ${ms('s.last_started_at')} = v.started and s.last_status = 'running'`,
        [
          batch.map((f) => f.name),
          batch.map((f) => f.startedAt),
          batch.map((f) => f.result.status),
          batch.map((f) => f.result.detail),
          batch.map(() => clock.now()),
        ],
      );
    } catch (err) {
      // Tried again a second later (a database that did not answer in time): else the runs would
      // stay `running` until their lease passed, and skip their next occurrences meanwhile.
      const again = batch.filter((f) => f.tries < FINISH_TRIES);
      log.warn(
        { err },
        `schedules ${batch.map((f) => f.name).join(', ')}: their results were not written${again.length ? '; trying again' : ''}`,
      );
      for (const f of again) {
        f.tries++;
        finished.push(f);
      }
      if (again.length && finishTimer === null) finishTimer = setTimeout(() => void writeFinished(), 1000);
      for (const f of batch) if (!again.includes(f)) f.done();
      return;
    }
    for (const f of batch) f.done();
  }

  /** Queues one run's result; resolves once it is written. */
  function finish(name: string, startedAt: number, result: RunResult): Promise<void> {
    return new Promise((done) => {
      finished.push({ name, startedAt, result, done, tries: 1 });
      if (finishTimer === null) finishTimer = setTimeout(() => void writeFinished(), FINISH_BATCH_MS);
    });
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
      await finish(name, startedAt, result);
    })();
    running.add(p);
    void p.finally(() => running.delete(p));
  }

  /** The next look: when the earliest occurrence or running lease is due, at the latest maxWait from now. */
  function arm(at: number | null): void {
    if (closed || maxWait === null) return;
    if (timer) clearTimeout(timer);
    // A few ms late rather than early: a timer may fire a little before the clock reaches its time.
    const wait = Math.max(0, Math.min(at === null ? maxWait : at - clock.now() + 5, maxWait));
    timer = setTimeout(() => {
      timer = null;
      worker?.kick();
    }, wait);
    timer.unref();
  }

  /** One look: true when due rows are left for another look right away. */
  async function look(): Promise<boolean> {
    const now = clock.now();
    const {
      rows: [summary],
    } = await db.query<{ next: number | null; lease: number | null; due: number }>(
      `select ${ms('min(next_at)')} as next, ${ms("min(lease_until) filter (where last_status = 'running')")} as lease,
              count(*) filter (where next_at <= ${ts('$1')})::int as due
         from plinth.function_schedules`,
      [now],
    );
    const lease = summary?.lease === null || summary?.lease === undefined ? null : Number(summary.lease);
    if (lease !== null && lease < now) {
      const { rows: lost } = await db.query<{ function: string }>(
        `update plinth.function_schedules set last_status = 'lost', lease_until = null,
                last_detail = 'the instance running it stopped before the run ended'
          where last_status = 'running' and lease_until < ${ts('$1')} returning function`,
        [now],
      );
      for (const r of lost)
        log.warn(`schedule ${r.function}: its run had no end within ${SCHEDULE_LEASE_MS / 60_000} minutes: lost (not run again)`);
    }
    if (!summary || Number(summary.due) === 0) {
      const next = summary?.next === null || summary?.next === undefined ? null : Number(summary.next);
      const wake = [next, lease !== null && lease >= now ? lease : null].filter((t): t is number => t !== null);
      arm(wake.length ? Math.min(...wake) : null);
      return false;
    }
    const { rows } = await db.query<{ function: string; cron: string; due: number; busy: boolean }>(
      `select function, cron, ${ms('next_at')} as due, last_status = 'running' as busy
         from plinth.function_schedules where next_at <= ${ts('$1')} order by next_at limit ${BATCH}`,
      [now],
    );
    const plan = rows.map((row) => {
      const due = Number(row.due);
      const cron = parseCron(row.cron);
      // Occurrences after the due one that have passed too: reported, not made up.
      return { name: row.function, due, next: nextRun(cron, now), passed: runsBetween(cron, due, now), busy: row.busy };
    });
    const busy = plan.filter((p) => p.busy);
    if (busy.length) {
      const { rows: moved } = await db.query<{ function: string }>(
        `update plinth.function_schedules s set next_at = ${ts('v.next')}, missed = s.missed + 1 + v.passed
           from unnest($1::text[], $2::float8[], $3::float8[], $4::int[]) as v(function, due, next, passed)
          where s.function = v.function and ${ms('s.next_at')} = v.due returning s.function`,
        [busy.map((p) => p.name), busy.map((p) => p.due), busy.map((p) => p.next ?? null), busy.map((p) => p.passed)],
      );
      for (const r of moved)
        log.warn(
          `schedule ${r.function}: the run of ${iso(busy.find((p) => p.name === r.function)?.due ?? now)} skipped, the previous run is still going`,
        );
    }
    const free = plan.filter((p) => !p.busy);
    let took = 0;
    if (free.length) {
      // Rows another instance is claiming at this moment are skipped (it runs them): no two
      // instances wait on each other's rows, and each occurrence is claimed once.
      const { rows: claimed } = await db.query<{ function: string }>(
        `with v as (select * from unnest($1::text[], $2::float8[], $3::float8[], $4::int[]) as v(function, due, next, passed)),
              mine as (
                select s.function from plinth.function_schedules s join v on v.function = s.function
                 where ${ms('s.next_at')} = v.due and s.last_status is distinct from 'running'
                 order by s.function for update of s skip locked)
         update plinth.function_schedules s
            set next_at = ${ts('v.next')}, missed = s.missed + v.passed, runs = s.runs + 1, last_started_at = ${ts('$5')},
                last_status = 'running', last_detail = null, last_finished_at = null, lease_until = ${ts('$6')}
           from v where s.function = v.function and s.function in (select function from mine) returning s.function`,
        [
          free.map((p) => p.name),
          free.map((p) => p.due),
          free.map((p) => p.next ?? null),
          free.map((p) => p.passed),
          now,
          now + SCHEDULE_LEASE_MS,
        ],
      );
      for (const r of claimed) {
        const p = free.find((x) => x.name === r.function);
        if (!p) continue;
        if (p.passed > 0)
          log.warn(`schedule ${p.name}: ${p.passed}${p.passed >= 1000 ? '+' : ''} runs missed while no instance ran it; running once now`);
        launch(p.name, p.due, now);
        took++;
      }
    }
    // Another look at once: for rows left beyond the batch, and to set the timer to the next
    // occurrence. When another instance was claiming every due row, a second later (by then
    // it has moved them on).
    if (took === 0 && rows.length < BATCH) {
      arm(now + 1000);
      return false;
    }
    return true;
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
    if (closed) return;
    if (worker) {
      // The earliest occurrence may have changed: the timer is set again by a look.
      if (maxWait !== null) worker.kick();
      return;
    }
    if (!names.length) return;
    worker = openWorker({
      run: look,
      pollMs: null,
      autoStart: maxWait !== null,
      onError: (err) => {
        log.warn({ err }, 'function schedules: looking for due runs failed; trying again');
        arm(clock.now() + 1000);
      },
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
      if (timer) clearTimeout(timer);
      await worker?.close();
    },
    async settled() {
      await Promise.all([...running]);
    },
  };
}
