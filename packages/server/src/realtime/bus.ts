/**
 * The bus between the instances of one project (docs/realtime.md, "Across instances"): what the
 * channel hub (channels.ts) of one instance tells the others, so a broadcast reaches a channel's
 * members on every instance and presence converges. One small interface, three carriers:
 * - Redis pub/sub when `REDIS_URL` is set (one channel per project);
 * - PostgreSQL `LISTEN/NOTIFY` without Redis: messages queued for a tick are packed into
 *   notifications under NOTIFY's 8,000-byte payload limit (one statement per flush, flushes one
 *   at a time, so order holds); a message larger than one notification is split into chunks the
 *   receivers put together again (never refused: a broadcast is already bounded by
 *   REALTIME_MAX_MESSAGE_SIZE, and a message over BUS_MAX_BYTES is dropped with a log line);
 * - none on PGlite: its data directory is locked to one process, the only instance.
 *
 * A carrier being down never fails a caller: `publish` queues or drops, the hub goes on
 * delivering to this instance's clients, one warning says so and one line says when it is back
 * (then `onReconnect` runs: the hub republishes its presence and asks the others for theirs).
 * Every instance hears its own messages back and drops them by `id`: its clients were served
 * before it published (the `self` rule is the hub's).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import type { PresenceState } from './channels.js';

/** What travels between instances; `k` is a topic's key in the hub (private or public, and its name). */
export type BusMessage =
  /** A broadcast; `bin`: the payload was bytes, sent as base64. */
  | { t: 'broadcast'; k: string; event: string; payload: unknown; bin?: true }
  /** A presence change of the sender's members on a topic. */
  | { t: 'diff'; k: string; joins: PresenceState; leaves: PresenceState }
  /** The sender's whole presence on a topic, republished every heartbeat/4 (its lease). */
  | { t: 'state'; k: string; state: PresenceState }
  /** A started or reconnected instance asks the others for their presence now. */
  | { t: 'sync' };

export interface Bus {
  /** `redis`, `postgres` or `none` (log lines, metrics). */
  readonly kind: 'redis' | 'postgres' | 'none';
  /** This instance's id on the bus. */
  readonly id: string;
  /** False while the carrier is known to be down (metrics: plinth_realtime_bus_up). */
  up(): boolean;
  /** Sends to every other instance; never throws, never waits (a carrier down drops it). */
  publish(m: BusMessage): void;
  /** Messages of the other instances (never this one's own). */
  onMessage(handler: (from: string, m: BusMessage) => void): void;
  /** The carrier is back after an outage (messages may have been lost meanwhile). */
  onReconnect(handler: () => void): void;
  close(): Promise<void>;
}

/** The largest message a bus carries (a presence state of a crowded topic stays far below). */
export const BUS_MAX_BYTES = 8 * 1024 * 1024;
/** A NOTIFY payload must be shorter than 8,000 bytes: what a packed notification may hold. */
export const NOTIFY_PAYLOAD_BYTES = 7900;
/** Bytes of a message per chunk (base64 of it, with its header, fits a notification). */
const CHUNK_BYTES = 5000;
/** Messages waiting for the database at most; more are dropped (logged), so memory stays bounded. */
const MAX_QUEUED = 10_000;
/** Chunked messages being put together at most, and how long one may wait for its last chunk. */
const MAX_PARTIAL = 256;
const PARTIAL_MS = 30_000;

const newId = () => randomBytes(8).toString('hex');

/** One process is the only instance (PGlite): nothing to tell anyone. */
export function noBus(): Bus {
  return {
    kind: 'none',
    id: newId(),
    up: () => true,
    publish: () => undefined,
    onMessage: () => undefined,
    onReconnect: () => undefined,
    close: async () => undefined,
  };
}

/** Handlers, and the down/back log lines of a carrier. */
function hooks(log: Logger, what: string) {
  const handlers: Array<(from: string, m: BusMessage) => void> = [];
  const reconnects: Array<() => void> = [];
  let down = false;
  return {
    handlers,
    reconnects,
    deliver(from: string, m: BusMessage) {
      // Whatever arrives (anyone who may NOTIFY on the database can send here): a malformed
      // message is dropped with a log line, never thrown into the carrier's callback.
      if (!wellFormed(m)) {
        log.warn({ realtimeBus: what, from }, 'realtime: a malformed message on the bus was dropped');
        return;
      }
      for (const h of handlers) {
        try {
          h(from, m);
        } catch (err) {
          log.warn({ err, realtimeBus: what }, 'realtime: a message from another instance failed');
        }
      }
    },
    down(reason: string) {
      if (down) return;
      down = true;
      log.warn(
        { realtimeBus: what, reason },
        `realtime: ${what} is unavailable (${reason}): broadcast and presence reach this instance's clients only until it is back`,
      );
    },
    up() {
      if (!down) return;
      down = false;
      log.info({ realtimeBus: what }, `realtime: ${what} is back: broadcast and presence reach every instance again`);
      for (const r of reconnects) r();
    },
    isDown: () => down,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A presence state: each key's value `{metas: [objects]}`. */
function isState(v: unknown): boolean {
  if (!isObject(v)) return false;
  for (const e of Object.values(v)) {
    if (!isObject(e) || !Array.isArray(e.metas) || !e.metas.every(isObject)) return false;
  }
  return true;
}

/** The shape of a BusMessage, checked before the hub sees it. */
export function wellFormed(m: unknown): m is BusMessage {
  if (!isObject(m)) return false;
  if (m.t === 'sync') return true;
  if (typeof m.k !== 'string') return false;
  switch (m.t) {
    case 'broadcast':
      return typeof m.event === 'string';
    case 'diff':
      return isState(m.joins) && isState(m.leaves);
    case 'state':
      return isState(m.state);
    default:
      return false;
  }
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * Redis pub/sub on `channel` (one per project): a publishing connection that fails at once while
 * Redis is away (no queue), and a subscribed one that ioredis reconnects.
 * @example const bus = redisBus('redis://127.0.0.1:6379', 'plinth:ab12:realtime', log, '127.0.0.1:6379');
 */
export function redisBus(url: string, channel: string, log: Logger, where: string): Bus {
  const id = newId();
  const h = hooks(log, `Redis at ${where}`);
  const options = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: 1000,
    connectTimeout: 1000,
    autoResubscribe: false,
    retryStrategy: (times: number) => Math.min(times * 100, 500),
  };
  // ioredis is loaded only when REDIS_URL is set (a start's cost otherwise; issue 32).
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const pub = new RedisClient(url, options);
  const sub = new RedisClient(url, options);
  let closed = false;
  let started = false;
  const ready = () => {
    if (pub.status !== 'ready' || sub.status !== 'ready') return;
    const first = !started;
    started = true;
    // Back after an outage: up() runs the reconnect handlers; the first time, they run here.
    if (h.isDown()) h.up();
    else if (first) for (const r of h.reconnects) r();
  };
  for (const r of [pub, sub]) {
    r.on('error', (err: Error) => {
      if (!closed) h.down(err.message);
    });
    r.on('close', () => {
      if (!closed && started) h.down('connection closed');
    });
  }
  pub.on('ready', ready);
  sub.on('ready', () => {
    sub.subscribe(channel).then(ready, (err: Error) => h.down(err.message));
  });
  const mine = `{"f":${JSON.stringify(id)},`;
  sub.on('message', (_ch: string, text: string) => {
    // Its own messages come back: dropped before parsing.
    if (text.startsWith(mine)) return;
    const env = parse(text) as { f?: unknown; m?: BusMessage } | undefined;
    if (!env || typeof env.f !== 'string' || env.f === id || !env.m) return;
    h.deliver(env.f, env.m);
  });
  return {
    kind: 'redis',
    id,
    up: () => !h.isDown(),
    publish(m) {
      if (closed) return;
      const text = JSON.stringify({ f: id, m });
      if (Buffer.byteLength(text) > BUS_MAX_BYTES) {
        log.warn(
          { topic: 'k' in m ? m.k : undefined, bytes: text.length },
          'realtime: a message over the bus limit was not sent to other instances',
        );
        return;
      }
      if (pub.status !== 'ready') {
        if (started) h.down(`not connected (${pub.status})`);
        return;
      }
      pub.publish(channel, text).catch((err: Error) => h.down(err.message));
    },
    onMessage: (fn) => void h.handlers.push(fn),
    onReconnect: (fn) => void h.reconnects.push(fn),
    async close() {
      closed = true;
      await Promise.all([pub, sub].map((r) => r.quit().catch(() => r.disconnect())));
    },
  };
}

/** The notification channel of the PostgreSQL carrier (the database is the project's). */
export const NOTIFY_CHANNEL = 'plinth_realtime_bus';

type Item = BusMessage | { c: string; i: number; n: number; d: string };

/**
 * Splits what is queued into NOTIFY payloads under NOTIFY_PAYLOAD_BYTES: small messages packed
 * together, a large one in chunks. Each payload is `{"f":sender,"s":n,"x":[items]}` (the
 * number keeps PostgreSQL from folding two equal payloads of one transaction into one).
 * @example packNotifications('ab', () => 1, [{ t: 'sync' }]) // ['{"f":"ab","s":1,"x":[{"t":"sync"}]}']
 */
export function packNotifications(from: string, next: () => number, messages: BusMessage[]): string[] {
  const out: string[] = [];
  let items: string[] = [];
  let bytes = 0;
  const head = (s: number) => `{"f":${JSON.stringify(from)},"s":${s},"x":[`;
  const overhead = Buffer.byteLength(head(Number.MAX_SAFE_INTEGER)) + 2;
  const flush = () => {
    if (items.length === 0) return;
    out.push(`${head(next())}${items.join(',')}]}`);
    items = [];
    bytes = 0;
  };
  for (const m of messages) {
    const text = JSON.stringify(m);
    const size = Buffer.byteLength(text);
    if (size + overhead <= NOTIFY_PAYLOAD_BYTES) {
      if (bytes + size + 1 + overhead > NOTIFY_PAYLOAD_BYTES) flush();
      items.push(text);
      bytes += size + 1;
      continue;
    }
    // In chunks, each a notification of its own, in order after what was packed before it.
    flush();
    const raw = Buffer.from(text);
    const c = newId();
    const n = Math.ceil(raw.length / CHUNK_BYTES);
    for (let i = 0; i < n; i++) {
      const part: Item = { c, i, n, d: raw.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES).toString('base64') };
      out.push(`${head(next())}${JSON.stringify(part)}]}`);
    }
  }
  flush();
  return out;
}

/**
 * Puts chunked messages together again: at most MAX_PARTIAL at once, each dropped when its last
 * chunk has not come within PARTIAL_MS (a sender that died mid-message).
 */
export class Reassembler {
  private readonly partial = new Map<string, { parts: Array<string | undefined>; got: number; at: number }>();
  add(from: string, c: { c: string; i: number; n: number; d: string }, now = Date.now()): BusMessage | undefined {
    const key = `${from}:${c.c}`;
    let p = this.partial.get(key);
    if (!p) {
      if (!Number.isSafeInteger(c.n) || c.n < 1 || c.n > Math.ceil(BUS_MAX_BYTES / CHUNK_BYTES)) return undefined;
      for (const [k, old] of this.partial) if (now - old.at > PARTIAL_MS) this.partial.delete(k);
      if (this.partial.size >= MAX_PARTIAL) this.partial.delete(this.partial.keys().next().value as string);
      p = { parts: new Array(c.n), got: 0, at: now };
      this.partial.set(key, p);
    }
    if (!Number.isSafeInteger(c.i) || c.i < 0 || c.i >= p.parts.length || p.parts[c.i] !== undefined) return undefined;
    p.parts[c.i] = c.d;
    p.got++;
    if (p.got < p.parts.length) return undefined;
    this.partial.delete(key);
    const text = Buffer.concat(p.parts.map((d) => Buffer.from(d as string, 'base64'))).toString();
    return parse(text) as BusMessage | undefined;
  }
  get size(): number {
    return this.partial.size;
  }
}

/**
 * PostgreSQL's LISTEN/NOTIFY on NOTIFY_CHANNEL: what is published in one tick goes out in one
 * statement (`pg_notify` per packed payload), one flush at a time.
 * @example const bus = await postgresBus(db, log);
 */
export async function postgresBus(db: Db, log: Logger): Promise<Bus> {
  const id = newId();
  const h = hooks(log, 'PostgreSQL NOTIFY');
  const joiner = new Reassembler();
  let seq = 0;
  let queue: BusMessage[] = [];
  let flushing: Promise<void> | null = null;
  let closed = false;
  let dropped = 0;
  const mine = `{"f":${JSON.stringify(id)},`;
  const unlisten = await db.listen(NOTIFY_CHANNEL, (payload) => {
    // Its own notifications come back: dropped before parsing.
    if (payload.startsWith(mine)) return;
    const env = parse(payload) as { f?: unknown; x?: unknown } | undefined;
    if (!env || typeof env.f !== 'string' || env.f === id || !Array.isArray(env.x)) return;
    for (const item of env.x as Item[]) {
      if (!item || typeof item !== 'object') continue;
      if ('c' in item) {
        const m = joiner.add(env.f, item);
        if (m) h.deliver(env.f, m);
      } else h.deliver(env.f, item);
    }
  });
  const flush = async () => {
    while (queue.length > 0 && !closed) {
      const batch = queue;
      queue = [];
      const payloads = packNotifications(id, () => ++seq, batch);
      try {
        await db.query('select pg_notify($1, p) from unnest($2::text[]) as p', [NOTIFY_CHANNEL, payloads]);
        h.up();
      } catch (err) {
        h.down((err as Error).message);
      }
    }
    flushing = null;
  };
  return {
    kind: 'postgres',
    id,
    up: () => !h.isDown(),
    publish(m) {
      if (closed) return;
      if (queue.length >= MAX_QUEUED) {
        if (dropped++ % 1000 === 0)
          log.warn({ dropped }, 'realtime: the PostgreSQL bus is behind; messages to other instances were dropped');
        return;
      }
      queue.push(m);
      flushing ??= new Promise<void>((r) => setImmediate(r)).then(flush);
    },
    onMessage: (fn) => void h.handlers.push(fn),
    onReconnect: (fn) => void h.reconnects.push(fn),
    async close() {
      await flushing;
      closed = true;
      await unlisten().catch(() => undefined);
    },
  };
}
