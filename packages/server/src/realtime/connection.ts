/**
 * One client's WebSocket (docs/realtime.md): its messages handled one at a time in the
 * order sent, its principal (the apikey's, then each `auth` message's token), its subscriptions,
 * and what ends deliveries: an expired token pauses them until a fresh one comes, a session that
 * ends (sign-out, revocation, a ban) closes the connection, and a client too slow to take what
 * it is sent is dropped rather than buffered without bound; it resumes with `since`.
 *
 * What a client sends is bounded too: messages waiting to be handled (socket paused past
 * MAX_WAITING_MESSAGES / MAX_WAITING_BYTES), subscribes per second (a token bucket), the
 * subscriptions of its IP over all its connections (`REALTIME_MAX_SUBSCRIPTIONS_PER_IP`), and how
 * far back `since` may ask (`REALTIME_MAX_REPLAY`, else `resume_gap`).
 */
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import type { Db } from '../db/index.js';
import { ApiError, type Principal, type PrincipalResolver } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import type { SchemaCache } from '../rest/index.js';
import { type CompiledFilter, compileFilter } from './filter.js';
import type { Hub, Subscriber, Subscription } from './hub.js';
import type { ChangeLog } from '../changes/index.js';
import type { TableAccess } from './policies.js';
import { type ClientMessage, errorMessage, messageId, parseClientMessage } from './protocol.js';

/** Close codes: the session of the token ended; the client did not take its messages in time. */
export const CLOSE_SESSION_ENDED = 4001;
export const CLOSE_TOO_SLOW = 4008;

/**
 * Messages received and not yet handled, at most (count, and their bytes). Past either, the
 * socket stops being read until half of them are handled. Pausing, not closing (1008): a client
 * that resubscribes everything at once after a reconnect (the SDK sends up to
 * REALTIME_MAX_SUBSCRIPTIONS messages in one burst) is slowed, not punished; TCP carries the
 * back-pressure to the sender, so what the server holds for one connection is these bounds plus
 * the kernel's socket buffers, however fast it sends (review round 3, R5).
 */
export const MAX_WAITING_MESSAGES = 16;
export const MAX_WAITING_BYTES = 64 * 1024;
/**
 * `subscribe` messages per connection: a bucket of REALTIME_MAX_SUBSCRIPTIONS tokens (at least
 * SUBSCRIBE_BURST), refilled at SUBSCRIBE_PER_SECOND; an empty bucket answers `rate_limited`.
 */
export const SUBSCRIBE_BURST = 100;
export const SUBSCRIBE_PER_SECOND = 10;

export interface ConnectionDeps {
  db: Db;
  hub: Hub;
  log: ChangeLog;
  schema: SchemaCache;
  resolve: PrincipalResolver;
  access(table: string): Promise<TableAccess | null>;
  isEnabled(table: string): Promise<boolean>;
  clock: Clock;
  logger: Logger;
  maxSubscriptions: number;
  maxBufferedBytes: number;
  /** Subscriptions per client IP over all its connections (REALTIME_MAX_SUBSCRIPTIONS_PER_IP). */
  maxSubscriptionsPerIp: number;
  /** The most changes a `since` may replay (REALTIME_MAX_REPLAY); further back is resume_gap. */
  maxReplay: number;
  onDropped(): void;
}

function rawBytes(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
}

export class Connection implements Subscriber {
  principal: Principal;
  /** Missed heartbeats in a row. */
  missed = 0;
  private token: string | null = null;
  private expiredNow = false;
  private expiryTimer: NodeJS.Timeout | null = null;
  private readonly subs = new Map<string, Subscription>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  /** Messages received and not handled yet, and their bytes (R5). */
  private waiting = 0;
  private waitingBytes = 0;
  private readPaused = false;
  /** Subscribe tokens left, and when they were counted. */
  private tokens: number;
  private tokensAt: number;

  constructor(
    readonly socket: WebSocket,
    private readonly apikey: string | undefined,
    private readonly start: Principal,
    private readonly d: ConnectionDeps,
    /** The access token of an `Authorization` header at connect (clients that can set headers). */
    token: string | null = null,
    /** The client's address (per-IP limits: subscriptions, replays). */
    readonly ip = '',
  ) {
    this.principal = start;
    this.token = start.role === 'authenticated' ? token : null;
    this.tokens = Math.max(SUBSCRIBE_BURST, d.maxSubscriptions);
    this.tokensAt = d.clock.now();
    this.watchExpiry();
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        this.sendError(new ApiError('invalid_request', 'Send messages as text frames of JSON.'));
        return;
      }
      const text = data.toString();
      const bytes = rawBytes(data);
      this.waiting++;
      this.waitingBytes += bytes;
      if (!this.readPaused && (this.waiting >= MAX_WAITING_MESSAGES || this.waitingBytes >= MAX_WAITING_BYTES)) {
        this.readPaused = true;
        socket.pause();
      }
      // In the order sent: `auth` then `subscribe` need no wait between them.
      this.queue = this.queue
        .then(() => this.handle(text))
        .catch(() => undefined)
        .then(() => {
          this.waiting--;
          this.waitingBytes -= bytes;
          if (this.readPaused && this.waiting <= MAX_WAITING_MESSAGES / 2 && this.waitingBytes <= MAX_WAITING_BYTES / 2) {
            this.readPaused = false;
            if (!this.closed) socket.resume();
          }
        });
    });
    socket.on('pong', () => {
      this.missed = 0;
    });
  }

  /** The token expired: deliveries wait (cursors stay) until a fresh one arrives. */
  get paused(): boolean {
    if (!this.expiredNow && this.expiresAt() !== null && (this.expiresAt() as number) <= this.d.clock.now()) this.expire();
    return this.expiredNow;
  }

  /** Subscriptions now held. */
  get size(): number {
    return this.subs.size;
  }

  send(text: string | Buffer): boolean {
    const s = this.socket;
    if (this.closed || s.readyState !== s.OPEN) return false;
    if (s.bufferedAmount + text.length > this.d.maxBufferedBytes) {
      // Never buffered without bound: the client reconnects and resumes from its last seq.
      this.d.logger.info({ buffered: s.bufferedAmount }, 'realtime: a client too slow to take its changes was dropped');
      this.d.onDropped();
      this.close(CLOSE_TOO_SLOW, 'too slow');
      s.terminate();
      return false;
    }
    // A Buffer is UTF-8 text encoded once for many subscribers: sent as a text frame.
    if (typeof text === 'string') s.send(text);
    else s.send(text, { binary: false });
    return true;
  }

  async flushed(): Promise<void> {
    const low = this.d.maxBufferedBytes / 4;
    while (!this.closed && this.socket.bufferedAmount > low) await new Promise((r) => setTimeout(r, 10));
  }

  /** Re-checks the session behind the token (sign-out, revocation, ban); ends the connection when it ended. */
  async checkSession(): Promise<void> {
    const token = this.token;
    if (this.closed || token === null || this.principal.role !== 'authenticated') return;
    try {
      await this.d.resolve(this.apikey, `Bearer ${token}`);
    } catch (err) {
      // Only for the token still in use: an auth message may have replaced it meanwhile.
      if (err instanceof ApiError && err.code === 'invalid_token' && this.token === token) {
        this.sendError(new ApiError('invalid_token', 'The session of this access token has ended (signed out, revoked or banned).'));
        this.close(CLOSE_SESSION_ENDED, 'session ended');
      }
      // The user verified a second factor since: this aal1 token no longer reads anything.
      if (err instanceof ApiError && err.code === 'mfa_required' && this.token === token) {
        this.sendError(err);
        this.close(CLOSE_SESSION_ENDED, 'mfa required');
      }
      // token_expired is the expiry timer's; the database being down is retried next time.
    }
  }

  /** Forgets the connection's subscriptions; the socket closes with `code` unless it did. */
  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    this.closed = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    for (const sub of this.subs.values()) this.d.hub.remove(sub);
    this.subs.clear();
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(code, reason);
  }

  /** Ends a subscription from the server's side (its table's capture switched off, access revoked). */
  end(sub: Subscription, err: ApiError): void {
    if (this.subs.get(sub.id) !== sub) return;
    this.subs.delete(sub.id);
    this.d.hub.remove(sub);
    this.sendError(err, sub.id);
  }

  private expiresAt(): number | null {
    const exp = this.principal.role === 'authenticated' ? this.principal.payload.exp : undefined;
    return typeof exp === 'number' ? exp * 1000 : null;
  }

  private expire(): void {
    this.expiredNow = true;
    this.sendError(new ApiError('token_expired', 'The access token expired: deliveries wait until an auth message brings a fresh one.'));
  }

  private watchExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    const at = this.expiresAt();
    if (at === null) return;
    const ms = at - this.d.clock.now();
    // Long waits are re-armed (setTimeout's limit); a paused connection needs no timer.
    this.expiryTimer = setTimeout(
      () => {
        if (this.expiresAt() !== at) return;
        if (this.d.clock.now() >= at) void this.paused;
        else this.watchExpiry();
      },
      Math.max(0, Math.min(ms, 2 ** 31 - 1)),
    );
    this.expiryTimer.unref();
  }

  private sendError(err: ApiError, id?: string): void {
    this.send(errorMessage(err, id));
  }

  private async handle(text: string): Promise<void> {
    if (this.closed) return;
    let msg: ClientMessage | undefined;
    try {
      msg = parseClientMessage(text);
      switch (msg.type) {
        case 'auth':
          return await this.auth(msg.accessToken);
        case 'subscribe':
          return await this.subscribe(msg);
        case 'unsubscribe': {
          const sub = this.subs.get(msg.id);
          if (sub) {
            this.subs.delete(msg.id);
            this.d.hub.remove(sub);
          }
          this.send(`{"type":"unsubscribed","id":${JSON.stringify(msg.id)}}`);
          return;
        }
        case 'ping':
          this.send('{"type":"pong"}');
          return;
      }
    } catch (err) {
      const id = msg && 'id' in msg ? msg.id : messageIdOf(text);
      if (err instanceof ApiError) this.sendError(err, id);
      else {
        const dbDown = (err as Error)?.name === 'DbUnavailableError';
        if (!dbDown) this.d.logger.error({ err }, 'realtime: a message failed');
        this.sendError(
          dbDown
            ? new ApiError('database_unavailable', 'The database is unavailable; try again shortly.')
            : new ApiError('internal_error', 'Something went wrong on our side.'),
          id,
        );
      }
    }
  }

  private async auth(token: string | null): Promise<void> {
    const next = token === null ? this.start : await this.d.resolve(this.apikey, `Bearer ${token}`);
    // A new role: each subscription's subscribe-time checks again, under it (review round 3, R7).
    // Decided before the principal changes, so no change is ever delivered under the new role
    // through a filter it may not use; if the rules cannot be read, the auth fails and nothing changes.
    const lost: Subscription[] = [];
    if (next.role !== this.principal.role) {
      for (const sub of this.subs.values()) {
        const access = await this.d.access(sub.table);
        const cols = access?.roles[next.role].columns;
        if (!cols || cols.size === 0 || sub.filter.columns.some((c) => !cols.has(c))) lost.push(sub);
      }
    }
    if (this.closed) return;
    const resumed = this.expiredNow;
    for (const sub of lost) {
      this.end(
        sub,
        new ApiError(
          'permission_denied',
          `The role ${next.role} may not read "${sub.table}" or a column this subscription filters on: it ended.`,
          { table: sub.table },
        ),
      );
    }
    this.principal = next;
    this.token = next.role === 'authenticated' ? token : null;
    this.expiredNow = false;
    this.watchExpiry();
    if (resumed && !this.paused) this.d.hub.resume(this.subs.values());
  }

  private async subscribe(m: Extract<ClientMessage, { type: 'subscribe' }>): Promise<void> {
    this.takeSubscribeToken();
    if (this.subs.has(m.id)) {
      throw new ApiError('invalid_parameter', `The subscription id "${m.id}" is in use on this connection; choose another.`, {
        field: 'id',
      });
    }
    if (this.subs.size >= this.d.maxSubscriptions) {
      throw new ApiError(
        'too_many_subscriptions',
        `A connection holds at most ${this.d.maxSubscriptions} subscriptions; unsubscribe first.`,
      );
    }
    this.checkIpSubscriptions();
    if (this.paused) throw new ApiError('token_expired', 'The access token expired: send a fresh one in an auth message first.');
    const info = this.d.schema.get().tables.get(m.table);
    if (info?.kind !== 'table') {
      throw new ApiError('table_not_found', `No table "${m.table}" in the public schema.`, { table: m.table });
    }
    if (!(await this.d.isEnabled(m.table))) {
      throw new ApiError('realtime_disabled', `Changes of "${m.table}" are not captured; run select realtime.enable('${m.table}') first.`, {
        table: m.table,
      });
    }
    const access = await this.d.access(m.table);
    if (!access) throw new ApiError('table_not_found', `No table "${m.table}" in the public schema.`, { table: m.table });
    const role = access.roles[this.principal.role];
    if (role.columns.size === 0) {
      throw new ApiError('permission_denied', `The role ${this.principal.role} may not read "${m.table}".`, { table: m.table });
    }
    // The filter sees only the role's columns: a hidden column and a missing one are refused
    // alike, before any value is cast to a hidden column's type (no column-name oracle, I4).
    const hiddenAnswer = (column: string) =>
      new ApiError('permission_denied', `The role ${this.principal.role} may not read the column "${column}" it filters on.`, { column });
    const visible = role.allColumns ? info : { ...info, columns: new Map([...info.columns].filter(([c]) => role.columns.has(c))) };
    let filter: CompiledFilter;
    try {
      filter = await compileFilter(this.d.db, visible, m.filter);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'column_not_found' && this.principal.role !== 'service') {
        const column = (err.details as { column?: unknown } | undefined)?.column;
        throw hiddenAnswer(typeof column === 'string' ? column : '?');
      }
      throw err;
    }
    const hidden = filter.columns.find((c) => !role.columns.has(c));
    if (hidden !== undefined) throw hiddenAnswer(hidden);
    if (m.since !== null) {
      const b = await this.d.log.bounds();
      if (m.since >= b.trimmedUpto && m.since < b.lastSeq && b.lastSeq - m.since > this.d.maxReplay) {
        // Further back than a replay may go (R4): the client refetches, then subscribes without it.
        throw new ApiError(
          'resume_gap',
          `${b.lastSeq - m.since} changes followed ${m.since}, more than a resume replays (${this.d.maxReplay}); refetch, then subscribe without "since".`,
          { oldest_seq: b.trimmedUpto, latest_seq: b.lastSeq, max_replay: this.d.maxReplay },
        );
      }
      if (m.since < b.trimmedUpto || m.since > b.lastSeq) {
        throw new ApiError(
          'resume_gap',
          m.since > b.lastSeq
            ? `"since" (${m.since}) is past the newest change (${b.lastSeq}): it is not a seq of this project; refetch, then subscribe without it.`
            : `Changes after ${m.since} are no longer kept (the oldest kept follows ${b.trimmedUpto}); refetch, then subscribe without "since".`,
          { oldest_seq: b.trimmedUpto, latest_seq: b.lastSeq },
        );
      }
    }
    if (this.closed || this.subs.has(m.id)) return;
    // Again, now that no await is left before it is counted (other connections of the IP subscribed meanwhile).
    this.checkIpSubscriptions();
    const conn = this;
    const sub: Subscription = {
      id: m.id,
      table: m.table,
      events: m.events,
      filter,
      conn,
      cursor: 0,
      replaying: false,
      announce: false,
      closed: false,
      replayRunning: false,
      get principal() {
        return conn.principal;
      },
    };
    this.subs.set(m.id, sub);
    this.d.hub.add(sub, m.since);
  }

  /** One token of the subscribe bucket, or `rate_limited`. */
  private takeSubscribeToken(): void {
    const burst = Math.max(SUBSCRIBE_BURST, this.d.maxSubscriptions);
    const now = this.d.clock.now();
    this.tokens = Math.min(burst, this.tokens + ((now - this.tokensAt) / 1000) * SUBSCRIBE_PER_SECOND);
    this.tokensAt = now;
    if (this.tokens < 1) {
      const retryAfterMs = Math.ceil(((1 - this.tokens) / SUBSCRIBE_PER_SECOND) * 1000);
      throw new ApiError(
        'rate_limited',
        `Too many subscribe messages on this connection: at most ${SUBSCRIBE_PER_SECOND} a second after a burst of ${burst}; retry in ${retryAfterMs} ms.`,
        { retry_after_ms: retryAfterMs },
      );
    }
    this.tokens -= 1;
  }

  private checkIpSubscriptions(): void {
    if (this.d.hub.subscriptionsOfIp(this.ip) >= this.d.maxSubscriptionsPerIp) {
      throw new ApiError(
        'too_many_subscriptions',
        `A client address holds at most ${this.d.maxSubscriptionsPerIp} subscriptions over all its connections; unsubscribe first.`,
      );
    }
  }

  /** Every subscription (the area's housekeeping: disabled tables, changed access). */
  subscriptions(): Subscription[] {
    return [...this.subs.values()];
  }
}

function messageIdOf(text: string): string | undefined {
  try {
    return messageId(JSON.parse(text));
  } catch {
    return undefined;
  }
}
