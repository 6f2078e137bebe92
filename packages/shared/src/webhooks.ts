/**
 * Database webhooks (docs/webhooks.md): the types of the management API and of the POST a
 * receiver gets, declared once for the server, the console and receivers written in TypeScript.
 */

/**
 * The change events of the change log, once for realtime's protocol (`events`, `op`) and
 * webhooks' validation: the names of REST's methods' effects.
 */
export const CHANGE_EVENTS = ['insert', 'update', 'delete'] as const;
export type ChangeEvent = (typeof CHANGE_EVENTS)[number];

/** The changes a webhook can ask for: every change event. */
export const WEBHOOK_EVENTS = CHANGE_EVENTS;
export type WebhookEvent = ChangeEvent;

/** A webhook as the management API answers it. Header values are write-only: they come back as `MASK`. */
export interface Webhook {
  id: string;
  name: string;
  /** A table of the `public` schema. */
  table: string;
  events: WebhookEvent[];
  url: string;
  /** REST filters ANDed with `&` (`eq.status=paid&gt.total=100`, `not.`, `or=(…)`), tested on the row as written; null: every row. */
  filter: string | null;
  /** Extra request headers: names as given, every value `MASK`. */
  headers: Record<string, string>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  /** Until when the secret before the last rotation still signs too (null: none). */
  previous_secret_expires_at: string | null;
  /** Deliveries waiting (queued, including the one being retried). */
  queued: number;
}

/** What `POST /api/v1/webhooks` answers: the webhook and its signing secret, shown this once. */
export interface WebhookCreated extends Webhook {
  secret: string;
}

/** What `POST /api/v1/webhooks/{id}/secret/rotate` answers: the new secret, shown this once. */
export interface WebhookSecretRotated {
  secret: string;
  /** Until when the old secret also signs (null: revoked at once). */
  previous_secret_expires_at: string | null;
}

/** `POST /api/v1/webhooks` (and, any subset, `PATCH /api/v1/webhooks/{id}`). */
export interface WebhookInput {
  name: string;
  table: string;
  /** Default: all three. */
  events?: WebhookEvent[];
  url: string;
  filter?: string | null;
  /** A value sent back as `MASK` keeps the stored one (as the settings' secrets). */
  headers?: Record<string, string>;
  /** Default: true. */
  enabled?: boolean;
}

export type WebhookDeliveryStatus = 'queued' | 'sent' | 'failed';

/** An entry of a webhook's delivery log (`GET /api/v1/webhooks/{id}/deliveries`), newest first. */
export interface WebhookDelivery {
  /** Also the `Plinth-Delivery` header of each attempt. */
  id: string;
  webhook_id: string;
  /** The change's seq in the change log: the same for a redelivery of it. */
  seq: number;
  event: WebhookEvent;
  table: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** The HTTP status of the last answer, null when none came (refused, timed out, unreachable). */
  response_status: number | null;
  /** The start of the last answer's body (1,000 characters), or what went wrong. */
  response: string | null;
  /** How long the last attempt took. */
  duration_ms: number | null;
  /** The row did not fit in 256 KiB: the body carries the primary key only. */
  truncated: boolean;
  /** The delivery this one redelivers, or null. */
  redelivery_of: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /** When the next attempt is due (queued only). */
  next_attempt_at: string | null;
}

/** One delivery with the body it sends (`GET /api/v1/webhooks/{id}/deliveries/{delivery_id}`). */
export interface WebhookDeliveryDetail extends WebhookDelivery {
  body: string;
}

/**
 * The JSON body each POST carries (`R`: your row type). `record` is the row as written (null for
 * a delete), `old_record` the row before (null for an insert). When the body would pass 256 KiB,
 * both hold the primary key only and `truncated` is true: read the row through the REST API.
 */
export interface WebhookPayload<R = Record<string, unknown>> {
  type: WebhookEvent;
  table: string;
  seq: number;
  record: R | null;
  old_record: R | null;
  /** When the row was written (RFC 3339, UTC, milliseconds); its transaction committed at or after it. */
  commit_time: string;
  /** Present, and true, only when the rows were left out. */
  truncated?: true;
}
