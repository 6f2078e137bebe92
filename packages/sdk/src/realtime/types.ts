import type { PlinthError } from '../types.js';

/** What a subscriber receives: an event, or `leave` when an update took the row out of its view. */
export type RealtimeOp = 'insert' | 'update' | 'delete' | 'leave';
export type RealtimeEvent = 'insert' | 'update' | 'delete';

/**
 * One change (docs/realtime.md). `row` is the row as written (insert, update), with the columns
 * the signed-in role may select; `old` holds the primary key (update, delete, leave).
 */
export interface RealtimeChange<Row = Record<string, unknown>> {
  seq: number;
  op: RealtimeOp;
  table: string;
  row: Row | null;
  old: Partial<Row> | null;
  commit_time: string;
}

/**
 * `SUBSCRIBED`: live (after a resume, once the missed changes were delivered);
 * `RECONNECTING`: the connection dropped, the SDK reconnects and resumes from `lastSeq` by itself;
 * `CLOSED`: unsubscribed, or the client was disposed; `ERROR`: the server refused the subscription
 * (with the error), or a resume found the changes gone (`resume_gap`: refetch, the subscription
 * goes on from now).
 */
export type RealtimeStatus = 'SUBSCRIBED' | 'RECONNECTING' | 'CLOSED' | 'ERROR';

export interface RealtimeSubscribeOptions<T extends string = string> {
  table: T;
  /** Default: all three. */
  events?: RealtimeEvent[];
  /** REST filters, ANDed: `eq.list_id=7&neq.done=true`. */
  filter?: string;
  /** Replay every change after this seq first (a `lastSeq` kept from before). */
  since?: number;
}

export interface RealtimeSubscription {
  /** The seq of the last change delivered (or the position the subscription started at); null before. */
  readonly lastSeq: number | null;
  readonly status: RealtimeStatus;
  /** Ends the subscription; resolves once the server confirmed (or at once when offline). */
  unsubscribe(): Promise<void>;
}

export type RealtimeStatusCallback = (status: RealtimeStatus, error?: PlinthError) => void;

/** The WebSocket class to use: the browser's by default; in Node 20, pass `ws`'s. */
export type WebSocketLike = new (
  url: string,
) => {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
};

export interface RealtimeOptions {
  /** A WebSocket implementation where the platform has none (Node 20: the WebSocket class of the ws package). */
  WebSocket?: WebSocketLike;
  /** Longest wait between reconnection attempts (ms). Default 10 000. */
  maxReconnectDelayMs?: number;
  /** How often the SDK pings; a connection silent for two of these is replaced. Default 25 000. */
  heartbeatMs?: number;
}
