/**
 * Capture on and off for a consumer of the change log (`realtime` for the WebSocket API,
 * `webhooks` for database webhooks): realtime.capture_for / release_for (migration 0080), and
 * their refusals mapped once, through db/errors.ts, for both consumers to word as they answer.
 */
import { dbErrorKind, type Queryable } from '../db/index.js';

/** Why capture cannot start or stop: no such table, or not one that can be captured (a view, no primary key). */
export class CaptureError extends Error {
  constructor(
    readonly kind: 'no_table' | 'not_capturable',
    message: string,
  ) {
    super(message);
  }
}

function refusal(err: unknown): never {
  const kind = dbErrorKind(err);
  if (kind === 'undefined_table') throw new CaptureError('no_table', String((err as Error).message));
  if (kind === 'wrong_object_type' || kind === 'not_in_prerequisite_state') {
    throw new CaptureError('not_capturable', String((err as Error).message));
  }
  throw err;
}

/**
 * Starts capturing `table`'s changes for `consumer` (the trigger comes with the first one).
 * @example await captureFor(tx, 'orders', 'webhooks'); // CaptureError when there is no such table
 */
export async function captureFor(q: Queryable, table: string, consumer: string): Promise<void> {
  await q.query('select realtime.capture_for($1, $2)', [table, consumer]).catch(refusal);
}

/**
 * Stops capturing `table`'s changes for `consumer` (the trigger goes with the last one).
 * @example await releaseFor(db, 'orders', 'realtime');
 */
export async function releaseFor(q: Queryable, table: string, consumer: string): Promise<void> {
  await q.query('select realtime.release_for($1, $2)', [table, consumer]).catch(refusal);
}
