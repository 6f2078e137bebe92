/**
 * Every write to plinth.webhooks (migration 0120): create, change, delete, rotate the secret, and
 * the capture of the tables they watch (realtime.capture_for / release_for with consumer
 * `webhooks`: the trigger stays while an enabled webhook or realtime wants the table). Writes
 * take one advisory lock, so two admins saving at once cannot leave a webhook whose table is no
 * longer captured (one releasing the capture the other's new webhook needs).
 */
import { MASK, type Webhook, type WebhookCreated, type WebhookEvent } from '@plinth/shared';
import { CaptureError, captureFor, releaseFor } from '../changes/index.js';
import type { Db, Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, iso, isoSql, isUuid } from '../lib/index.js';
import { newSecret } from './signature.js';
import type { WebhookFields } from './validate.js';

/** How long the secret before a rotation still signs (a second `v1=`), unless the rotation revokes it. */
export const PREVIOUS_SECRET_MS = 24 * 3600_000;
const LOCK = 726_354_120;
const CONSUMER = 'webhooks';

const COLUMNS = `w.id::text as id, w.name, w.table_name, w.events, w.url, w.filter, w.headers, w.enabled,
  ${isoSql('w.created_at')} as created_at, ${isoSql('w.updated_at')} as updated_at,
  case when w.previous_secret is not null and w.previous_secret_until > $1::timestamptz then ${isoSql('w.previous_secret_until')} end as previous_until,
  (select count(*) from plinth.webhook_deliveries d where d.webhook_id = w.id and d.status = 'queued')::int as queued`;

interface Row {
  id: string;
  name: string;
  table_name: string;
  events: WebhookEvent[];
  url: string;
  filter: string | null;
  headers: Record<string, string>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  previous_until: string | null;
  queued: number;
}

function fieldsOf(r: Row): WebhookFields {
  return {
    name: r.name,
    table: r.table_name,
    events: r.events,
    url: r.url,
    filter: r.filter,
    headers: r.headers,
    enabled: r.enabled,
  };
}

function toWebhook(r: Row): Webhook {
  const f = fieldsOf(r);
  return {
    id: r.id,
    name: f.name,
    table: f.table,
    events: f.events,
    url: f.url,
    filter: f.filter,
    headers: Object.fromEntries(Object.keys(f.headers).map((k) => [k, MASK])),
    enabled: f.enabled,
    created_at: r.created_at,
    updated_at: r.updated_at,
    previous_secret_expires_at: r.previous_until,
    queued: Number(r.queued),
  };
}

const notFound = (id: string) => new ApiError('webhook_not_found', `There is no webhook ${id.slice(0, 64)}.`);

/** capture_for's refusals (no such table, a view, no primary key) as a field problem. */
function captureError(err: unknown): never {
  if (err instanceof CaptureError) {
    const message = err.message;
    throw new ApiError('invalid_webhook', `The webhook is invalid: table ${message}`, [{ field: 'table', message }]);
  }
  throw err;
}

/** Starts capture of `table` for webhooks; the caller holds LOCK. */
async function capture(tx: Queryable, table: string): Promise<void> {
  await captureFor(tx, table, CONSUMER).catch(captureError);
}

/** Stops it when no enabled webhook but `except` watches `table`; a table dropped meanwhile is no error. */
async function releaseUnlessWatched(tx: Queryable, table: string, except: string): Promise<void> {
  const { rows } = await tx.query('select 1 from plinth.webhooks where table_name = $1 and enabled and id <> $2 limit 1', [table, except]);
  if (rows.length > 0) return;
  await releaseFor(tx, table, CONSUMER).catch((err) => {
    if (!(err instanceof CaptureError && err.kind === 'no_table')) throw err;
  });
}

/**
 * Where a webhook starts: the last seq after a numbering run. Reading realtime.state alone would
 * let a change committed a moment ago, numbered only at the next poll, count as after the webhook
 * was made (or switched back on) and be delivered. Holds the numbering lock until this transaction
 * ends (other instances' polls skip meanwhile). A change committed already but not numbered yet
 * (an older transaction is still open) gets a seq above this one: the snapshot stored beside it
 * (from_snapshot, migration 0155) is what leaves those out in the fan-out.
 */
const lastSeq = async (tx: Queryable) =>
  Number((await tx.query<{ s: number | string }>('select last_seq as s from realtime.sequence()')).rows[0]?.s ?? 0);

export interface WebhookStore {
  list(): Promise<Webhook[]>;
  get(id: string): Promise<Webhook>;
  /** The stored fields (header values in clear): what a PATCH is checked over. */
  fields(id: string): Promise<WebhookFields>;
  create(f: WebhookFields): Promise<WebhookCreated>;
  update(id: string, f: WebhookFields): Promise<Webhook>;
  remove(id: string): Promise<void>;
  /** A new secret, shown once; the old one signs too for 24 hours unless `revoke`. */
  rotateSecret(id: string, revoke: boolean): Promise<{ secret: string; previous_secret_expires_at: string | null }>;
  /** Capture on for every enabled webhook's table (at start: a table dropped and made again lost its trigger). */
  reconcile(): Promise<void>;
}

/**
 * The webhooks' rows and their tables' capture.
 * @example const store = createWebhookStore(db, clock); await store.create(fields);
 */
export function createWebhookStore(db: Db, clock: Clock): WebhookStore {
  const now = () => iso(clock.now());
  const one = async (q: Queryable, id: string): Promise<Row> => {
    if (!isUuid(id)) throw notFound(id);
    const { rows } = await q.query<Row>(`select ${COLUMNS} from plinth.webhooks w where w.id = $2`, [now(), id]);
    if (!rows[0]) throw notFound(id);
    return rows[0];
  };
  const locked = <T>(fn: (tx: Queryable) => Promise<T>) =>
    db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [LOCK]);
      return fn(tx);
    });

  return {
    async list() {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from plinth.webhooks w order by w.created_at, w.id`, [now()]);
      return rows.map(toWebhook);
    },
    async get(id) {
      return toWebhook(await one(db, id));
    },
    async fields(id) {
      return fieldsOf(await one(db, id));
    },
    async create(f) {
      const secret = newSecret();
      const row = await locked(async (tx) => {
        if (f.enabled) await capture(tx, f.table);
        const { rows } = await tx.query<{ id: string }>(
          `insert into plinth.webhooks (name, table_name, events, url, filter, headers, secret, enabled, from_seq, from_snapshot, created_at, updated_at)
           values ($1, $2, $3::text[], $4, $5, $6::jsonb, $7, $8, $9, pg_current_snapshot(), $10::timestamptz, $10::timestamptz)
           returning id::text as id`,
          [f.name, f.table, f.events, f.url, f.filter, JSON.stringify(f.headers), secret, f.enabled, await lastSeq(tx), now()],
        );
        return one(tx, rows[0].id);
      });
      return { ...toWebhook(row), secret };
    },
    async update(id, f) {
      const row = await locked(async (tx) => {
        const before = fieldsOf(await one(tx, id));
        const moved = before.table !== f.table;
        // Changes from now on: a webhook switched back on, or moved to another table, does not
        // receive what happened while it was off (or on the other table).
        const restart = moved || (f.enabled && !before.enabled);
        if (f.enabled && restart) await capture(tx, f.table);
        if (before.enabled && (moved || !f.enabled)) await releaseUnlessWatched(tx, before.table, id);
        await tx.query(
          `update plinth.webhooks set name = $2, table_name = $3, events = $4::text[], url = $5, filter = $6, headers = $7::jsonb,
             enabled = $8, from_seq = coalesce($9::int8, from_seq),
             from_snapshot = case when $9::int8 is null then from_snapshot else pg_current_snapshot() end, updated_at = $10::timestamptz
           where id = $1`,
          [id, f.name, f.table, f.events, f.url, f.filter, JSON.stringify(f.headers), f.enabled, restart ? await lastSeq(tx) : null, now()],
        );
        return one(tx, id);
      });
      return toWebhook(row);
    },
    async remove(id) {
      await locked(async (tx) => {
        const before = fieldsOf(await one(tx, id));
        await tx.query('delete from plinth.webhooks where id = $1', [id]);
        if (before.enabled) await releaseUnlessWatched(tx, before.table, id);
      });
    },
    async rotateSecret(id, revoke) {
      const secret = newSecret();
      const until = revoke ? null : iso(clock.now() + PREVIOUS_SECRET_MS);
      await one(db, id);
      const { rows } = await db.query<{ until: string | null }>(
        `update plinth.webhooks set previous_secret = case when $3 then null else secret end,
           previous_secret_until = $4::timestamptz, secret = $2, updated_at = $5::timestamptz
         where id = $1 returning ${isoSql('previous_secret_until')} as until`,
        [id, secret, revoke, until, now()],
      );
      if (!rows[0]) throw notFound(id);
      return { secret, previous_secret_expires_at: rows[0].until };
    },
    async reconcile() {
      const { rows } = await db.query<{ t: string }>(
        `select distinct w.table_name as t from plinth.webhooks w
         where w.enabled and not exists (select 1 from pg_trigger g join pg_class c on c.oid = g.tgrelid
           where c.relnamespace = 'public'::regnamespace and c.relname = w.table_name and g.tgname = 'plinth_realtime')`,
      );
      // One transaction per table: a table that is gone (or lost its primary key) stays as it is.
      for (const r of rows) await locked((tx) => capture(tx, r.t)).catch(() => undefined);
    },
  };
}
