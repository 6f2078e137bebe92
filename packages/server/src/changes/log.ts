/**
 * The change log (migrations 0080_realtime.sql, 0131_change_log_relid.sql), shared by its
 * consumers (realtime's live feed and replays; the webhooks' fan-out reads through
 * changesOfTablesSql and moveCursorSql below): what one instance does with it. It numbers
 * changes (realtime.sequence, one run at a time across instances), fetches what was numbered in
 * seq order and hands each batch to its listener before fetching the next, trims what is older
 * than REALTIME_RETENTION, and reads a table's changes after a seq for a replay.
 *
 * Wake-ups: each instance polls realtime.sequence() (writers do not NOTIFY: migration 0080 says
 * why), every 10 ms while changes come, backing off to every 100 ms when idle; a run that
 * numbered changes NOTIFYs plinth_realtime with the highest seq (→ fetch, on every instance). A
 * fetch every second covers a notification lost while the database connection was down.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { isoSql, openWorker } from '../lib/index.js';
import type { ChangeEvent } from '@plinth/shared';

/** One captured change, as numbered. `row` and `old` are PostgreSQL's JSON text (changes/row.ts). */
export interface Change {
  seq: number;
  table: string;
  op: ChangeEvent;
  row: string | null;
  old: string | null;
  /** When the row was written (ISO 8601); the transaction commits at or after it. */
  writtenAt: string;
}

export interface LogOptions {
  db: Db;
  log: Logger;
  retentionMs: number;
  /** Called with each fetched batch, in seq order; the next batch waits for it. */
  onChanges(changes: Change[]): Promise<void>;
  /** Counts each statement the feed sends (GET /metrics, and the bench's statements per change). */
  onStatement?(): void;
  /**
   * Whether anyone takes the changes now (the hub has subscriptions). While nobody does, the
   * frontier follows the numbering without reading a row: an instance nobody listens to does
   * not fetch every change of every captured table (measured: the fetch of changes nobody took
   * cost a realtime-enabled table a third of its writes per second on 2 cores).
   */
  listening?(): boolean;
  /** Called with how many changes the frontier passed over unread (nobody listening). */
  onUnread?(n: number): void;
}

export interface ChangeLog {
  /** The highest seq fetched so far (its batch may still be in `onChanges`). */
  frontier(): number;
  /** A table's changes with `after < seq <= upto`, oldest first (keep the range to a few thousand seqs). */
  read(table: string, after: number, upto: number): Promise<Change[]>;
  /** The highest seq given out, and the highest trimmed (a `since` below it is a resume gap). */
  bounds(): Promise<{ lastSeq: number; trimmedUpto: number }>;
  /** Numbers and fetches now (tests; the SQL runner after a write). */
  poke(): void;
  close(): Promise<void>;
}

const CHANGE_COLUMNS = `seq, table_name, op, "row"::text as row_text, old::text as old_text,
  ${isoSql('written_at')} as written_at`;

interface ChangeRow {
  seq: number | string;
  table_name: string;
  op: ChangeEvent;
  row_text: string | null;
  old_text: string | null;
  written_at: string;
}

const toChange = (r: ChangeRow): Change => ({
  seq: Number(r.seq),
  table: r.table_name,
  op: r.op,
  row: r.row_text,
  old: r.old_text,
  writtenAt: r.written_at,
});

/** Fetched per statement: a batch the dispatcher handles in one go. */
const FETCH_LIMIT = 1000;
/**
 * The numbering's poll: every 10 ms while runs find changes, doubling to 100 ms when idle. At
 * 500 writes/s that is about one numbering statement per five changes; idle, ten a second.
 */
const SEQ_BUSY_MS = 10;
const SEQ_IDLE_MS = 100;
const POLL_MS = 1000;
const TRIM_MS = 60_000;

/**
 * Starts this instance's work on the change log; `close()` stops it.
 * @example const changes = await openChangeLog({ db, log, retentionMs: 86_400_000, onChanges: (batch) => hub.dispatch(batch) });
 */
export async function openChangeLog(options: LogOptions): Promise<ChangeLog> {
  const { db, log } = options;
  const counted = <T>(p: Promise<T>) => {
    options.onStatement?.();
    return p;
  };
  const state = await db.query<{ last_seq: number | string }>('select last_seq from realtime.state where id = 1');
  let frontier = Number(state.rows[0]?.last_seq ?? 0);
  /** The highest seq known to be numbered (a numbering run's answer, or its NOTIFY). */
  let numbered = frontier;
  const heard = (seq: number) => {
    if (Number.isSafeInteger(seq) && seq > numbered) numbered = seq;
  };
  let closed = false;
  let seqDelay = SEQ_BUSY_MS;
  let seqTimer: NodeJS.Timeout | null = null;
  let failing = false;
  const worker = (pollMs: number | null, what: string, run: () => Promise<void>) =>
    openWorker({
      pollMs,
      run,
      onError(err) {
        if (!failing) log.warn({ err }, `realtime: ${what} failed; retrying`);
        failing = true;
      },
    });

  // Each on lib's worker loop: kicked (NOTIFY, the numbering, a poke) and polled.
  const fetcher = worker(POLL_MS, 'fetching changes', async () => {
    for (;;) {
      if (options.listening && !options.listening()) {
        // Checked and moved in one step (no await between): a subscription added after this
        // starts from the new frontier, one added before makes the hub listen.
        if (numbered > frontier) options.onUnread?.(numbered - frontier);
        frontier = Math.max(frontier, numbered);
        return;
      }
      const { rows } = await counted(
        db.query<ChangeRow>(`select ${CHANGE_COLUMNS} from realtime.read($1, $2)`, [frontier, frontier + FETCH_LIMIT]),
      );
      failing = false;
      if (rows.length === 0 || closed) return;
      const batch = rows.map(toChange);
      frontier = batch[batch.length - 1].seq;
      await options.onChanges(batch);
      if (rows.length < FETCH_LIMIT) return;
    }
  });

  // The numbering's own timer kicks it (its delay adapts to the load).
  const sequencer = worker(null, 'numbering changes', async () => {
    const { rows } = await counted(
      db.query<{ last_seq: number | string; numbered: number | string; waiting: number | string }>(
        'select last_seq, numbered, waiting from realtime.sequence(false)',
      ),
    );
    failing = false;
    const r = rows[0];
    heard(Number(r?.last_seq ?? 0));
    const busy = Number(r?.numbered ?? 0) > 0 || Number(r?.waiting ?? 0) > 0;
    if (Number(r?.numbered ?? 0) > 0) fetcher.kick();
    seqDelay = busy ? SEQ_BUSY_MS : Math.min(seqDelay * 2, SEQ_IDLE_MS);
  });
  const scheduleSequence = () => {
    if (closed) return;
    seqTimer = setTimeout(() => {
      sequencer.kick();
      scheduleSequence();
    }, seqDelay);
    seqTimer.unref();
  };

  const trimmer = worker(TRIM_MS, 'trimming changes', async () => {
    for (;;) {
      const { rows } = await db.query<{ n: number | string }>('select realtime.trim($1::interval) as n', [
        `${options.retentionMs} milliseconds`,
      ]);
      if (Number(rows[0]?.n ?? 0) === 0 || closed) return;
    }
  });

  const unlisten = [
    await db.listen('plinth_realtime', (payload) => {
      heard(Number(payload));
      fetcher.kick();
    }),
  ];
  scheduleSequence();

  return {
    frontier: () => frontier,
    async read(table, after, upto) {
      const { rows } = await counted(db.query<ChangeRow>(`select ${CHANGE_COLUMNS} from realtime.read($1, $2, $3)`, [after, upto, table]));
      return rows.map(toChange);
    },
    async bounds() {
      const { rows } = await db.query<{ last_seq: number | string; trimmed_upto: number | string }>(
        'select last_seq, trimmed_upto from realtime.state where id = 1',
      );
      return { lastSeq: Number(rows[0]?.last_seq ?? 0), trimmedUpto: Number(rows[0]?.trimmed_upto ?? 0) };
    },
    poke() {
      seqDelay = SEQ_BUSY_MS;
      sequencer.kick();
      fetcher.kick();
    },
    async close() {
      closed = true;
      if (seqTimer) clearTimeout(seqTimer);
      for (const u of unlisten) await u().catch(() => undefined);
      await Promise.all([fetcher.close(), sequencer.close(), trimmer.close()]);
    },
  };
}

/**
 * SQL of the changes of `tables` with after < seq <= upto, oldest first, for a consumer's own
 * statement (a CTE, inside its transaction): columns seq, table_name, op, row, old, written_at.
 * Its arguments are the placeholders to use.
 * @example `with c as (${changesOfTablesSql('$1', '$2', '$3')}) select count(*) from c`
 */
export function changesOfTablesSql(after: string, upto: string, tables: string): string {
  return `select * from realtime.read(${after}, ${upto}) where table_name = any(${tables}::text[])`;
}

/**
 * SQL that moves a consumer's cursor (retention never trims past it) to `seq` (a placeholder).
 * @example `moved as (${moveCursorSql('webhooks', '$2')})`
 */
export function moveCursorSql(consumer: string, seq: string): string {
  if (!/^[a-z][a-z0-9_]{0,31}$/.test(consumer)) throw new Error(`not a consumer name: ${consumer}`);
  return `update realtime.cursors set seq = ${seq}, updated_at = now() where consumer = '${consumer}'`;
}
