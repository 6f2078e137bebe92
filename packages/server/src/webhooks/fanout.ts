/**
 * Changes → deliveries. The `webhooks` consumer of the change log (migration 0080's
 * realtime.read, with its own cursor in realtime.cursors): in one transaction it takes the
 * cursor's row lock (FOR UPDATE SKIP LOCKED: one instance at a time, the others skip), reads the
 * numbered changes after it, writes one delivery per webhook whose table, events and filter match,
 * and moves the cursor. A change becomes its deliveries exactly once, even when an instance dies
 * halfway (its transaction rolls back and the next run does it again).
 *
 * Woken by plinth_realtime (a numbering run found changes; realtime's log loop numbers on every
 * instance), by a webhook saved, and every second.
 */
import type { Logger } from 'pino';
import type { Db, Queryable } from '../db/index.js';
import type { Clock } from '../lib/index.js';
import type { SchemaCache, TableInfo } from '../rest/index.js';
import { compileFilter, EVERY_ROW, FilterError, type RowFilter } from './filter.js';
import { buildBody, type ChangeImage } from './payload.js';
import { splitFields } from './row.js';

/** Changes read per transaction (realtime.read ranks whole batches: keep it to a few thousand). */
const BATCH = 1000;

interface HookRow {
  id: string;
  table_name: string;
  events: string[] | string;
  filter: string | null;
  from_seq: number | string;
  updated_at: string;
}

interface ChangeRow {
  seq: number | string;
  table_name: string;
  op: 'insert' | 'update' | 'delete';
  row_text: string | null;
  old_text: string | null;
  written_at: string;
}

interface Delivery {
  webhook: string;
  seq: number;
  event: string;
  table: string;
  body: string;
  truncated: boolean;
  /** A delivery that cannot be made (the filter no longer compiles): recorded as failed, with why. */
  failed: string | null;
}

const textArray = (v: string[] | string): string[] =>
  Array.isArray(v)
    ? v
    : v
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean);

export interface FanoutOptions {
  db: Db;
  schema: SchemaCache;
  clock: Clock;
  log: Logger;
  /** After a transaction that made deliveries committed (wakes this instance's sender). */
  onDeliveries(n: number): void;
}

/**
 * One fan-out run: at most BATCH changes. Returns how many changes it read (BATCH: run again).
 * @example while ((await fanoutOnce(o, filters)) === 1000);
 */
export async function fanoutOnce(
  o: FanoutOptions,
  filters: Map<string, { key: string; filter: RowFilter | FilterError }>,
): Promise<number> {
  const { read, made } = await o.db.transaction(async (tx) => {
    const cursor = await tx.query<{ seq: number | string }>(
      `select seq from realtime.cursors where consumer = 'webhooks' for update skip locked`,
    );
    if (cursor.rows.length === 0) return { read: 0, made: 0 };
    const after = Number(cursor.rows[0].seq);
    const last = Number((await tx.query<{ s: number | string }>('select last_seq as s from realtime.state where id = 1')).rows[0]?.s ?? 0);
    if (last <= after) return { read: 0, made: 0 };
    const upto = Math.min(last, after + BATCH);
    const hooks = (
      await tx.query<HookRow>(
        `select id::text as id, table_name, events, filter, from_seq, updated_at::text as updated_at from plinth.webhooks where enabled`,
      )
    ).rows;
    const tables = [...new Set(hooks.map((h) => h.table_name))];
    const changes =
      tables.length === 0
        ? []
        : (
            await tx.query<ChangeRow>(
              `select seq, table_name, op, "row"::text as row_text, old::text as old_text,
                 to_char(written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at
               from realtime.read($1, $2) where table_name = any($3::text[])`,
              [after, upto, tables],
            )
          ).rows;
    const deliveries = changes.length === 0 ? [] : await match(o, tx, hooks, changes, filters);
    if (deliveries.length > 0) await insert(tx, deliveries, new Date(o.clock.now()).toISOString());
    await tx.query(`update realtime.cursors set seq = $1, updated_at = now() where consumer = 'webhooks'`, [upto]);
    return { read: upto - after, made: deliveries.length };
  });
  if (made > 0) o.onDeliveries(made);
  return read;
}

async function match(
  o: FanoutOptions,
  tx: Queryable,
  hooks: HookRow[],
  changes: ChangeRow[],
  filters: Map<string, { key: string; filter: RowFilter | FilterError }>,
): Promise<Delivery[]> {
  const schema = o.schema.get();
  const byTable = new Map<string, Array<{ id: string; events: Set<string>; from: number; filter: RowFilter | FilterError }>>();
  for (const h of hooks) {
    const table = schema.tables.get(h.table_name);
    const key = `${h.updated_at}:${schema.version}`;
    let compiled = filters.get(h.id);
    if (!compiled || compiled.key !== key) {
      compiled = { key, filter: h.filter === null ? EVERY_ROW : await compiledOrError(tx, table, h.filter) };
      filters.set(h.id, compiled);
    }
    const list = byTable.get(h.table_name) ?? [];
    list.push({ id: h.id, events: new Set(textArray(h.events)), from: Number(h.from_seq), filter: compiled.filter });
    byTable.set(h.table_name, list);
  }
  const out: Delivery[] = [];
  for (const r of changes) {
    const seq = Number(r.seq);
    const targets = byTable.get(r.table_name)?.filter((h) => h.events.has(r.op) && seq > h.from);
    if (!targets || targets.length === 0) continue;
    const change: ChangeImage = { seq, table: r.table_name, op: r.op, row: r.row_text, old: r.old_text, writtenAt: r.written_at };
    let fields: Map<string, string> | null | undefined;
    let built: { body: string; truncated: boolean } | null = null;
    for (const h of targets) {
      let failed: string | null = null;
      if (h.filter instanceof FilterError) failed = `not sent: the webhook's filter no longer fits the table (${h.filter.message})`;
      else if (h.filter !== EVERY_ROW) {
        // The row as written; a delete has only the row before.
        fields ??= splitFields((r.op === 'delete' ? r.old_text : r.row_text) ?? '{}');
        const f = fields;
        if (!h.filter.test((c) => f?.get(c))) continue;
      }
      built ??= buildBody(change, schema.tables.get(r.table_name)?.pk ?? []);
      out.push({ webhook: h.id, seq, event: r.op, table: r.table_name, body: built.body, truncated: built.truncated, failed });
    }
  }
  return out;
}

async function compiledOrError(tx: Queryable, table: TableInfo | undefined, filter: string): Promise<RowFilter | FilterError> {
  if (!table) return new FilterError('the table is gone');
  try {
    return await compileFilter(tx, table, filter);
  } catch (err) {
    if (err instanceof FilterError) return err;
    throw err;
  }
}

/**
 * One statement for the batch's deliveries, in seq order (ids follow it: the send order). Every
 * array goes as text[] (postgres.js cannot send a boolean[]), cast back in the statement.
 */
async function insert(tx: Queryable, d: Delivery[], now: string): Promise<void> {
  await tx.query(
    `insert into plinth.webhook_deliveries (webhook_id, seq, event, table_name, body, truncated, status, response, created_at, updated_at, next_attempt_at)
     select w::uuid, s::int8, e, t, b, tr = 't', case when f is null then 'queued' else 'failed' end, f, $8::timestamptz, $8::timestamptz, $8::timestamptz
     from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) with ordinality as x(w, s, e, t, b, tr, f, n)
     order by n`,
    [
      d.map((x) => x.webhook),
      d.map((x) => String(x.seq)),
      d.map((x) => x.event),
      d.map((x) => x.table),
      d.map((x) => x.body),
      d.map((x) => (x.truncated ? 't' : 'f')),
      d.map((x) => x.failed),
      now,
    ],
  );
}

export interface Fanout {
  kick(): void;
  /** Reads everything numbered so far, then resolves (tests). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the fan-out loop of this instance.
 * @example const fanout = await startFanout({ db, schema, clock, log, onDeliveries: () => sender.kick() });
 */
export async function startFanout(o: FanoutOptions & { pollMs?: number }): Promise<Fanout> {
  const filters = new Map<string, { key: string; filter: RowFilter | FilterError }>();
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;
  let failing = false;
  const run = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        do {
          again = false;
          try {
            while (!closed && (await fanoutOnce(o, filters)) === BATCH);
            failing = false;
          } catch (err) {
            if (!failing) o.log.warn({ err }, 'webhooks: reading the change log failed; retrying');
            failing = true;
          }
        } while (again && !closed);
      } finally {
        running = null;
      }
    })();
  };
  const unlisten = await o.db.listen('plinth_realtime', run);
  const poll = setInterval(run, o.pollMs ?? 1000);
  poll.unref();
  run();
  return {
    kick: run,
    async drain() {
      while (running) await running;
      run();
      while (running) await running;
    },
    async close() {
      closed = true;
      clearInterval(poll);
      await unlisten().catch(() => undefined);
      while (running) await running;
    },
  };
}
