// TEMPORARY: a stand-in for the Outbox until messaging/ lands on
// the Plinth object (app.ts). Only what auth uses. Delete this file at integration.
import type { Queryable } from '../db/index.js';
import type { OutgoingMessage, Outbox } from '../messaging/types.js';

export function captureOutbox(): Outbox & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    sent,
    async enqueue(_tx: Queryable, message: OutgoingMessage) {
      sent.push(message);
      return String(sent.length);
    },
    kick() {},
  };
}
