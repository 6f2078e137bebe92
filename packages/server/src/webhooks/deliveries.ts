/**
 * A webhook's delivery log (`GET /api/v1/webhooks/{id}/deliveries`, newest first), one delivery
 * with its body, and redelivery: a copy of a sent or failed delivery queued at the end of the
 * webhook's queue, with the same body and seq (a receiver that de-duplicates by seq sees the
 * same change) and its own id. Entries are kept 30 days after their last attempt.
 */
import type { WebhookDelivery, WebhookDeliveryDetail, WebhookDeliveryStatus } from '@plinth/shared';
import type { Db } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, iso, isoSql, isUuid } from '../lib/index.js';

export interface DeliveryQuery {
  limit: number;
  offset: number;
  status?: WebhookDeliveryStatus;
}

const COLUMNS = `d.id::text as id, d.webhook_id::text as webhook_id, d.seq, d.event, d.table_name as "table", d.status, d.attempts,
  d.response_status, d.response, d.duration_ms, d.truncated, d.redelivery_of::text as redelivery_of,
  ${isoSql('d.created_at')} as created_at, ${isoSql('d.updated_at')} as updated_at, ${isoSql('d.sent_at')} as sent_at,
  case when d.status = 'queued' then ${isoSql('d.next_attempt_at')} end as next_attempt_at`;

const DIGITS = /^[0-9]{1,18}$/;
const KEEP_MS = 30 * 24 * 3600_000;

const normalize = <T extends WebhookDelivery>(r: T): T => ({ ...r, seq: Number(r.seq) });

export interface DeliveryLog {
  /** Newest first, and the total for `Content-Range`. */
  list(webhookId: string, q: DeliveryQuery): Promise<{ rows: WebhookDelivery[]; total: number }>;
  get(webhookId: string, deliveryId: string): Promise<WebhookDeliveryDetail>;
  redeliver(webhookId: string, deliveryId: string): Promise<WebhookDelivery>;
  /** Deletes entries done for 30 days; at most hourly per instance. */
  prune(): Promise<void>;
}

/**
 * The delivery log's reads and redelivery.
 * @example const log = createDeliveryLog(db, clock); await log.list(id, { limit: 50, offset: 0 });
 */
export function createDeliveryLog(db: Db, clock: Clock): DeliveryLog {
  let prunedAt = 0;
  const webhookExists = async (id: string) => {
    if (!isUuid(id) || (await db.query('select 1 from plinth.webhooks where id = $1', [id])).rows.length === 0) {
      throw new ApiError('webhook_not_found', `There is no webhook ${id.slice(0, 64)}.`);
    }
  };
  const missing = (id: string) => new ApiError('webhook_delivery_not_found', `This webhook has no delivery ${id.slice(0, 64)}.`);
  return {
    async list(webhookId, q) {
      await webhookExists(webhookId);
      const params: unknown[] = [webhookId, q.limit, q.offset];
      const status = q.status ? `and d.status = $${params.push(q.status)}` : '';
      const { rows } = await db.query<WebhookDelivery>(
        `select ${COLUMNS} from plinth.webhook_deliveries d where d.webhook_id = $1 ${status} order by d.id desc limit $2 offset $3`,
        params,
      );
      const count = await db.query<{ n: number }>(
        `select count(*)::int as n from plinth.webhook_deliveries d where d.webhook_id = $1 ${q.status ? 'and d.status = $2' : ''}`,
        q.status ? [webhookId, q.status] : [webhookId],
      );
      return { rows: rows.map(normalize), total: Number(count.rows[0]?.n ?? 0) };
    },
    async get(webhookId, deliveryId) {
      await webhookExists(webhookId);
      if (!DIGITS.test(deliveryId)) throw missing(deliveryId);
      const { rows } = await db.query<WebhookDeliveryDetail>(
        `select ${COLUMNS}, d.body from plinth.webhook_deliveries d where d.webhook_id = $1 and d.id = $2`,
        [webhookId, deliveryId],
      );
      if (!rows[0]) throw missing(deliveryId);
      return normalize(rows[0]);
    },
    async redeliver(webhookId, deliveryId) {
      await webhookExists(webhookId);
      if (!DIGITS.test(deliveryId)) throw missing(deliveryId);
      const now = iso(clock.now());
      const { rows } = await db.query<WebhookDelivery>(
        `with src as (select * from plinth.webhook_deliveries where webhook_id = $1 and id = $2),
         made as (
           insert into plinth.webhook_deliveries (webhook_id, seq, event, table_name, body, truncated, redelivery_of, created_at, updated_at, next_attempt_at)
           select webhook_id, seq, event, table_name, body, truncated, id, $3::timestamptz, $3::timestamptz, $3::timestamptz
           from src where status <> 'queued'
           returning *)
         select ${COLUMNS} from made d`,
        [webhookId, deliveryId, now],
      );
      if (rows[0]) return normalize(rows[0]);
      const src = await db.query<{ status: string }>('select status from plinth.webhook_deliveries where webhook_id = $1 and id = $2', [
        webhookId,
        deliveryId,
      ]);
      if (!src.rows[0]) throw missing(deliveryId);
      throw new ApiError('conflict', 'This delivery is still queued: it will be attempted again by itself.', { status: 'queued' });
    },
    async prune() {
      const now = clock.now();
      if (now - prunedAt < 3600_000) return;
      prunedAt = now;
      await db.query(`delete from plinth.webhook_deliveries where status <> 'queued' and updated_at < $1::timestamptz`, [
        iso(now - KEEP_MS),
      ]);
    },
  };
}
