/**
 * Channels (issue 37): named topics whose members send each other messages (`broadcast`) and
 * say who is there (`presence`), on every instance of the project. One table of topics for every wire: Supabase's
 * Phoenix face (supabase/realtime) joins its clients' sessions here, and a broadcast over HTTP
 * (`POST /api/v1/realtime/broadcast`, `POST /realtime/v1/api/broadcast`) reaches the same members.
 * A topic is the channel's name (Supabase's `realtime:room` is `room` here).
 *
 * What a member is sent is the hub's neutral message (ChannelMessage); each wire writes it in
 * its own frames. Limits are realtime's: channels count with subscriptions per connection
 * (`REALTIME_MAX_SUBSCRIPTIONS`) and per client address (`REALTIME_MAX_SUBSCRIPTIONS_PER_IP`),
 * checked by the session that joins (session.ts).
 *
 * Across instances (docs/realtime.md): each message and presence change is delivered here to
 * this instance's members, then published on the bus (bus.ts: Redis, PostgreSQL NOTIFY, or none
 * on PGlite); the other instances deliver it to theirs. The instance's own copy coming back is
 * dropped by the bus, so each member gets each message once and `self` holds. Presence of other
 * instances is held per (topic, instance) as a lease: each instance republishes its presence on
 * every topic every PRESENCE_REPUBLISH of the heartbeat, and a lease not renewed within
 * PRESENCE_LEASE of it leaves (an instance killed, or cut off), so a dead instance's clients
 * leave everywhere within REALTIME_HEARTBEAT_SECONDS.
 *
 * Presence changes of one tick go out together at its end (flush): one diff per topic to each
 * member and one on the bus, however many members tracked, untracked or left in it. One diff per
 * change made a burst of n joins cost n diffs to up to n members each (n² messages: 1,000 clients
 * joining one channel took 8.5 s to converge in bench/channels.mjs); a member joining meanwhile is
 * answered the state as of the last flush, to which the coming diff applies exactly.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, type Principal } from '../http/index.js';
import { type Bus, type BusMessage, noBus } from './bus.js';
import type { ChannelRights } from './channel-rights.js';

/** Presence: each key with the metas tracked under it (Phoenix's shape). */
export type PresenceState = Record<string, { metas: Array<Record<string, unknown>> }>;

export type ChannelMessage =
  | { kind: 'broadcast'; event: string; payload: unknown }
  | { kind: 'presence_diff'; joins: PresenceState; leaves: PresenceState };

/** One session's membership of a topic. */
export interface ChannelMember {
  readonly topic: string;
  /** The client's address: members count per address (session.ts). */
  readonly ip: string;
  /** The presence key it tracks under. */
  readonly presenceKey: string;
  /** It receives its own broadcasts. */
  readonly self: boolean;
  /**
   * A private channel (its rights decided by policies on realtime.messages, channel-rights.ts):
   * its members are apart from a public channel of the same name.
   */
  readonly private?: boolean;
  /**
   * May send (broadcast, presence) on its private channel, as the policies said at the join or at
   * the last new token (session.ts decides it again then); a public channel's member always may.
   */
  write?: boolean;
  /** Its tracked presence (null: not tracked); the hub sets it. */
  meta: Record<string, unknown> | null;
  /** Writes a message on the member's wire. */
  deliver(message: ChannelMessage): void;
}

/** A message sent from the server's side (HTTP): to every member of the channel. */
export interface ServerBroadcast {
  channel: string;
  event: string;
  payload: unknown;
  /** For a private channel: sent when the caller's policies on realtime.messages let it insert. */
  private?: boolean;
}

/** A topic's key in the table: a private channel and a public one of the same name never meet. */
const keyOf = (topic: string, priv: boolean | undefined) => `${priv ? 'p' : 'o'}:${topic}`;

/** Presence of other instances is republished every heartbeat/4 and leaves when unrenewed for 3/4 of it. */
export const PRESENCE_REPUBLISH = 1 / 4;
export const PRESENCE_LEASE = 3 / 4;

export interface ChannelsOptions {
  /** The other instances (bus.ts); none by default. */
  bus?: Bus;
  /** REALTIME_HEARTBEAT_SECONDS in ms: the lease of another instance's presence (default 25 s). */
  heartbeatMs?: number;
  /** Time for leases (tests); Date.now by default. */
  now?: () => number;
}

/** One instance's presence on a topic, as it last told it, and when. */
interface Lease {
  state: PresenceState;
  seen: number;
}

/** A topic's presence changes not sent yet, by phx_ref: [presence key, meta]. */
interface Pending {
  joins: Map<unknown, [string, Meta]>;
  leaves: Map<unknown, [string, Meta]>;
}

export class Channels {
  private readonly byTopic = new Map<string, Set<ChannelMember>>();
  private readonly perIp = new Map<string, number>();
  /** Other instances' presence: topic key → instance id → lease. */
  private readonly remote = new Map<string, Map<string, Lease>>();
  /** Topics with tracked presence on this instance (what is republished). */
  private readonly tracked = new Map<string, number>();
  readonly bus: Bus;
  private readonly heartbeatMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private syncing = false;
  /** This tick's presence changes, by topic key, and the flush that sends them. */
  private readonly pending = new Map<string, Pending>();
  private flushing: NodeJS.Immediate | null = null;

  /** `rights`: what the caller may do on a private channel (channel-rights.ts, bound to the database). */
  constructor(
    readonly rights: (who: Principal, topic: string) => Promise<ChannelRights> = denyPrivate,
    o: ChannelsOptions = {},
  ) {
    this.bus = o.bus ?? noBus();
    this.heartbeatMs = o.heartbeatMs ?? 25_000;
    this.now = o.now ?? Date.now;
    this.bus.onMessage((from, m) => this.received(from, m));
    // Started, or back after an outage: ours again, and theirs asked for.
    this.bus.onReconnect(() => {
      this.republish();
      this.bus.publish({ t: 'sync' });
    });
    if (this.bus.kind !== 'none') {
      this.timer = setInterval(() => this.tick(), Math.max(1, Math.floor(this.heartbeatMs * PRESENCE_REPUBLISH)));
      this.timer.unref();
    }
  }

  /** Stops republishing and closes the bus (this tick's presence changes sent first). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
    await this.bus.close();
  }

  /** Members held by the sessions of a client address. */
  membersOfIp(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  /** Members on this instance (metrics). */
  count(): number {
    let n = 0;
    for (const s of this.byTopic.values()) n += s.size;
    return n;
  }

  /**
   * Adds a member; answers the topic's presence state as it joins.
   * @example const state = channels.join(member); // { alice: { metas: [{ status: 'online', phx_ref: '…' }] } }
   */
  join(m: ChannelMember): PresenceState {
    const key = keyOf(m.topic, m.private);
    let set = this.byTopic.get(key);
    if (!set) this.byTopic.set(key, (set = new Set()));
    if (!set.has(m)) {
      set.add(m);
      this.perIp.set(m.ip, this.membersOfIp(m.ip) + 1);
    }
    return this.state(m.topic, m.private);
  }

  /** Removes a member; its presence leaves the others' state. */
  leave(m: ChannelMember): void {
    const key = keyOf(m.topic, m.private);
    const set = this.byTopic.get(key);
    if (!set?.delete(m)) return;
    const n = this.membersOfIp(m.ip) - 1;
    if (n > 0) this.perIp.set(m.ip, n);
    else this.perIp.delete(m.ip);
    if (set.size === 0) this.byTopic.delete(key);
    if (m.meta) {
      this.tracking(key, -1);
      this.diff(key, null, [m.presenceKey, m.meta]);
    }
    m.meta = null;
  }

  /**
   * Sends a message to a topic's members (not back to `from` unless it asked for `self`);
   * answers how many got it. `from` null: sent by the server (HTTP).
   * @example channels.broadcast('room', null, 'msg', { text: 'hi' })
   */
  broadcast(topic: string, from: ChannelMember | null, event: string, payload: unknown, priv = from?.private): number {
    const key = keyOf(topic, priv);
    const n = this.deliver(key, from, event, payload);
    // Bytes travel as base64 and are bytes again on arrival.
    if (Buffer.isBuffer(payload)) this.bus.publish({ t: 'broadcast', k: key, event, payload: payload.toString('base64'), bin: true });
    else this.bus.publish({ t: 'broadcast', k: key, event, payload });
    return n;
  }

  /** This instance's members of a topic get a message (`from` not, unless it asked for `self`). */
  private deliver(key: string, from: ChannelMember | null, event: string, payload: unknown): number {
    const message: ChannelMessage = { kind: 'broadcast', event, payload };
    let n = 0;
    for (const m of this.byTopic.get(key) ?? []) {
      if (m === from && !m.self) continue;
      m.deliver(message);
      n++;
    }
    return n;
  }

  /**
   * Messages sent over HTTP (`POST /api/v1/realtime/broadcast`, Supabase's
   * `POST /realtime/v1/api/broadcast`), all or none: a private channel needs the caller's right
   * to send there (policies on realtime.messages), else 403 `forbidden` and nothing is sent.
   * Answers the members reached.
   * @example await channels.send(principal, [{ channel: 'room', event: 'msg', payload: { text: 'hi' } }])
   */
  async send(principal: Principal, messages: ServerBroadcast[]): Promise<number> {
    const decided = new Map<string, boolean>();
    for (const m of messages) {
      if (m.private !== true || decided.has(m.channel)) continue;
      const { write } = await this.rights(principal, m.channel);
      decided.set(m.channel, write);
      if (!write)
        throw new ApiError(
          'forbidden',
          `You may not send on the private channel ${m.channel}: no policy on realtime.messages lets you insert.`,
        );
    }
    let n = 0;
    for (const m of messages) n += this.broadcast(m.channel, null, m.event, m.payload, m.private === true);
    return n;
  }

  /** Tracks (or replaces) a member's presence; every member of the topic gets the diff. */
  track(m: ChannelMember, fields: Record<string, unknown>): void {
    const before = m.meta;
    m.meta = { ...fields, phx_ref: randomBytes(10).toString('hex') };
    const key = keyOf(m.topic, m.private);
    if (!before) this.tracking(key, 1);
    this.diff(key, [m.presenceKey, m.meta], before ? [m.presenceKey, before] : null);
  }

  untrack(m: ChannelMember): void {
    const key = keyOf(m.topic, m.private);
    if (m.meta) {
      this.tracking(key, -1);
      this.diff(key, null, [m.presenceKey, m.meta]);
    }
    m.meta = null;
  }

  /**
   * Who is present on a topic (a private one apart), on every instance, as the members were last
   * told: this tick's changes are in the diff that follows (flush).
   */
  state(topic: string, priv?: boolean): PresenceState {
    const key = keyOf(topic, priv);
    const state = this.localState(key);
    for (const lease of this.remote.get(key)?.values() ?? []) {
      for (const [k, { metas }] of Object.entries(lease.state)) (state[k] ??= { metas: [] }).metas.push(...metas);
    }
    return state;
  }

  /** Topics on which other instances have presence now (tests, metrics). */
  remoteTopics(): number {
    return this.remote.size;
  }

  /** This instance's presence on a topic as last flushed: without this tick's joins, with its leaves. */
  private localState(key: string): PresenceState {
    // No prototype: a presence key "__proto__" is a key like any other.
    const state: PresenceState = Object.create(null);
    const p = this.pending.get(key);
    for (const other of this.byTopic.get(key) ?? []) {
      if (other.meta && !p?.joins.has(refOf(other.meta))) (state[other.presenceKey] ??= { metas: [] }).metas.push(other.meta);
    }
    for (const [k, meta] of p?.leaves.values() ?? []) (state[k] ??= { metas: [] }).metas.push(meta);
    return state;
  }

  private tracking(key: string, n: number): void {
    const c = (this.tracked.get(key) ?? 0) + n;
    if (c > 0) this.tracked.set(key, c);
    else this.tracked.delete(key);
  }

  /**
   * A presence change of this instance, kept for the end of the tick (flush). A meta that joins and
   * leaves within the tick was never told: it cancels out.
   */
  private diff(key: string, join: [string, Meta] | null, leave: [string, Meta] | null): void {
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { joins: new Map(), leaves: new Map() }));
    if (leave) {
      const ref = refOf(leave[1]);
      if (!p.joins.delete(ref)) p.leaves.set(ref, leave);
    }
    if (join) p.joins.set(refOf(join[1]), join);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /**
   * Sends this tick's presence changes: per topic, one diff to this instance's members, then one to
   * the other instances. Runs by itself at the end of each tick that made changes.
   * @example channels.track(alice, { status: 'online' }); channels.flush(); // the members have the diff
   */
  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    if (this.pending.size === 0) return;
    // Taken whole first: a member dropped while its diff is written (too slow) leaves in the next one.
    const pending = [...this.pending];
    this.pending.clear();
    for (const [key, p] of pending) {
      if (p.joins.size === 0 && p.leaves.size === 0) continue;
      const joins = grouped(p.joins.values());
      const leaves = grouped(p.leaves.values());
      this.show(key, joins, leaves);
      this.bus.publish({ t: 'diff', k: key, joins, leaves });
    }
  }

  private show(key: string, joins: PresenceState, leaves: PresenceState): void {
    const message: ChannelMessage = { kind: 'presence_diff', joins, leaves };
    for (const m of this.byTopic.get(key) ?? []) m.deliver(message);
  }

  /** A message of another instance. */
  private received(from: string, m: BusMessage): void {
    switch (m.t) {
      case 'broadcast':
        this.deliver(m.k, null, m.event, m.bin && typeof m.payload === 'string' ? Buffer.from(m.payload, 'base64') : m.payload);
        return;
      case 'diff': {
        // In place: linear in the diff and the metas of the keys it names, not the topic's state.
        const lease = this.lease(m.k, from);
        const next = lease.state;
        for (const [k, { metas }] of Object.entries(m.leaves ?? {})) removeMetas(next, k, metas);
        for (const [k, { metas }] of Object.entries(m.joins ?? {})) {
          removeMetas(next, k, metas);
          (next[k] ??= { metas: [] }).metas.push(...metas);
        }
        this.renew(m.k, from, lease, next);
        this.show(m.k, m.joins ?? {}, m.leaves ?? {});
        return;
      }
      case 'state': {
        // Its whole presence on the topic: what this instance missed (a lost diff) shows as a diff.
        const lease = this.lease(m.k, from);
        const { joins, leaves } = stateDiff(lease.state, m.state ?? {});
        this.renew(m.k, from, lease, m.state ?? {});
        if (Object.keys(joins).length > 0 || Object.keys(leaves).length > 0) this.show(m.k, joins, leaves);
        return;
      }
      case 'sync':
        // Answered once per tick however many instances ask.
        if (this.syncing) return;
        this.syncing = true;
        setImmediate(() => {
          this.syncing = false;
          this.republish();
        });
        return;
    }
  }

  private lease(key: string, from: string): Lease {
    return this.remote.get(key)?.get(from) ?? { state: Object.create(null) as PresenceState, seen: this.now() };
  }

  private renew(key: string, from: string, lease: Lease, state: PresenceState): void {
    let byInstance = this.remote.get(key);
    if (Object.keys(state).length === 0) {
      byInstance?.delete(from);
      if (byInstance?.size === 0) this.remote.delete(key);
      return;
    }
    if (!byInstance) this.remote.set(key, (byInstance = new Map()));
    lease.state = state;
    lease.seen = this.now();
    byInstance.set(from, lease);
  }

  /** This instance's presence on each topic it tracks on, to the others (its lease renewed). */
  private republish(): void {
    this.flush();
    for (const key of this.tracked.keys()) this.bus.publish({ t: 'state', k: key, state: this.localState(key) });
  }

  /** Every heartbeat/4: ours republished; theirs not renewed for 3/4 of the heartbeat leave. */
  tick(): void {
    this.republish();
    const oldest = this.now() - this.heartbeatMs * PRESENCE_LEASE;
    for (const [key, byInstance] of this.remote) {
      for (const [from, lease] of byInstance) {
        if (lease.seen >= oldest) continue;
        byInstance.delete(from);
        this.show(key, {}, lease.state);
      }
      if (byInstance.size === 0) this.remote.delete(key);
    }
  }
}

type Meta = Record<string, unknown>;
const refOf = (meta: Meta) => meta.phx_ref;

/** [key, meta] pairs as a PresenceState. */
function grouped(entries: Iterable<[string, Meta]>): PresenceState {
  const s: PresenceState = Object.create(null);
  for (const [k, meta] of entries) (s[k] ??= { metas: [] }).metas.push(meta);
  return s;
}

/** Removes from `s[key]` the metas whose phx_ref is among `metas`'. */
function removeMetas(s: PresenceState, key: string, metas: Meta[]): void {
  const entry = s[key];
  if (!entry) return;
  const refs = new Set(metas.map(refOf));
  entry.metas = entry.metas.filter((x) => !refs.has(refOf(x)));
  if (entry.metas.length === 0) delete s[key];
}

/** What joined and what left from `before` to `after`, by phx_ref (linear in both). */
export function stateDiff(before: PresenceState, after: PresenceState): { joins: PresenceState; leaves: PresenceState } {
  const refs = (s: PresenceState) => {
    const set = new Set<unknown>();
    for (const { metas } of Object.values(s)) for (const m of metas) set.add(refOf(m));
    return set;
  };
  const had = refs(before);
  const has = refs(after);
  const pick = (s: PresenceState, keep: (ref: unknown) => boolean) => {
    const out: PresenceState = {};
    for (const [k, { metas }] of Object.entries(s)) {
      const kept = metas.filter((m) => keep(refOf(m)));
      if (kept.length > 0) out[k] = { metas: kept };
    }
    return out;
  };
  return { joins: pick(after, (r) => !had.has(r)), leaves: pick(before, (r) => !has.has(r)) };
}

/** Without a database (unit tests): no private channel for anyone but the secret key. */
async function denyPrivate(who: Principal): Promise<ChannelRights> {
  return who.role === 'service' ? { read: true, write: true } : { read: false, write: false };
}
