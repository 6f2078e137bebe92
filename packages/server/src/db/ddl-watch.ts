/**
 * How schema changes reach the server, and how new tables stay closed, with or without event
 * triggers (migration 0015).
 *
 * - `event_trigger` (a superuser, PGlite): 0001's triggers enable RLS on new tables and
 *   `NOTIFY plinth_schema`; nothing to do here.
 * - `poll` (a database owner that is not a superuser, as on hosted PostgreSQL): default
 *   privileges no longer give anon and authenticated the new tables; every POLL_MS the catalog's
 *   fingerprint is read, and when it changed, `plinth.secure_new_relations()` runs and
 *   `NOTIFY plinth_schema` tells every instance's schema cache to reload. A change by any
 *   client is served within about POLL_MS plus a reload.
 */
import type { Logger } from 'pino';
import type { Db, Queryable } from './types.js';

export type DdlMode = 'event_trigger' | 'poll';

/** Often enough that a change is served well within a second; the query reads a few catalog rows. */
export const POLL_MS = 250;

/**
 * Privileges change one instance at a time: two `ALTER DEFAULT PRIVILEGES` or two `GRANT`s on
 * one object at once fail with "tuple concurrently updated" (instances, or `--workers`, that
 * start together; polls that see the same new table).
 */
export const PRIVILEGES_LOCK = 726_354_005;
function oneAtATime<T>(db: Db, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [PRIVILEGES_LOCK]);
    return fn(tx);
  });
}

export interface DdlWatch {
  mode: DdlMode;
  /** Reads the catalog now (tests, and after the SQL runner); resolves when done. */
  check(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The database's mode: `event_trigger` when Plinth's trigger exists and is enabled.
 * @example await ddlMode(db) // 'poll' on a hosted PostgreSQL
 */
export async function ddlMode(db: Db): Promise<DdlMode> {
  const { rows } = await db.query<{ mode: DdlMode }>('select plinth.ddl_mode() as mode');
  return rows[0]?.mode === 'poll' ? 'poll' : 'event_trigger';
}

/**
 * Prepares the mode at start and, in `poll` mode, polls until `stop()`. Logs the mode once.
 * @example const watch = await watchDdl(db, log); … await watch.stop();
 */
export async function watchDdl(db: Db, log: Logger, intervalMs = POLL_MS): Promise<DdlWatch> {
  const mode = await ddlMode(db);
  if (mode === 'event_trigger') {
    // Remember today's relations: should the triggers go (a restore onto a hosted server),
    // only relations made after this start would be secured again.
    await db.query(
      `insert into plinth.known_relations (oid) select c.oid from pg_class c
       where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f') on conflict do nothing`,
    );
    return { mode, check: async () => undefined, stop: async () => undefined };
  }

  await oneAtATime(db, async (tx) => {
    // New relations closed to the API roles whoever makes them (0001 and 0003 opened them).
    await tx.query('alter default privileges in schema public revoke select, insert, update, delete on tables from anon, authenticated');
    await tx.query(
      'alter default privileges for role plinth_sql in schema public revoke select, insert, update, delete on tables from anon, authenticated',
    );
    // Tables made while no instance ran.
    await tx.query('select plinth.secure_new_relations()');
  });
  log.warn(
    { ddl: 'poll', intervalMs },
    `PostgreSQL: the connecting role may not create event triggers (only a superuser can), so Plinth uses its fallback: ` +
      `schema changes are found by reading the catalog every ${intervalMs} ms, and a new table in public is opened to ` +
      'anon and authenticated only once row-level security is on it (docs/security.md)',
  );

  let last = (await db.query<{ f: string }>('select plinth.ddl_fingerprint() as f')).rows[0]?.f ?? '';
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  let failing = false;

  const tick = async () => {
    try {
      const now = (await db.query<{ f: string }>('select plinth.ddl_fingerprint() as f')).rows[0]?.f ?? '';
      if (now !== last) {
        await oneAtATime(db, (tx) => tx.query('select plinth.secure_new_relations()'));
        // The fingerprint read before securing, never one read after: a table or function made
        // meanwhile would be taken as seen and never secured. What securing changed itself makes
        // one more run, which finds nothing new.
        last = now;
        await db.query(`select pg_notify('plinth_schema', 'poll')`);
      }
      if (failing) log.info('schema poll: the database answers again');
      failing = false;
    } catch (err) {
      // The database is down or restarting: /health says so; try again next time.
      if (!failing) log.warn({ err }, 'schema poll failed; retrying');
      failing = true;
    }
  };
  const check = () => {
    running ??= tick().finally(() => {
      running = null;
    });
    return running;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void check().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    mode,
    check,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
