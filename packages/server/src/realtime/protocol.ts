/**
 * The messages of the realtime WebSocket (docs/realtime.md): what a client may send,
 * parsed and checked here without I/O, and the server's messages. Every client mistake is an
 * `ApiError` whose code and message go back as `{"type": "error", …}` on a connection that stays
 * open.
 */
import { type ChangeEvent, CHANGE_EVENTS as EVENTS } from '@plinth/shared';
import { ApiError } from '../http/index.js';

/** The change events, declared once in packages/shared (webhooks' validation takes the same list). */
export { EVENTS, type ChangeEvent };
/** What a subscriber receives: an event, or `leave` when an update takes a row out of its view. */
export type ChangeOp = ChangeEvent | 'leave';

export type ClientMessage =
  | { type: 'auth'; accessToken: string | null }
  | {
      type: 'subscribe';
      id: string;
      table: string;
      events: ReadonlySet<ChangeEvent>;
      filter: string | null;
      since: number | null;
    }
  | { type: 'unsubscribe'; id: string }
  | { type: 'ping' }
  | { type: 'join'; channel: string; self: boolean; presenceKey: string | null; private: boolean }
  | { type: 'leave'; channel: string }
  | { type: 'broadcast'; channel: string; event: string; payload: unknown }
  | { type: 'track'; channel: string; meta: Record<string, unknown> }
  | { type: 'untrack'; channel: string };

const ID = /^[\x21-\x7e]{1,64}$/;
const MAX_FILTER = 4096;
const MAX_TOKEN = 16_384;

const invalid = (message: string, id?: string, field?: string) =>
  new ApiError('invalid_parameter', message, field === undefined ? undefined : { field, ...(id === undefined ? {} : { id }) });

/** The fields each message type takes; any other is refused (a padded message costs memory while it waits). */
const FIELDS: Record<string, ReadonlySet<string>> = {
  auth: new Set(['type', 'access_token']),
  subscribe: new Set(['type', 'id', 'table', 'events', 'filter', 'since']),
  unsubscribe: new Set(['type', 'id']),
  ping: new Set(['type']),
  join: new Set(['type', 'channel', 'self', 'presence_key', 'private']),
  leave: new Set(['type', 'channel']),
  broadcast: new Set(['type', 'channel', 'event', 'payload']),
  track: new Set(['type', 'channel', 'meta']),
  untrack: new Set(['type', 'channel']),
};

/** A channel's name or a broadcast's event: 1 to 255 characters, no control characters. */
const NAME = /^[^\x00-\x1f\x7f]{1,255}$/;

function channelOf(m: Record<string, unknown>): string {
  if (typeof m.channel !== 'string' || !NAME.test(m.channel)) {
    throw invalid('"channel" must be a channel\'s name: 1 to 255 characters, no control characters.', undefined, 'channel');
  }
  return m.channel;
}

function channelMessage(m: Record<string, unknown>): ClientMessage {
  const channel = channelOf(m);
  switch (m.type) {
    case 'join': {
      if (m.self !== undefined && typeof m.self !== 'boolean') throw invalid('"self" must be a boolean.', undefined, 'self');
      const key = m.presence_key;
      if (key !== undefined && key !== null && (typeof key !== 'string' || !NAME.test(key))) {
        throw invalid('"presence_key" must be 1 to 255 characters.', undefined, 'presence_key');
      }
      if (m.private !== undefined && typeof m.private !== 'boolean') throw invalid('"private" must be a boolean.', undefined, 'private');
      return {
        type: 'join',
        channel,
        self: m.self === true,
        presenceKey: typeof key === 'string' ? key : null,
        private: m.private === true,
      };
    }
    case 'broadcast':
      if (typeof m.event !== 'string' || !NAME.test(m.event))
        throw invalid('"event" must be a name of 1 to 255 characters.', undefined, 'event');
      if (!('payload' in m)) throw invalid('"payload" is missing (any JSON value).', undefined, 'payload');
      return { type: 'broadcast', channel, event: m.event, payload: m.payload };
    case 'track':
      if (m.meta === null || typeof m.meta !== 'object' || Array.isArray(m.meta)) {
        throw invalid('"meta" must be a JSON object (what the others see of you).', undefined, 'meta');
      }
      return { type: 'track', channel, meta: m.meta as Record<string, unknown> };
    case 'untrack':
      return { type: 'untrack', channel };
    default:
      return { type: 'leave', channel };
  }
}

/** The subscription id of a message, when it has a usable one (so an error can name it). */
export function messageId(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'string' && ID.test(id) ? id : undefined;
}

/**
 * Parses one client message (the text of a WebSocket frame).
 * @example parseClientMessage('{"type":"subscribe","id":"s1","table":"todos","filter":"eq.list_id=7"}')
 *   // { type: 'subscribe', id: 's1', table: 'todos', events: Set {insert, update, delete}, filter: 'eq.list_id=7', since: null }
 */
export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_json', 'A message must be one JSON object, such as {"type": "ping"}.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('invalid_request', 'A message must be a JSON object with a "type".');
  }
  const m = value as Record<string, unknown>;
  const fields = typeof m.type === 'string' && Object.hasOwn(FIELDS, m.type) ? FIELDS[m.type] : undefined;
  if (fields) {
    for (const key of Object.keys(m)) {
      if (!fields.has(key)) {
        const shown = JSON.stringify(key.slice(0, 40));
        throw new ApiError(
          'invalid_request',
          `A ${m.type} message takes no field ${shown}: send only ${[...fields].map((f) => `"${f}"`).join(', ')}.`,
          { field: key.slice(0, 64) },
        );
      }
    }
  }
  switch (m.type) {
    case 'auth': {
      const token = m.access_token;
      if (token !== null && (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN)) {
        throw invalid('"access_token" must be an access token (or null to continue with the apikey alone).', undefined, 'access_token');
      }
      return { type: 'auth', accessToken: token };
    }
    case 'subscribe':
      return subscribe(m);
    case 'unsubscribe':
      return { type: 'unsubscribe', id: subscriptionId(m) };
    case 'ping':
      return { type: 'ping' };
    case 'join':
    case 'leave':
    case 'broadcast':
    case 'track':
    case 'untrack':
      return channelMessage(m);
    default:
      throw new ApiError(
        'invalid_request',
        `Unknown message type ${JSON.stringify(m.type)?.slice(0, 40) ?? 'undefined'}: send auth, subscribe, unsubscribe, ping, join, leave, broadcast, track or untrack.`,
      );
  }
}

function subscriptionId(m: Record<string, unknown>): string {
  if (typeof m.id !== 'string' || !ID.test(m.id)) {
    throw invalid('"id" must be a string of 1 to 64 printable ASCII characters, chosen by the client.', undefined, 'id');
  }
  return m.id;
}

function subscribe(m: Record<string, unknown>): ClientMessage {
  const id = subscriptionId(m);
  if (typeof m.table !== 'string' || m.table.length === 0 || m.table.length > 63) {
    throw invalid('"table" must name a table of the public schema.', id, 'table');
  }
  let events: Set<ChangeEvent> = new Set(EVENTS);
  if (m.events !== undefined && m.events !== null) {
    if (!Array.isArray(m.events) || m.events.length === 0 || m.events.some((e) => !EVENTS.includes(e as ChangeEvent))) {
      throw invalid('"events" must be a non-empty list of "insert", "update" and "delete".', id, 'events');
    }
    events = new Set(m.events as ChangeEvent[]);
  }
  let filter: string | null = null;
  if (m.filter !== undefined && m.filter !== null && m.filter !== '') {
    if (typeof m.filter !== 'string' || m.filter.length > MAX_FILTER) {
      throw invalid(`"filter" must be REST filters such as "eq.list_id=7&neq.done=true" (at most ${MAX_FILTER} characters).`, id, 'filter');
    }
    filter = m.filter;
  }
  let since: number | null = null;
  if (m.since !== undefined && m.since !== null) {
    if (typeof m.since !== 'number' || !Number.isSafeInteger(m.since) || m.since < 0) {
      throw invalid('"since" must be the seq of the last change received (a non-negative integer).', id, 'since');
    }
    since = m.since;
  }
  return { type: 'subscribe', id, table: m.table, events, filter, since };
}

/**
 * The text of an `error` message.
 * @example errorMessage(new ApiError('table_not_found', 'No table "x".'), 's1') // '{"type":"error","id":"s1","code":"table_not_found",…}'
 */
export function errorMessage(err: ApiError, id?: string): string {
  const body: Record<string, unknown> = { type: 'error' };
  if (id !== undefined) body.id = id;
  body.code = err.code;
  body.message = err.message;
  if (err.details !== undefined) body.details = err.details;
  return JSON.stringify(body);
}

/** The text of a `change` message; `row` and `old` are JSON text already (json-row.ts). */
export function changeMessage(
  id: string,
  seq: number,
  op: ChangeOp,
  table: string,
  row: string | null,
  old: string | null,
  commitTime: string,
): string {
  return `{"type":"change","id":${JSON.stringify(id)},"seq":${seq},"op":"${op}","table":${JSON.stringify(table)},"row":${row ?? 'null'},"old":${old ?? 'null'},"commit_time":${JSON.stringify(commitTime)}}`;
}
