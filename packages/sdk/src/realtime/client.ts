/**
 * `client.realtime` (docs/realtime.md): one WebSocket per client for all its
 * subscriptions, opened at the first and closed after the last. It reconnects by itself (backoff
 * up to `maxReconnectDelayMs`) and resumes each subscription from its `lastSeq`, so no change is
 * lost or repeated across a drop or a server restart; the access token follows the session
 * (sign-in, refresh, sign-out) and an expired one is refreshed when the server says so.
 */
import type { AuthEvents } from '../auth/events.js';
import type { HttpConfig } from '../fetch.js';
import type { PlinthError, PlinthErrorCode } from '../types.js';
import { type ChannelHost, type ChannelOptions, RealtimeChannel } from './channel.js';
import type {
  RealtimeChange,
  RealtimeOptions,
  RealtimeStatus,
  RealtimeStatusCallback,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
  WebSocketLike,
} from './types.js';

export interface RealtimeContext {
  http: HttpConfig;
  /** The access token to send, or null for the public key alone. */
  accessToken(): Promise<string | null>;
  /** Refreshes the session (the server said the token expired). */
  refresh(): Promise<string | null>;
  events: AuthEvents;
  options: RealtimeOptions;
}

interface ServerMessage {
  type: string;
  id?: string;
  channel?: string;
  seq?: number;
  code?: string;
  message?: string;
  details?: unknown;
}

class Sub implements RealtimeSubscription {
  lastSeq: number | null;
  status: RealtimeStatus = 'RECONNECTING';
  closed = false;
  onUnsubscribed: (() => void) | null = null;
  constructor(
    readonly id: string,
    readonly options: RealtimeSubscribeOptions,
    readonly onChange: (change: RealtimeChange<never>) => void,
    readonly onStatus: RealtimeStatusCallback | undefined,
    readonly owner: RealtimeClient,
  ) {
    this.lastSeq = options.since ?? null;
  }
  setStatus(status: RealtimeStatus, error?: PlinthError): void {
    this.status = status;
    try {
      this.onStatus?.(status, error);
    } catch (e) {
      console.error('[plinth] a realtime status callback failed:', e);
    }
  }
  unsubscribe(): Promise<void> {
    return this.owner.remove(this);
  }
}

const OPEN = 1;

export class RealtimeClient {
  private socket: InstanceType<WebSocketLike> | null = null;
  private readonly subs = new Map<string, Sub>();
  private readonly channels = new Map<string, RealtimeChannel>();
  private nextId = 1;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private lastHeard = 0;
  private disposed = false;
  private readonly detach: () => void;

  constructor(private readonly ctx: RealtimeContext) {
    const { data } = ctx.events.subscribe((event, session) => {
      if (event === 'INITIAL_SESSION') return;
      if (event === 'SIGNED_IN' || event === 'TOKEN_REFRESHED' || event === 'SIGNED_OUT' || event === 'USER_UPDATED') {
        this.sendRaw({ type: 'auth', access_token: session?.access_token ?? null });
      }
    });
    this.detach = () => data.subscription.unsubscribe();
  }

  /**
   * Subscribes to a table's changes under the signed-in user's row-level security.
   * @example
   * const sub = client.realtime.subscribe({ table: 'todos', filter: 'eq.list_id=7' },
   *   (change) => console.log(change.op, change.row), (status) => console.log(status));
   * await sub.unsubscribe();
   */
  subscribe<Row = Record<string, unknown>>(
    options: RealtimeSubscribeOptions,
    onChange: (change: RealtimeChange<Row>) => void,
    onStatus?: RealtimeStatusCallback,
  ): RealtimeSubscription {
    const sub = new Sub(`s${this.nextId++}`, options, onChange as (c: RealtimeChange<never>) => void, onStatus, this);
    this.subs.set(sub.id, sub);
    if (this.socket?.readyState === OPEN) this.sendSubscribe(sub);
    else this.connect();
    return sub;
  }

  /**
   * A channel: broadcast between clients and presence (docs/realtime.md, "Channels"). The same
   * name gives the same channel until it is unsubscribed.
   * @example
   * const room = client.realtime.channel('room-1', { presenceKey: user.id })
   *   .on('broadcast', 'message', (p) => show(p))
   *   .on('presence', (state) => renderWhoIsHere(state))
   *   .subscribe((status) => status === 'SUBSCRIBED' && room.track({ typing: false }));
   * room.send('message', { text: 'hi' });
   */
  channel(name: string, options: ChannelOptions = {}): RealtimeChannel {
    const found = this.channels.get(name);
    if (found) return found;
    const host: ChannelHost = {
      sendRaw: (m) => this.sendRaw(m),
      ensureOpen: () => {
        if (this.socket?.readyState !== OPEN) this.connect();
      },
      forget: (ch) => {
        if (this.channels.get(ch.name) === ch) this.channels.delete(ch.name);
        if (this.idle()) this.stop();
      },
    };
    const ch = new RealtimeChannel(name, options, host);
    this.channels.set(name, ch);
    return ch;
  }

  /** Nothing left to serve: no subscription, no channel. */
  private idle(): boolean {
    return this.subs.size === 0 && this.channels.size === 0;
  }

  /** Ends every subscription and the connection. */
  dispose(): void {
    this.disposed = true;
    this.detach();
    for (const sub of this.subs.values()) {
      sub.closed = true;
      sub.setStatus('CLOSED');
    }
    this.subs.clear();
    for (const ch of [...this.channels.values()]) void ch.unsubscribe();
    this.channels.clear();
    this.stop();
  }

  async remove(sub: Sub): Promise<void> {
    if (sub.closed) return;
    sub.closed = true;
    const confirmed =
      this.socket?.readyState === OPEN
        ? new Promise<void>((resolve) => {
            sub.onUnsubscribed = resolve;
            setTimeout(resolve, 5000);
          })
        : Promise.resolve();
    this.sendRaw({ type: 'unsubscribe', id: sub.id });
    await confirmed;
    this.subs.delete(sub.id);
    sub.setStatus('CLOSED');
    if (this.idle()) this.stop();
  }

  private stop(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      s.onerror = null;
      s.close(1000);
    }
  }

  private url(): string {
    const base = this.ctx.http.url.replace(/^http/, 'ws');
    return `${base}/api/v1/realtime?apikey=${encodeURIComponent(this.ctx.http.publicKey)}`;
  }

  private connect(): void {
    if (this.socket || this.reconnectTimer || this.disposed) return;
    const Impl = this.ctx.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketLike }).WebSocket;
    if (!Impl) {
      const error: PlinthError = {
        code: 'websocket_unavailable',
        message: 'No WebSocket here: pass createClient(url, key, { realtime: { WebSocket } }).',
        status: 0,
      };
      for (const sub of this.subs.values()) sub.setStatus('ERROR', error);
      return;
    }
    const socket = new Impl(this.url());
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.lastHeard = Date.now();
      this.startHeartbeat();
      void this.ctx.accessToken().then((token) => {
        if (this.socket !== socket) return;
        // The token first: messages are handled in order, so the subscriptions need no wait.
        if (token) this.sendRaw({ type: 'auth', access_token: token });
        for (const sub of this.subs.values()) if (!sub.closed) this.sendSubscribe(sub);
        for (const ch of this.channels.values()) ch.rejoin();
      });
    };
    socket.onmessage = (ev) => {
      this.lastHeard = Date.now();
      let m: ServerMessage;
      try {
        m = JSON.parse(String(ev.data)) as ServerMessage;
      } catch {
        return;
      }
      this.onMessage(m);
    };
    socket.onerror = () => undefined;
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
      if (this.disposed || this.idle()) return;
      for (const sub of this.subs.values()) if (!sub.closed && sub.status !== 'ERROR') sub.setStatus('RECONNECTING');
      for (const ch of this.channels.values()) ch.dropped();
      const max = this.ctx.options.maxReconnectDelayMs ?? 10_000;
      const delay = Math.min(max, 250 * 2 ** this.attempt++) * (0.5 + Math.random() / 2);
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        this.connect();
      }, delay);
    };
  }

  private startHeartbeat(): void {
    const every = this.ctx.options.heartbeatMs ?? 25_000;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      // Silent for two intervals: the connection is gone without a close (a proxy, a laptop asleep).
      if (Date.now() - this.lastHeard > 2 * every) {
        const s = this.socket;
        if (s?.onclose) s.onclose({ code: 4000 });
        s?.close();
        return;
      }
      this.sendRaw({ type: 'ping' });
    }, every);
  }

  private sendRaw(message: unknown): boolean {
    if (this.socket?.readyState !== OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  private sendSubscribe(sub: Sub): void {
    const o = sub.options;
    this.sendRaw({
      type: 'subscribe',
      id: sub.id,
      table: o.table,
      ...(o.events ? { events: o.events } : {}),
      ...(o.filter ? { filter: o.filter } : {}),
      ...(sub.lastSeq !== null ? { since: sub.lastSeq } : {}),
    });
  }

  private onMessage(m: ServerMessage): void {
    if (typeof m.channel === 'string') {
      this.channels.get(m.channel)?.receive(m as unknown as Record<string, unknown>);
      return;
    }
    const sub = m.id === undefined ? undefined : this.subs.get(m.id);
    switch (m.type) {
      case 'change':
        if (!sub || sub.closed || typeof m.seq !== 'number') return;
        if (sub.lastSeq !== null && m.seq <= sub.lastSeq) return;
        sub.lastSeq = m.seq;
        try {
          sub.onChange(m as unknown as RealtimeChange<never>);
        } catch (e) {
          console.error('[plinth] a realtime change callback failed:', e);
        }
        return;
      case 'subscribed':
        if (!sub || sub.closed) return;
        if (typeof m.seq === 'number') sub.lastSeq = Math.max(sub.lastSeq ?? 0, m.seq);
        sub.setStatus('SUBSCRIBED');
        return;
      case 'unsubscribed':
        sub?.onUnsubscribed?.();
        return;
      case 'error':
        this.onError(m, sub);
        return;
    }
  }

  private onError(m: ServerMessage, sub: Sub | undefined): void {
    const error: PlinthError = {
      code: (m.code ?? 'invalid_response') as PlinthErrorCode,
      message: m.message ?? '',
      status: 0,
      details: m.details,
    };
    if (m.code === 'token_expired') {
      // Deliveries wait on the server: a fresh token resumes them where they stopped.
      void this.ctx.refresh().then((token) => token && this.sendRaw({ type: 'auth', access_token: token }));
      return;
    }
    if (!sub) return;
    if (m.code === 'resume_gap') {
      // The missed changes are gone: the app refetches (told by ERROR), the subscription goes on from now.
      sub.setStatus('ERROR', error);
      sub.lastSeq = null;
      this.sendSubscribe(sub);
      return;
    }
    sub.closed = true;
    this.subs.delete(sub.id);
    sub.setStatus('ERROR', error);
    if (this.idle()) this.stop();
  }
}
