/**
 * One client of the change feed, whatever its wire (docs/realtime.md): its principal (the
 * apikey's, then each new access token's), its subscriptions, and what ends deliveries: an
 * expired token pauses them until a fresh one comes, a session that ends (sign-out, revocation,
 * a ban) ends the client. Plinth's own WebSocket (connection.ts) and Supabase's Phoenix face
 * (supabase/realtime) are each a Session with their own messages: the checks of a subscribe, of
 * a new token and of the client's limits live here once.
 *
 * Bounded here: subscribes per second (a token bucket), subscriptions per client and per client
 * address over all its clients (`REALTIME_MAX_SUBSCRIPTIONS_PER_IP`), and how far back `since`
 * may ask (`REALTIME_MAX_REPLAY`, else `resume_gap`).
 */
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { ApiError, type Principal, type PrincipalResolver } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import type { ColumnInfo, SchemaCache } from '../rest/index.js';
import { type CompiledFilter, compileFilter } from './filter.js';
import { type ChangeFormat, type Hub, PLINTH_FORMAT, type Subscriber, type Subscription } from './hub.js';
import type { ChangeLog } from '../changes/index.js';
import type { ChannelRights } from './channel-rights.js';
import type { ChannelMember, Channels, PresenceState } from './channels.js';
import type { TableAccess } from './policies.js';
import type { ChangeEvent } from './protocol.js';

/** Close codes: the session of the token ended; the client did not take its messages in time. */
export const CLOSE_SESSION_ENDED = 4001;
export const CLOSE_TOO_SLOW = 4008;

/**
 * `subscribe` messages per client: a bucket of REALTIME_MAX_SUBSCRIPTIONS tokens (at least
 * SUBSCRIBE_BURST), refilled at SUBSCRIBE_PER_SECOND; an empty bucket answers `rate_limited`.
 */
export const SUBSCRIBE_BURST = 100;
export const SUBSCRIBE_PER_SECOND = 10;
/**
 * Channel messages per client (broadcast, track, untrack): a bucket of BROADCAST_BURST refilled at
 * BROADCASTS_PER_SECOND; an empty bucket answers `rate_limited` (issue 37's rate per connection).
 */
export const BROADCAST_BURST = 100;
export const BROADCASTS_PER_SECOND = 100;

export interface SessionDeps {
  db: Db;
  hub: Hub;
  /** Broadcast and presence topics (channels.ts). */
  channels: Channels;
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

/** What a client asks to receive. */
export interface SubscribeRequest {
  id: string;
  table: string;
  events: ReadonlySet<ChangeEvent>;
  /** REST's filter grammar (`eq.list_id=7&neq.done=true`); a face translates its own into it. */
  filter: string | null;
  since: number | null;
  /** How its messages are written (Plinth's own by default). */
  format?: ChangeFormat;
}

export abstract class Session implements Subscriber {
  principal: Principal;
  private token: string | null = null;
  private expiredNow = false;
  private expiryTimer: NodeJS.Timeout | null = null;
  private readonly subs = new Map<string, Subscription>();
  /** Channels joined, by topic. */
  private readonly joined = new Map<string, ChannelMember>();
  protected closed = false;
  /** Subscribe messages, and channel messages, of this connection. */
  private readonly subscribeBucket: Bucket;
  private readonly sendsBucket: Bucket;

  constructor(
    private readonly apikey: string | undefined,
    private readonly start: Principal,
    protected readonly d: SessionDeps,
    /** The access token of an `Authorization` header at connect (clients that can set headers). */
    token: string | null = null,
    /** The client's address (per-IP limits: subscriptions, replays). */
    readonly ip = '',
  ) {
    this.principal = start;
    this.token = start.role === 'authenticated' ? token : null;
    const now = d.clock.now();
    this.subscribeBucket = new Bucket('subscribe messages', Math.max(SUBSCRIBE_BURST, d.maxSubscriptions), SUBSCRIBE_PER_SECOND, now);
    this.sendsBucket = new Bucket('channel messages', BROADCAST_BURST, BROADCASTS_PER_SECOND, now);
    this.watchExpiry();
  }

  /** Sends a message on the client's wire; false when the client was dropped (too slow, or gone). */
  abstract send(text: string | Buffer): boolean;
  abstract flushed(): Promise<void>;
  /** Tells the client of an error (of a subscription when `id` is given). */
  protected abstract report(err: ApiError, id?: string): void;
  /** Ends the client's wire (the subscriptions are already gone). */
  protected abstract shut(code: number, reason: string): void;
  /** Tells the client it was put out of a channel it had joined (already left: no more messages). */
  protected abstract channelLost(m: ChannelMember, err: ApiError): void;

  /** The token expired: deliveries wait (cursors stay) until a fresh one arrives. */
  get paused(): boolean {
    if (!this.expiredNow && this.expiresAt() !== null && (this.expiresAt() as number) <= this.d.clock.now()) this.expire();
    return this.expiredNow;
  }

  /** Subscriptions now held. */
  get size(): number {
    return this.subs.size;
  }

  /** Re-checks the session behind the token (sign-out, revocation, ban); ends the client when it ended. */
  async checkSession(): Promise<void> {
    const token = this.token;
    if (this.closed || token === null || this.principal.role !== 'authenticated') return;
    try {
      await this.d.resolve(this.apikey, `Bearer ${token}`);
    } catch (err) {
      // Only for the token still in use: a new token may have replaced it meanwhile.
      if (err instanceof ApiError && err.code === 'invalid_token' && this.token === token) {
        this.report(new ApiError('invalid_token', 'The session of this access token has ended (signed out, revoked or banned).'));
        this.close(CLOSE_SESSION_ENDED, 'session ended');
      }
      // The user verified a second factor since: this aal1 token no longer reads anything.
      if (err instanceof ApiError && err.code === 'mfa_required' && this.token === token) {
        this.report(err);
        this.close(CLOSE_SESSION_ENDED, 'mfa required');
      }
      // token_expired is the expiry timer's; the database being down is retried next time.
    }
  }

  /** Forgets the client's subscriptions and ends its wire with `code` unless it ended. */
  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    this.closed = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    for (const sub of this.subs.values()) this.d.hub.remove(sub);
    this.subs.clear();
    for (const m of this.joined.values()) this.d.channels.leave(m);
    this.joined.clear();
    this.shut(code, reason);
  }

  /** Ends a subscription from the server's side (its table's capture switched off, access revoked). */
  end(sub: Subscription, err: ApiError): void {
    if (this.subs.get(sub.id) !== sub) return;
    this.subs.delete(sub.id);
    this.d.hub.remove(sub);
    this.report(err, sub.id);
  }

  /** Ends a subscription the client asked to end (an unknown id is no error). */
  unsubscribe(id: string): void {
    const sub = this.subs.get(id);
    if (sub) {
      this.subs.delete(id);
      this.d.hub.remove(sub);
    }
  }

  private expiresAt(): number | null {
    const exp = this.principal.role === 'authenticated' ? this.principal.payload.exp : undefined;
    return typeof exp === 'number' ? exp * 1000 : null;
  }

  private expire(): void {
    this.expiredNow = true;
    this.report(new ApiError('token_expired', 'The access token expired: deliveries wait until a fresh one comes.'));
  }

  private watchExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    const at = this.expiresAt();
    if (at === null) return;
    const ms = at - this.d.clock.now();
    // Long waits are re-armed (setTimeout's limit); a paused client needs no timer.
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

  /**
   * Acts as the user of `token` from now on (null: back to the apikey's role). A new role checks
   * each subscription's subscribe-time rules again, under it (review round 3, R7).
   */
  async auth(token: string | null): Promise<void> {
    const next = token === null ? this.start : await this.d.resolve(this.apikey, `Bearer ${token}`);
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
    // Private channels: the new token's policies decide again (the same token's would say the same).
    const rights = new Map<ChannelMember, ChannelRights>();
    if (token !== this.token || next.role !== this.principal.role) {
      // Asked together: decided in one statement (channel-rights.ts, batchedRights), not one per channel.
      const privs = [...this.joined.values()].filter((m) => m.private);
      const decided = await Promise.all(privs.map((m) => this.d.channels.rights(next, m.topic)));
      for (const [i, m] of privs.entries()) rights.set(m, decided[i]);
    }
    if (this.closed) return;
    for (const [m, r] of rights) {
      if (this.joined.get(m.topic) !== m) continue;
      if (r.read) {
        m.write = r.write;
        continue;
      }
      this.leaveChannel(m.topic);
      this.channelLost(
        m,
        new ApiError('forbidden', `You may no longer read the private channel ${m.topic}: the new token's policies refuse it.`, {
          channel: m.topic,
        }),
      );
    }
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

  /** Checks a subscription (table, capture, access, filter, `since`) and hands it to the hub. */
  async subscribe(m: SubscribeRequest): Promise<Subscription | null> {
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
    if (this.paused) throw new ApiError('token_expired', 'The access token expired: send a fresh one first.');
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
    if (this.closed || this.subs.has(m.id)) return null;
    // Again, now that no await is left before it is counted (other connections of the IP subscribed meanwhile).
    this.checkIpSubscriptions();
    const conn = this;
    const columns: ColumnInfo[] = info.columnList.filter((c) => role.columns.has(c.name));
    const sub: Subscription = {
      id: m.id,
      table: m.table,
      events: m.events,
      filter,
      conn,
      columns,
      format: m.format ?? PLINTH_FORMAT,
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
    return sub;
  }

  /**
   * Joins a channel (an earlier membership of its topic is left first) under the limits of a
   * subscribe: the same bucket of subscribe messages, REALTIME_MAX_SUBSCRIPTIONS channels per
   * connection, and channels and subscriptions together per client address. Answers the
   * topic's presence state.
   */
  joinChannel(m: ChannelMember): PresenceState {
    this.leaveChannel(m.topic);
    this.takeSubscribeToken();
    if (this.closed) throw new ApiError('invalid_request', 'The connection is closed.');
    if (this.joined.size >= this.d.maxSubscriptions) {
      throw new ApiError('too_many_subscriptions', `A connection joins at most ${this.d.maxSubscriptions} channels; leave one first.`);
    }
    this.checkIpSubscriptions();
    this.joined.set(m.topic, m);
    return this.d.channels.join(m);
  }

  /** Leaves a channel (its presence leaves the others' state); an unknown topic is no error. */
  leaveChannel(topic: string): void {
    const m = this.joined.get(topic);
    if (!m) return;
    this.joined.delete(topic);
    this.d.channels.leave(m);
  }

  /** The membership of a topic, if joined. */
  channel(topic: string): ChannelMember | undefined {
    return this.joined.get(topic);
  }

  /** One token of the channel-message bucket (broadcast, track, untrack), or `rate_limited`. */
  takeBroadcastToken(): void {
    this.sendsBucket.take(this.d.clock.now());
  }

  /** One token of the subscribe bucket, or `rate_limited`. */
  private takeSubscribeToken(): void {
    this.subscribeBucket.take(this.d.clock.now());
  }

  private checkIpSubscriptions(): void {
    if (this.d.hub.subscriptionsOfIp(this.ip) + this.d.channels.membersOfIp(this.ip) >= this.d.maxSubscriptionsPerIp) {
      throw new ApiError(
        'too_many_subscriptions',
        `A client address holds at most ${this.d.maxSubscriptionsPerIp} subscriptions and channels over all its connections; unsubscribe first.`,
      );
    }
  }

  /** Every subscription (the area's housekeeping: disabled tables, changed access). */
  subscriptions(): Subscription[] {
    return [...this.subs.values()];
  }
}

/** A token bucket of one kind of message on one connection: `take` spends a token or answers `rate_limited`. */
class Bucket {
  private tokens: number;
  constructor(
    private readonly what: string,
    private readonly burst: number,
    private readonly perSecond: number,
    private at: number,
  ) {
    this.tokens = burst;
  }

  take(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.perSecond);
    this.at = now;
    if (this.tokens < 1) {
      const retryAfterMs = Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
      throw new ApiError(
        'rate_limited',
        `Too many ${this.what} on this connection: at most ${this.perSecond} a second after a burst of ${this.burst}; retry in ${retryAfterMs} ms.`,
        { retry_after_ms: retryAfterMs },
      );
    }
    this.tokens -= 1;
  }
}
