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
import { type Clock, iso, openWorker } from '../lib/index.js';
import type { SchemaCache, TableInfo } from '../rest/index.js';
import { compileFilter, FilterError, type RowFilter } from './filter.js';
import { bodySql } from './payload.js';
import { changesOfTablesSql, moveCursorSql, splitFields } from '../changes/index.js';

/** Changes read per transaction (realtime.read ranks whole batches: keep it to a few thousand). */
const BATCH = 1000;
/** The shortest time between two runs of this instance (a delivery waits at most this long for it). */
const MIN_GAP_MS = 25;

interface HookRow {
  id: string;
  table_name: string;
  events: string[];
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
  /** The webhooks (of those asked about) switched on after this change's transaction committed. */
  seen: string[];
}

/**
 * SQL: whether change `c` (a row of realtime.read) had committed when webhook `w` was switched on.
 * Such a change can be numbered after w.from_seq (an older transaction was still open), and is
 * not for `w` (migration 0155).
 */
const seenAtStartSql = (c: string, w: string) => `coalesce(pg_visible_in_snapshot(${c}.xid, ${w}.from_snapshot), false)`;

export interface FanoutOptions {
  db: Db;
  schema: SchemaCache;
  clock: Clock;
  log: Logger;
  /** After a transaction that made deliveries committed (wakes this instance's sender). */
  onDeliveries(n: number): void;
}

type Compiled = Map<string, { key: string; filter: RowFilter | FilterError }>;

/**
 * One fan-out run: at most BATCH changes. Returns how many seqs it moved past (BATCH: run again).
 *
 * Webhooks without a filter are matched by the insert statement itself (table, event, `seq >
 * from_seq`), which also writes each body from the log's row images (payload.ts): those changes
 * never come to Node. Only the tables of filtered webhooks have their changes read here, decided
 * in memory (filter.ts), and the matches handed to the same statement.
 * @example while ((await fanoutOnce(o, new Map())) === 1000);
 */
export async function fanoutOnce(o: FanoutOptions, compiled: Compiled): Promise<number> {
  const { read, made } = await o.db.transaction(async (tx) => {
    // The cursor (locked: one instance at a time, the others skip), how far the log is numbered,
    // and the enabled webhooks, in one round trip.
    const head = await tx.query<{ after: number | string; last: number | string; hooks: HookRow[] }>(
      `select k.seq as after, s.last_seq as last,
         (select coalesce(json_agg(json_build_object('id', w.id, 'table_name', w.table_name, 'events', w.events, 'filter', w.filter,
            'from_seq', w.from_seq, 'updated_at', w.updated_at)), '[]') from plinth.webhooks w where w.enabled) as hooks
       from realtime.cursors k, realtime.state s where k.consumer = 'webhooks' and s.id = 1 for update of k skip locked`,
    );
    const row = head.rows[0];
    if (!row) return { read: 0, made: 0 };
    const after = Number(row.after);
    const last = Number(row.last);
    if (last <= after) return { read: 0, made: 0 };
    const upto = Math.min(last, after + BATCH);
    const { hooks } = row;
    if (hooks.length === 0) {
      await tx.query(`update realtime.cursors set seq = $1, updated_at = now() where consumer = 'webhooks'`, [upto]);
      return { read: upto - after, made: 0 };
    }
    const plain = hooks.filter((h) => h.filter === null).map((h) => h.id);
    const matched = await filtered(
      o,
      tx,
      hooks.filter((h) => h.filter !== null),
      after,
      upto,
      compiled,
    );
    const schema = o.schema.get();
    const pk = Object.fromEntries([...new Set(hooks.map((h) => h.table_name))].map((t) => [t, schema.tables.get(t)?.pk ?? []]));
    // The deliveries and the cursor's move, in one statement.
    const res = await tx.query<{ n: number | string }>(
      `with c as (${changesOfTablesSql('$1', '$2', '$3')}),
       m as (
         select w.id as webhook_id, c.seq, null::text as failed from c
         join plinth.webhooks w on w.id = any($4::uuid[]) and w.table_name = c.table_name and c.op = any(w.events) and c.seq > w.from_seq
           and not ${seenAtStartSql('c', 'w')}
         union all
         select x.w::uuid, x.s::int8, x.f from unnest($5::text[], $6::text[], $7::text[]) as x(w, s, f)),
       made as (
         insert into plinth.webhook_deliveries (webhook_id, seq, event, table_name, body, truncated, status, response, created_at, updated_at, next_attempt_at)
         select m.webhook_id, c.seq, c.op, c.table_name, b.body, b.truncated, case when m.failed is null then 'queued' else 'failed' end,
           m.failed, $9::timestamptz, $9::timestamptz, $9::timestamptz
         from m join c on c.seq = m.seq cross join lateral (${bodySql('$8')}) b
         order by c.seq, m.webhook_id
         returning 1),
       moved as (${moveCursorSql('webhooks', '$2')})
       select count(*) as n from made`,
      [
        after,
        upto,
        Object.keys(pk),
        plain,
        matched.map((x) => x.webhook),
        matched.map((x) => String(x.seq)),
        matched.map((x) => x.failed),
        JSON.stringify(pk),
        iso(o.clock.now()),
      ],
    );
    return { read: upto - after, made: Number(res.rows[0]?.n ?? 0) };
  });
  if (made > 0) o.onDeliveries(made);
  return read;
}

/**
 * The changes of `hooks` (filtered webhooks) that their filter lets through, decided on the row
 * image in memory; a filter that no longer fits its table makes a failed delivery saying why.
 */
async function filtered(
  o: FanoutOptions,
  tx: Queryable,
  hooks: HookRow[],
  after: number,
  upto: number,
  compiled: Compiled,
): Promise<Array<{ webhook: string; seq: number; failed: string | null }>> {
  if (hooks.length === 0) return [];
  const schema = o.schema.get();
  const byTable = new Map<string, Array<{ id: string; events: Set<string>; from: number; filter: RowFilter | FilterError }>>();
  for (const h of hooks) {
    const key = `${h.updated_at}:${schema.version}`;
    let c = compiled.get(h.id);
    if (!c || c.key !== key) {
      c = { key, filter: await compiledOrError(tx, schema.tables.get(h.table_name), h.filter ?? '') };
      compiled.set(h.id, c);
    }
    const list = byTable.get(h.table_name) ?? [];
    list.push({ id: h.id, events: new Set(h.events), from: Number(h.from_seq), filter: c.filter });
    byTable.set(h.table_name, list);
  }
  const { rows } = await tx.query<ChangeRow>(
    `select seq, table_name, op, "row"::text as row_text, old::text as old_text,
       array(select w.id::text from plinth.webhooks w where w.id = any($4::uuid[]) and ${seenAtStartSql('c', 'w')}) as seen
     from (${changesOfTablesSql('$1', '$2', '$3')}) c`,
    [after, upto, [...byTable.keys()], hooks.map((h) => h.id)],
  );
  const out: Array<{ webhook: string; seq: number; failed: string | null }> = [];
  for (const r of rows) {
    const seq = Number(r.seq);
    let fields: Map<string, string> | null | undefined;
    for (const h of byTable.get(r.table_name) ?? []) {
      if (!h.events.has(r.op) || seq <= h.from || r.seen.includes(h.id)) continue;
      if (h.filter instanceof FilterError) {
        out.push({ webhook: h.id, seq, failed: `not sent: the webhook's filter no longer fits the table (${h.filter.message})` });
        continue;
      }
      // The row as written; a delete has only the row before.
      fields ??= splitFields((r.op === 'delete' ? r.old_text : r.row_text) ?? '{}');
      const f = fields;
      if (h.filter.test((c) => f?.get(c))) out.push({ webhook: h.id, seq, failed: null });
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

export interface Fanout {
  kick(): void;
  /** Reads everything numbered so far, then resolves (tests). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the fan-out loop of this instance.
 * @example const fanout = await openFanout({ db, schema, clock, log, onDeliveries: () => sender.kick() });
 */
export async function openFanout(o: FanoutOptions & { pollMs?: number }): Promise<Fanout> {
  const filters: Compiled = new Map();
  let failing = false;
  const worker = openWorker({
    pollMs: o.pollMs ?? 1000,
    // At most one run per MIN_GAP_MS: under a write load the numbering NOTIFYs every 10 ms, and a
    // run per notification would spend a transaction on a handful of changes.
    minGapMs: MIN_GAP_MS,
    async run() {
      const full = (await fanoutOnce(o, filters)) === BATCH;
      failing = false;
      return full;
    },
    onError(err) {
      if (!failing) o.log.warn({ err }, 'webhooks: reading the change log failed; retrying');
      failing = true;
    },
  });
  const unlisten = await o.db.listen('plinth_realtime', () => worker.kick());
  return {
    kick: () => worker.kick(),
    drain: () => worker.drain(),
    async close() {
      await worker.close();
      await unlisten().catch(() => undefined);
    },
  };
}
