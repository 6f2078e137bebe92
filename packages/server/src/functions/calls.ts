/**
 * A function's recent calls (`plinth functions logs`, the console), in `plinth.function_calls`
 * (migration 0176): every instance writes its calls there, so each lists the calls of all and a
 * restart keeps them. A call is not written on its way: the calls of an instance are written
 * together at most FLUSH_MS later (one insert), and each write keeps only the last CALLS_KEPT of
 * the functions it wrote to. So a function called more than CALLS_KEPT times within FLUSH_MS has
 * only its last CALLS_KEPT of them written: the rest would be deleted by that same write.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { iso } from '../lib/index.js';

/** How many calls per function are kept for `plinth functions logs` and the console. */
export const CALLS_KEPT = 100;
/** How long an instance holds its calls before writing them. */
export const FLUSH_MS = 500;

import type { FunctionCall } from '@plinth/shared';

export type { FunctionCall };

export type NewCall = Omit<FunctionCall, 'id' | 'at'> & { function: string; at: number };

export interface CallLog {
  add(call: NewCall): void;
  /** The last CALLS_KEPT calls of `name` on every instance, newest first by their start (this instance's held ones written first). */
  recent(name: string): Promise<FunctionCall[]>;
  /** Writes the calls held now. */
  flush(): Promise<void>;
}

/** @example const calls = createCallLog(db, log); calls.add({...}); await calls.recent('hello'); */
export function createCallLog(db: Db, log: Logger): CallLog {
  /** The calls not yet written, per function: its last CALLS_KEPT. */
  let held = new Map<string, NewCall[]>();
  let heldCount = 0;
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  const write = async (batch: NewCall[]) => {
    const cols = ['function', 'at', 'version', 'trigger', 'status', 'code', 'duration_ms', 'logs'];
    const params: unknown[] = [];
    const tuples = batch.map((c) => {
      const base = params.length;
      params.push(c.function, c.at, c.version, c.trigger, c.status, c.code, c.duration_ms, c.logs);
      return `($${base + 1}, to_timestamp($${base + 2}::float8 / 1000), $${base + 3}::int, $${base + 4}, $${base + 5}::int, $${base + 6}, $${base + 7}::float8, $${base + 8})`;
    });
    await db.query(`insert into plinth.function_calls (${cols.join(', ')}) values ${tuples.join(', ')}`, params);
    const names = [...new Set(batch.map((c) => c.function))];
    await db.query(
      `delete from plinth.function_calls c using (
         select function, id from (
           select function, id, row_number() over (partition by function order by at desc, id desc) as n
             from plinth.function_calls where function = any($1::text[])) r where n > $2::int) old
       where c.id = old.id`,
      [names, CALLS_KEPT],
    );
  };

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = [...held.values()].flat();
    held = new Map();
    heldCount = 0;
    writing = writing.then(async () => {
      if (!batch.length) return;
      try {
        await write(batch);
      } catch (err) {
        log.warn({ err }, `functions: ${batch.length} recent calls were not written to the database`);
      }
    });
    return writing;
  };

  return {
    add(call) {
      let mine = held.get(call.function);
      if (!mine) held.set(call.function, (mine = []));
      mine.push(call);
      // Bounded in memory: at most CALLS_KEPT per function wait for one write.
      if (mine.length > CALLS_KEPT) mine.shift();
      else heldCount++;
      // One insert takes at most 500 (8 parameters each).
      if (heldCount >= 500) void flush();
      else if (!timer) {
        timer = setTimeout(() => void flush(), FLUSH_MS);
        timer.unref();
      }
    },
    async recent(name) {
      await flush();
      const { rows } = await db.query<{
        id: string;
        at: Date | string;
        version: number | null;
        trigger: 'request' | 'service';
        status: number;
        code: string | null;
        duration_ms: number;
        logs: string;
      }>(
        `select id::text as id, at, version, trigger, status, code, duration_ms, logs from plinth.function_calls
          where function = $1 order by at desc, id desc limit ${CALLS_KEPT}`,
        [name],
      );
      return rows.map((r) => ({
        id: Number(r.id),
        at: iso(new Date(r.at)),
        version: r.version === null ? null : Number(r.version),
        trigger: r.trigger,
        status: Number(r.status),
        code: r.code,
        duration_ms: Number(r.duration_ms),
        logs: r.logs,
      }));
    },
    flush,
  };
}
