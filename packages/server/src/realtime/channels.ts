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
  /** For a private channel: only the secret key sends there until its RLS check on realtime.messages comes. */
  private?: boolean;
}

export class Channels {
  private readonly byTopic = new Map<string, Set<ChannelMember>>();
  private readonly perIp = new Map<string, number>();

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
    let set = this.byTopic.get(m.topic);
    if (!set) this.byTopic.set(m.topic, (set = new Set()));
    if (!set.has(m)) {
      set.add(m);
      this.perIp.set(m.ip, this.membersOfIp(m.ip) + 1);
    }
    return this.state(m.topic);
  }

  /** Removes a member; its presence leaves the others' state. */
  leave(m: ChannelMember): void {
    const set = this.byTopic.get(m.topic);
    if (!set?.delete(m)) return;
    const n = this.membersOfIp(m.ip) - 1;
    if (n > 0) this.perIp.set(m.ip, n);
    else this.perIp.delete(m.ip);
    if (set.size === 0) this.byTopic.delete(m.topic);
    if (m.meta) this.diff(m.topic, {}, { [m.presenceKey]: { metas: [m.meta] } });
    m.meta = null;
  }

  /**
   * Sends a message to a topic's members (not back to `from` unless it asked for `self`);
   * answers how many got it. `from` null: sent by the server (HTTP).
   * @example channels.broadcast('room', null, 'msg', { text: 'hi' })
   */
  broadcast(topic: string, from: ChannelMember | null, event: string, payload: unknown): number {
    const message: ChannelMessage = { kind: 'broadcast', event, payload };
    let n = 0;
    for (const m of this.byTopic.get(topic) ?? []) {
      if (m === from && !m.self) continue;
      m.deliver(message);
      n++;
    }
    return n;
  }

  /**
   * Messages sent over HTTP (`POST /api/v1/realtime/broadcast`, Supabase's
   * `POST /realtime/v1/api/broadcast`), all or none: a private channel is refused (403
   * `forbidden`) to any role but `service`, as a private join is. Answers the members reached.
   * @example channels.send(principal, [{ channel: 'room', event: 'msg', payload: { text: 'hi' } }])
   */
  send(principal: Principal, messages: ServerBroadcast[]): number {
    if (principal.role !== 'service' && messages.some((m) => m.private === true)) {
      throw new ApiError(
        'forbidden',
        'Only the secret key may send on a private channel (its row-level security check is not served yet).',
      );
    }
    let n = 0;
    for (const m of messages) n += this.broadcast(m.channel, null, m.event, m.payload);
    return n;
  }

  /** Tracks (or replaces) a member's presence; every member of the topic gets the diff. */
  track(m: ChannelMember, fields: Record<string, unknown>): void {
    const before = m.meta;
    m.meta = { ...fields, phx_ref: randomBytes(10).toString('hex') };
    this.diff(m.topic, { [m.presenceKey]: { metas: [m.meta] } }, before ? { [m.presenceKey]: { metas: [before] } } : {});
  }

  untrack(m: ChannelMember): void {
    if (m.meta) this.diff(m.topic, {}, { [m.presenceKey]: { metas: [m.meta] } });
    m.meta = null;
  }

  /** Who is present on a topic. */
  state(topic: string): PresenceState {
    const state: PresenceState = {};
    for (const other of this.byTopic.get(topic) ?? []) {
      if (other.meta) (state[other.presenceKey] ??= { metas: [] }).metas.push(other.meta);
    }
    return state;
  }

  private diff(topic: string, joins: PresenceState, leaves: PresenceState): void {
    const message: ChannelMessage = { kind: 'presence_diff', joins, leaves };
    for (const m of this.byTopic.get(topic) ?? []) m.deliver(message);
  }
}
