import type { MessageKind } from '@plinth/shared';
import type { Queryable } from '../db/index.js';

export type { MessageKind };

/**
 * What an auth flow hands to the outbox. The flow enqueues it in the same transaction as
 * the user change, so a committed change always has its message and a rolled-back one none.
 */
export interface OutgoingMessage {
  channel: 'email' | 'sms';
  kind: MessageKind;
  /** Email address or E.164 phone number. */
  to: string;
  /** Template variables: `link` for email flows, `code` for SMS, `email`, … */
  data: Record<string, string>;
  /**
   * Held back until this time (epoch ms): a per-recipient limit delays the message instead of
   * dropping it. One held-back message per recipient and kind: a second one, while the first
   * still waits, gives the first its data (the newer link) instead of adding a message.
   */
  notBefore?: number;
}

export interface Outbox {
  /** Inserts the message in the caller's transaction; the worker sends it after commit. */
  enqueue(tx: Queryable, message: OutgoingMessage): Promise<string>;
  /** Wakes the worker now (after the transaction committed) instead of at its next poll. */
  kick(): void;
}

/**
 * A transport sends one rendered message and resolves with the provider's answer. It throws
 * on failure; an error with `retryable: false` (a refused address) is not tried again, and its
 * `response` is the provider's answer for the delivery log.
 */
export interface EmailTransport {
  send(mail: { to: string; from: string; subject: string; html: string; text: string; headers?: Record<string, string> }): Promise<{
    response: string;
  }>;
}

export interface SmsTransport {
  send(sms: { to: string; body: string }): Promise<{ response: string }>;
}
