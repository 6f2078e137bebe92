/**
 * Broadcast from SQL (issue 37): what `realtime.send` and `realtime.broadcast_changes` queued in
 * realtime.messages (migration 0153) goes to the channel's members, after commit only. The
 * migration's statement trigger NOTIFYs `plinth_realtime_send`, which PostgreSQL delivers at
 * commit (never for a rolled-back transaction, whose rows vanish with it); each wake-up claims a
 * batch in the order the rows were written (`for update skip locked`: with several instances
 * each row is claimed by one), deletes it and hands each message to the one channel hub, whose
 * bus takes it to the members on other instances. A wake-up lost (a restart, a dropped LISTEN)
 * is made up by the poll: a queued row waits at most POLL_MS.
 */
import type { Db } from '../db/index.js';
import { openWorker } from '../lib/index.js';
import type { Channels } from './channels.js';

export const SEND_CHANNEL = 'plinth_realtime_send';
/** Rows claimed per run: a full batch runs again at once, so a burst is bounded per statement, not in total. */
export const SEND_BATCH = 500;

interface Row {
  id: string;
  seq: string | number;
  topic: string;
  event: string | null;
  payload: string | null;
  private: boolean | null;
}

export interface SqlBroadcasts {
  /** Delivers what is queued now (tests, shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * @example const sql = await openSqlBroadcasts(db, channels, { pollMs: 1000, onError: (err) => log.warn({ err }) });
 */
export async function openSqlBroadcasts(
  db: Db,
  channels: Channels,
  o: {
    pollMs: number;
    onError(err: unknown): void;
    batch?: number;
    /** REALTIME_MAX_MESSAGE_SIZE: a larger payload is not sent (its row is deleted) and reported. */
    maxBytes?: number;
    onTooLarge?(topic: string, bytes: number): void;
  },
): Promise<SqlBroadcasts> {
  const batch = o.batch ?? SEND_BATCH;
  const run = async () => {
    const { rows } = await db.query<Row>(
      `with claimed as (
         select id from realtime.messages where extension = 'broadcast' order by seq limit $1 for update skip locked
       )
       delete from realtime.messages m using claimed where m.id = claimed.id
       returning m.id::text as id, m.seq, m.topic, m.event, m.payload::text as payload, m.private`,
      [batch],
    );
    rows.sort((a, b) => Number(a.seq) - Number(b.seq));
    for (const r of rows) {
      if (r.event === null) continue;
      const bytes = r.payload === null ? 0 : Buffer.byteLength(r.payload);
      if (o.maxBytes !== undefined && bytes > o.maxBytes) {
        o.onTooLarge?.(r.topic, bytes);
        continue;
      }
      channels.broadcast(r.topic, null, r.event, withId(r.payload === null ? null : JSON.parse(r.payload), r.id), r.private === true);
    }
    return rows.length === batch;
  };
  const worker = openWorker({ run, pollMs: o.pollMs, onError: o.onError });
  const unlisten = await db.listen(SEND_CHANNEL, () => worker.kick());
  return {
    drain: () => worker.drain(),
    async close() {
      await unlisten().catch(() => undefined);
      await worker.close();
    },
  };
}

/** Supabase's subscribers get the message's id in an object payload (`payload.id`), unless it has one. */
function withId(payload: unknown, id: string): unknown {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload) || 'id' in payload) return payload;
  return { ...payload, id };
}
