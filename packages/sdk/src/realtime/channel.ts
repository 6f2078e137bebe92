/**
 * `client.channel(name)` (docs/realtime.md, "Channels"): messages between clients (`broadcast`)
 * and who is there (`presence`), on the same WebSocket as `client.realtime`'s subscriptions. A
 * dropped connection rejoins by itself and tracks the last presence again.
 */
import type { PlinthError, PlinthErrorCode } from '../types.js';
import type { RealtimeStatus, RealtimeStatusCallback } from './types.js';

/** Each presence key with the metas tracked under it (one per tab or device). */
export type PresenceState = Record<string, { metas: Array<Record<string, unknown>> }>;

export interface ChannelOptions {
  /** Receive your own broadcasts too. Default false. */
  self?: boolean;
  /** The key your presence is listed under (a user id, a name). Default: a random one per join. */
  presenceKey?: string;
  /**
   * A private channel: joining and sending are decided by the project's policies on
   * `realtime.messages` (with `realtime.topic()`), at the join and again at each new token. Default false.
   */
  private?: boolean;
}

/** What a channel needs of the connection (client.ts). */
export interface ChannelHost {
  sendRaw(message: unknown): boolean;
  ensureOpen(): void;
  forget(channel: RealtimeChannel): void;
}

type BroadcastHandler = (payload: unknown, event: string) => void;
type PresenceHandler = (state: PresenceState, diff: { joins: PresenceState; leaves: PresenceState }) => void;

function merge(state: PresenceState, joins: PresenceState, leaves: PresenceState): PresenceState {
  const next: PresenceState = {};
  for (const [key, v] of Object.entries(state)) next[key] = { metas: [...v.metas] };
  for (const [key, v] of Object.entries(leaves)) {
    const gone = new Set(v.metas.map((m) => m.phx_ref));
    const left = (next[key]?.metas ?? []).filter((m) => !gone.has(m.phx_ref));
    if (left.length > 0) next[key] = { metas: left };
    else delete next[key];
  }
  for (const [key, v] of Object.entries(joins)) next[key] = { metas: [...(next[key]?.metas ?? []), ...v.metas] };
  return next;
}

export class RealtimeChannel {
  status: RealtimeStatus = 'CLOSED';
  private joining = false;
  private readonly broadcasts: Array<{ event: string; handler: BroadcastHandler }> = [];
  private readonly presences: PresenceHandler[] = [];
  private onStatus: RealtimeStatusCallback | undefined;
  private meta: Record<string, unknown> | null = null;
  private state: PresenceState = {};
  constructor(
    readonly name: string,
    private readonly options: ChannelOptions,
    private readonly host: ChannelHost,
  ) {}

  /**
   * Listens to broadcasts of one event (`'*'`: every event), or to presence changes.
   * @example client.channel('room').on('broadcast', 'typing', (p) => show(p)).on('presence', (state) => render(state)).subscribe();
   */
  on(type: 'broadcast', event: string, handler: BroadcastHandler): this;
  on(type: 'presence', handler: PresenceHandler): this;
  on(type: 'broadcast' | 'presence', a: string | PresenceHandler, b?: BroadcastHandler): this {
    if (type === 'broadcast') this.broadcasts.push({ event: a as string, handler: b as BroadcastHandler });
    else this.presences.push(a as PresenceHandler);
    return this;
  }

  /** Joins the channel; `onStatus` hears SUBSCRIBED, RECONNECTING, CLOSED or ERROR (with the error). */
  subscribe(onStatus?: RealtimeStatusCallback): this {
    this.onStatus = onStatus;
    this.joining = true;
    // Until the server's `joined` (not announced: RECONNECTING is heard only after a drop).
    this.status = 'RECONNECTING';
    this.host.ensureOpen();
    this.rejoin();
    return this;
  }

  /** Sends a broadcast to the channel's other members; false while not joined (nothing is queued). */
  send(event: string, payload: unknown): boolean {
    if (this.status !== 'SUBSCRIBED') return false;
    return this.host.sendRaw({ type: 'broadcast', channel: this.name, event, payload });
  }

  /** Shows you on the channel with `meta` (again after each reconnect); a new track replaces it. */
  track(meta: Record<string, unknown>): void {
    this.meta = meta;
    if (this.status === 'SUBSCRIBED') this.host.sendRaw({ type: 'track', channel: this.name, meta });
  }

  untrack(): void {
    this.meta = null;
    if (this.status === 'SUBSCRIBED') this.host.sendRaw({ type: 'untrack', channel: this.name });
  }

  /** Who is on the channel now. */
  presenceState(): PresenceState {
    return this.state;
  }

  /** Leaves the channel. */
  async unsubscribe(): Promise<void> {
    if (!this.joining) return;
    this.joining = false;
    this.host.sendRaw({ type: 'leave', channel: this.name });
    this.host.forget(this);
    this.setStatus('CLOSED');
  }

  /** Internal: the connection (re)opened; joins again when it was joined. */
  rejoin(): void {
    if (!this.joining) return;
    this.host.sendRaw({
      type: 'join',
      channel: this.name,
      ...(this.options.self ? { self: true } : {}),
      ...(this.options.private ? { private: true } : {}),
      ...(this.options.presenceKey ? { presence_key: this.options.presenceKey } : {}),
    });
  }

  /** Internal: the connection dropped. */
  dropped(): void {
    if (this.joining && this.status !== 'ERROR') this.setStatus('RECONNECTING');
  }

  /** Internal: a server message about this channel. */
  receive(m: Record<string, unknown>): void {
    switch (m.type) {
      case 'joined': {
        if (!this.joining) return;
        this.state = (m.presence as PresenceState) ?? {};
        this.setStatus('SUBSCRIBED');
        if (this.meta) this.host.sendRaw({ type: 'track', channel: this.name, meta: this.meta });
        this.emitPresence({}, {});
        return;
      }
      case 'broadcast':
        for (const b of this.broadcasts) {
          if (b.event !== '*' && b.event !== m.event) continue;
          try {
            b.handler(m.payload, m.event as string);
          } catch (e) {
            console.error('[plinth] a channel broadcast callback failed:', e);
          }
        }
        return;
      case 'presence': {
        const joins = (m.joins as PresenceState) ?? {};
        const leaves = (m.leaves as PresenceState) ?? {};
        this.state = merge(this.state, joins, leaves);
        this.emitPresence(joins, leaves);
        return;
      }
      case 'left':
        // Put out by the server (a new token's policies refuse this private channel): its error came first.
        if (!this.joining) return;
        this.joining = false;
        this.host.forget(this);
        this.setStatus('CLOSED');
        return;
      case 'error': {
        const error: PlinthError = {
          code: ((m.code as string) ?? 'invalid_response') as PlinthErrorCode,
          message: (m.message as string) ?? '',
          status: 0,
          details: m.details,
        };
        // A refused join ends the channel; an error about a message leaves it joined.
        if (this.status !== 'SUBSCRIBED') {
          this.joining = false;
          this.host.forget(this);
        }
        this.setStatus('ERROR', error);
        return;
      }
    }
  }

  private emitPresence(joins: PresenceState, leaves: PresenceState): void {
    for (const h of this.presences) {
      try {
        h(this.state, { joins, leaves });
      } catch (e) {
        console.error('[plinth] a channel presence callback failed:', e);
      }
    }
  }

  private setStatus(status: RealtimeStatus, error?: PlinthError): void {
    this.status = status;
    try {
      this.onStatus?.(status, error);
    } catch (e) {
      console.error('[plinth] a channel status callback failed:', e);
    }
  }
}
