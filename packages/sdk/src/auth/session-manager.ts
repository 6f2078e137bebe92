import { clientError } from '../errors.js';
import { type HttpConfig, send } from '../fetch.js';
import type { AuthChangeEvent, LockFunction, PlinthError, Result, Session, SupportedStorage, User } from '../types.js';
import { openTabChannel, type TabChannel } from './broadcast.js';
import { AuthEvents } from './events.js';
import { readSession, toSession, writeSession } from './storage.js';

/** The timer refreshes this long before expiry (or at half-life for very short tokens). */
const REFRESH_AHEAD_S = 60;
/** A token this close to expiry is refreshed before it is sent (clock skew, request latency). */
const EXPIRY_MARGIN_S = 10;
/** setTimeout's largest delay; longer waits are re-armed when they fire. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const REFRESH_TIMEOUT_MS = 20_000;

export interface SessionManagerOptions {
  http: HttpConfig;
  storage: SupportedStorage;
  storageKey: string;
  autoRefresh: boolean;
  lock: LockFunction;
  /** Share the session with other tabs through the storage and a tab channel. */
  multiTab: boolean;
}

type Emit = (event: AuthChangeEvent, session: Session | null, broadcast?: boolean) => void;
interface Pending {
  event: AuthChangeEvent;
  session: Session | null;
  broadcast: boolean;
}

/**
 * Owns the session: loads it at start, stores every change under one lock, refreshes it (one
 * refresh at a time per process and, through the lock and storage, per browser), keeps the
 * refresh timer and tells subscribers and other tabs. Events collected while the lock is held
 * are published only after it is released.
 */
export class SessionManager {
  readonly events = new AuthEvents();
  readonly ready: Promise<void>;
  private current: Session | null = null;
  private inflight: Promise<Result<Session>> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private retries = 0;
  private initializing = true;
  private disposed = false;
  private readonly channel: TabChannel | null;
  private readonly detachVisibility: () => void;

  constructor(private readonly options: SessionManagerOptions) {
    this.channel = options.multiTab
      ? openTabChannel(options.storageKey, (event, session) => void this.onRemoteChange(event, session))
      : null;
    this.detachVisibility = options.autoRefresh ? watchVisibility(() => this.onVisible()) : () => {};
    this.ready = this.initialize();
  }

  /** The session as last loaded or stored, without waiting or refreshing. */
  peek(): Session | null {
    return this.current;
  }

  /** A session whose access token is usable now: refreshed first when it is about to expire. */
  async getValidSession(): Promise<Result<Session | null>> {
    await this.ready;
    const session = this.current;
    if (!session || !expiresWithin(session, EXPIRY_MARGIN_S)) return { data: session, error: null };
    return this.refresh();
  }

  /** The bearer token for a request, or null to call as `anon`. */
  async accessToken(): Promise<string | null> {
    const { data, error } = await this.getValidSession();
    if (data) return data.access_token;
    // Offline refresh: keep the old token so the app gets the server's token_expired, not anon data.
    return error?.status === 0 && this.current ? this.current.access_token : null;
  }

  /** Stores the session of a sign-in and announces `event`. */
  async setSession(session: Session, event: AuthChangeEvent = 'SIGNED_IN'): Promise<void> {
    await this.ready;
    await this.locked(async (emit) => {
      await this.persist(session);
      emit(event, session);
    });
  }

  /** Replaces the user inside the stored session (after PATCH /user or a verification). */
  async setUser(user: User): Promise<void> {
    await this.ready;
    await this.locked(async (emit) => {
      const stored = await this.load();
      if (!stored || stored.user?.id !== user.id) return;
      const next = { ...stored, user };
      await this.persist(next);
      emit('USER_UPDATED', next);
    });
  }

  /** Forgets the session everywhere and announces SIGNED_OUT (unless there was none, e.g. a refused refresh already signed out). */
  async clear(): Promise<void> {
    await this.ready;
    await this.locked(async (emit) => {
      const had = this.current !== null || (await this.load()) !== null;
      await this.persist(null);
      if (had) emit('SIGNED_OUT', null);
    });
  }

  /** Announces an event that does not change the session (PASSWORD_RECOVERY). */
  announce(event: AuthChangeEvent): void {
    this.publish({ event, session: this.current, broadcast: true });
  }

  /**
   * Rotates the tokens. Concurrent callers share one promise; under the lock the stored session
   * is re-read first, so a tab that waited while another tab refreshed adopts that tab's tokens
   * instead of presenting a refresh token that was just rotated.
   */
  refresh(): Promise<Result<Session>> {
    if (this.inflight) return this.inflight;
    const seen = this.current?.refresh_token ?? null;
    const run = this.locked((emit) => this.refreshLocked(seen, emit));
    this.inflight = run;
    void run.finally(() => {
      if (this.inflight === run) this.inflight = null;
    });
    return run;
  }

  /** Stops the timer and the tab channel and drops subscribers. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.channel?.close();
    this.detachVisibility();
    this.events.clear();
  }

  private async initialize(): Promise<void> {
    try {
      this.current = await this.load(true);
      if (this.current && this.options.autoRefresh && expiresWithin(this.current, EXPIRY_MARGIN_S)) await this.refresh();
      else this.schedule();
    } finally {
      this.initializing = false;
      this.events.markReady(() => this.current);
    }
  }

  private async refreshLocked(seen: string | null, emit: Emit): Promise<Result<Session>> {
    const fromStorage = await this.load();
    // Another tab may have rotated the tokens while we waited for the lock; its message (already
    // in this.current) or the storage says so. Either may lag, and then the server's reuse grace
    // answers our duplicate refresh with the same token set.
    for (const candidate of [this.current, fromStorage]) {
      if (candidate && candidate.refresh_token !== seen && !expiresWithin(candidate, EXPIRY_MARGIN_S)) {
        const event = this.current?.user?.id === candidate.user?.id ? 'TOKEN_REFRESHED' : 'SIGNED_IN';
        const changed = this.current?.access_token !== candidate.access_token;
        this.current = candidate;
        this.schedule();
        if (changed) emit(event, candidate, false);
        return { data: candidate, error: null };
      }
    }
    const stored = fromStorage ?? this.current;
    if (!stored) return { data: null, error: clientError('session_missing', 'There is no session to refresh; sign in first.') };
    const res = await send<Session>(this.options.http, {
      method: 'POST',
      path: '/v1/auth/refresh',
      body: { refresh_token: stored.refresh_token },
      timeoutMs: REFRESH_TIMEOUT_MS,
    });
    if (res.error) {
      if (isRefusal(res.error)) {
        await this.persist(null);
        emit('SIGNED_OUT', null);
      } else {
        this.scheduleRetry();
      }
      return { data: null, error: res.error };
    }
    const session = toSession(res.data, stored.user);
    // Another tab's message may have brought this refresh token while we waited for the answer:
    // the server's reuse grace answered our duplicate with it (and a newly signed access
    // token). That is the session this tab already holds, not another refresh to announce.
    if (this.current && this.current.refresh_token === session.refresh_token && !expiresWithin(this.current, EXPIRY_MARGIN_S)) {
      return { data: this.current, error: null };
    }
    await this.persist(session);
    emit('TOKEN_REFRESHED', session);
    return { data: session, error: null };
  }

  private async locked<T>(fn: (emit: Emit) => Promise<T>): Promise<T> {
    const pending: Pending[] = [];
    const emit: Emit = (event, session, broadcast = true) => pending.push({ event, session, broadcast });
    try {
      return await this.options.lock(this.options.storageKey, () => fn(emit));
    } finally {
      for (const item of pending) this.publish(item);
    }
  }

  private publish({ event, session, broadcast }: Pending): void {
    if (this.disposed) return;
    // Subscribers that arrive during start-up get INITIAL_SESSION with the final state instead.
    if (!this.initializing) this.events.emit(event, session);
    if (broadcast) this.channel?.post(event, session);
  }

  /** Reads the storage when it is shared with other tabs; otherwise memory is the truth. */
  private async load(force = false): Promise<Session | null> {
    if (!force && !this.options.multiTab) return this.current;
    return readSession(this.options.storage, this.options.storageKey);
  }

  private async persist(session: Session | null): Promise<void> {
    this.current = session;
    this.retries = 0;
    this.schedule();
    try {
      await writeSession(this.options.storage, this.options.storageKey, session);
    } catch (error) {
      // A full or refusing storage must not lose the sign-in for this page.
      console.warn('[plinth] could not store the session:', error);
    }
  }

  /** Mirrors a change another tab made (and already stored); nothing is written here. */
  private async onRemoteChange(event: AuthChangeEvent | null, next: Session | null): Promise<void> {
    await this.ready;
    if (this.disposed) return;
    if (event === 'PASSWORD_RECOVERY') {
      this.events.emit('PASSWORD_RECOVERY', this.current);
      return;
    }
    const prev = this.current;
    this.current = next;
    this.retries = 0;
    this.schedule();
    // Events name what changed here: a refresh this tab already adopted is not announced twice.
    const changed = inferEvent(prev, next);
    if (changed) this.events.emit(event === 'SIGNED_IN' && changed === 'TOKEN_REFRESHED' ? 'SIGNED_IN' : changed, next);
  }

  private onVisible(): void {
    // Timers are throttled in background tabs; catch up when the user comes back.
    if (this.current && !this.disposed && expiresWithin(this.current, REFRESH_AHEAD_S)) void this.refresh();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const session = this.current;
    if (!session || !this.options.autoRefresh || this.disposed) return;
    const ahead = Math.min(REFRESH_AHEAD_S, session.expires_in / 2);
    const delay = (session.expires_at - ahead) * 1000 - Date.now();
    this.arm(delay, () => (delay > MAX_TIMER_MS ? this.schedule() : void this.refresh()));
  }

  private scheduleRetry(): void {
    if (!this.options.autoRefresh || this.disposed || !this.current) return;
    this.retries++;
    this.arm(Math.min(60_000, 1000 * 2 ** this.retries), () => void this.refresh());
  }

  private arm(delay: number, fire: () => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = null;
        fire();
      },
      Math.min(Math.max(0, delay), MAX_TIMER_MS),
    );
    // The timer alone must not keep a Node script running.
    (this.timer as { unref?: () => void }).unref?.();
  }
}

/** True when the token expires within `seconds` from now. */
export function expiresWithin(session: Session, seconds: number): boolean {
  return session.expires_at - seconds <= Date.now() / 1000;
}

/** The server refused the refresh token for good: signing out is the only way forward. */
function isRefusal(error: PlinthError): boolean {
  return error.status === 401 || error.code === 'invalid_refresh_token' || error.code === 'refresh_token_reused';
}

/** Names a change seen in storage (another tab wrote it), or null when nothing a subscriber cares about changed. */
export function inferEvent(prev: Session | null, next: Session | null): AuthChangeEvent | null {
  if (!next) return prev ? 'SIGNED_OUT' : null;
  if (!prev || prev.user?.id !== next.user?.id) return 'SIGNED_IN';
  // The refresh token names the token set: the same one with another access token (the reuse
  // grace answering a second tab) is the refresh this tab already announced.
  if (prev.refresh_token !== next.refresh_token) return 'TOKEN_REFRESHED';
  if (JSON.stringify(prev.user) !== JSON.stringify(next.user)) return 'USER_UPDATED';
  return null;
}

function watchVisibility(onVisible: () => void): () => void {
  if (typeof document === 'undefined' || typeof document.addEventListener !== 'function') return () => {};
  const listener = () => {
    if (document.visibilityState === 'visible') onVisible();
  };
  document.addEventListener('visibilitychange', listener);
  return () => document.removeEventListener('visibilitychange', listener);
}
