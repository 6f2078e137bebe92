/**
 * Channels (issue 37): named topics whose members send each other messages (`broadcast`) and
 * say who is there (`presence`), on this instance. One table of topics for every wire: Supabase's
 * Phoenix face (supabase/realtime) joins its clients' sessions here, and a broadcast over HTTP
 * (`POST /api/v1/realtime/broadcast`, `POST /realtime/v1/api/broadcast`) reaches the same members.
 * A topic is the channel's name (Supabase's `realtime:room` is `room` here).
 *
 * What a member is sent is the hub's neutral message (ChannelMessage); each wire writes it in
 * its own frames. Limits are realtime's: channels count with subscriptions per connection
 * (`REALTIME_MAX_SUBSCRIPTIONS`) and per client address (`REALTIME_MAX_SUBSCRIPTIONS_PER_IP`),
 * checked by the session that joins (session.ts).
 */
import { randomBytes } from 'node:crypto';
import { ApiError, type Principal } from '../http/index.js';
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

export class Channels {
  private readonly byTopic = new Map<string, Set<ChannelMember>>();
  private readonly perIp = new Map<string, number>();

  /** `rights`: what the caller may do on a private channel (channel-rights.ts, bound to the database). */
  constructor(readonly rights: (who: Principal, topic: string) => Promise<ChannelRights> = denyPrivate) {}

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
    if (m.meta) this.diff(key, {}, { [m.presenceKey]: { metas: [m.meta] } });
    m.meta = null;
  }

  /**
   * Sends a message to a topic's members (not back to `from` unless it asked for `self`);
   * answers how many got it. `from` null: sent by the server (HTTP).
   * @example channels.broadcast('room', null, 'msg', { text: 'hi' })
   */
  broadcast(topic: string, from: ChannelMember | null, event: string, payload: unknown, priv = from?.private): number {
    const message: ChannelMessage = { kind: 'broadcast', event, payload };
    let n = 0;
    for (const m of this.byTopic.get(keyOf(topic, priv)) ?? []) {
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
    this.diff(key, { [m.presenceKey]: { metas: [m.meta] } }, before ? { [m.presenceKey]: { metas: [before] } } : {});
  }

  untrack(m: ChannelMember): void {
    if (m.meta) this.diff(keyOf(m.topic, m.private), {}, { [m.presenceKey]: { metas: [m.meta] } });
    m.meta = null;
  }

  /** Who is present on a topic (a private one apart). */
  state(topic: string, priv?: boolean): PresenceState {
    const state: PresenceState = {};
    for (const other of this.byTopic.get(keyOf(topic, priv)) ?? []) {
      if (other.meta) (state[other.presenceKey] ??= { metas: [] }).metas.push(other.meta);
    }
    return state;
  }

  private diff(key: string, joins: PresenceState, leaves: PresenceState): void {
    const message: ChannelMessage = { kind: 'presence_diff', joins, leaves };
    for (const m of this.byTopic.get(key) ?? []) m.deliver(message);
  }
}

/** Without a database (unit tests): no private channel for anyone but the secret key. */
async function denyPrivate(who: Principal): Promise<ChannelRights> {
  return who.role === 'service' ? { read: true, write: true } : { read: false, write: false };
}
