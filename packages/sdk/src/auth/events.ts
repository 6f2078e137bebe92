import type { AuthChangeEvent, Session } from '../types.js';

export type AuthStateCallback = (event: AuthChangeEvent, session: Session | null) => void | Promise<void>;

/** What `onAuthStateChange` returns (supabase-js's shape, so code ports without edits). */
export interface AuthSubscription {
  data: { subscription: { id: number; unsubscribe: () => void } };
}

/**
 * Keeps the `onAuthStateChange` subscribers and delivers events to them.
 *
 * Delivery is always deferred to a later macrotask and never awaited. That is the whole
 * deadlock story: the SDK emits while it may hold its session lock, and a callback that calls
 * `getSession()` or `signOut()` (even awaiting them) would otherwise wait on the lock its caller
 * holds. Events are queued in order, so a subscriber sees INITIAL_SESSION before later events.
 */
export class AuthEvents {
  private readonly subscribers = new Map<number, AuthStateCallback>();
  private readonly queue: Array<() => void> = [];
  private readonly waitingForInitial = new Set<number>();
  private nextId = 1;
  private flushScheduled = false;
  private ready = false;
  private current: () => Session | null = () => null;

  /**
   * Adds a subscriber; it receives INITIAL_SESSION once the stored session is loaded.
   * @example const { data } = events.subscribe((event, session) => console.log(event)); data.subscription.unsubscribe();
   */
  subscribe(callback: AuthStateCallback): AuthSubscription {
    const id = this.nextId++;
    this.subscribers.set(id, callback);
    if (this.ready) this.deliver(id, 'INITIAL_SESSION', this.current());
    else this.waitingForInitial.add(id);
    return { data: { subscription: { id, unsubscribe: () => this.unsubscribe(id) } } };
  }

  /** Called once the stored session is loaded (and refreshed if it had expired). */
  markReady(current: () => Session | null): void {
    this.current = current;
    this.ready = true;
    for (const id of this.waitingForInitial) this.deliver(id, 'INITIAL_SESSION', current());
    this.waitingForInitial.clear();
  }

  /** Queues `event` for every current subscriber. */
  emit(event: AuthChangeEvent, session: Session | null): void {
    for (const id of this.subscribers.keys()) this.deliver(id, event, session);
  }

  /** Drops every subscriber (client disposal). */
  clear(): void {
    this.subscribers.clear();
    this.waitingForInitial.clear();
  }

  private unsubscribe(id: number): void {
    this.subscribers.delete(id);
    this.waitingForInitial.delete(id);
  }

  private deliver(id: number, event: AuthChangeEvent, session: Session | null): void {
    this.queue.push(() => {
      const callback = this.subscribers.get(id);
      if (!callback) return; // unsubscribed while the event was queued
      try {
        const result = callback(event, session);
        if (result && typeof result.then === 'function') result.then(undefined, report);
      } catch (error) {
        report(error);
      }
    });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setTimeout(() => this.flush(), 0);
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    // Callbacks may emit new events; those land behind the current batch and get their own flush.
    const batch = this.queue.splice(0, this.queue.length);
    for (const run of batch) run();
  }
}

/** A failing subscriber must not stop the others, nor crash a Node process. */
function report(error: unknown): void {
  console.error('[plinth] an onAuthStateChange callback failed:', error);
}
