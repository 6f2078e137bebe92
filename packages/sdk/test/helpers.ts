import { createClient } from '../src/index.js';
import type { ClientOptions } from '../src/client.js';
import type { AuthChangeEvent, Session, SupportedStorage } from '../src/types.js';
import { type FakeServer, PUBLIC_KEY } from './fake-server.js';

/** A client of the fake server; disposed by the caller (`client.auth.dispose()`). */
export function clientOf(fake: FakeServer, options: ClientOptions = {}) {
  return createClient(fake.url, PUBLIC_KEY, options);
}

/** Records every auth event of a client, with a way to wait for one. */
export function recordEvents(client: ReturnType<typeof clientOf>) {
  const events: Array<{ event: AuthChangeEvent; session: Session | null }> = [];
  const waiters: Array<{ event: AuthChangeEvent; resolve: () => void }> = [];
  const { data } = client.auth.onAuthStateChange((event, session) => {
    events.push({ event, session });
    for (const w of waiters.splice(0)) {
      if (w.event === event) w.resolve();
      else waiters.push(w);
    }
  });
  return {
    events,
    names: () => events.map((e) => e.event),
    unsubscribe: data.subscription.unsubscribe,
    /** Resolves once `event` has been delivered; fails after 5 s instead of hanging the test. */
    next: (event: AuthChangeEvent) =>
      events.some((e) => e.event === event)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no ${event} within 5 s; got ${events.map((e) => e.event)}`)), 5000);
            waiters.push({
              event,
              resolve: () => {
                clearTimeout(timer);
                resolve();
              },
            });
          }),
  };
}

/** Lets queued event deliveries (setTimeout 0) run. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Collects clients made by a test so `afterEach` can stop their timers and channels. */
export function clientTracker() {
  const clients: Array<{ auth: { dispose(): void } }> = [];
  return {
    track<T extends { auth: { dispose(): void } }>(client: T): T {
      clients.push(client);
      return client;
    },
    disposeAll(): void {
      for (const client of clients.splice(0)) client.auth.dispose();
    },
  };
}

/**
 * Storage shared by "tabs" the way Chromium shares `localStorage` between renderer processes:
 * a tab sees its own writes at once and other tabs' writes only after `lagMs`.
 */
export function laggingStorage(lagMs: number) {
  const views: Array<Map<string, string>> = [];
  return {
    seed(key: string, value: string): void {
      for (const view of views) view.set(key, value);
    },
    view(): SupportedStorage {
      const mine = new Map<string, string>();
      views.push(mine);
      const apply = (change: (view: Map<string, string>) => void) => {
        change(mine);
        for (const other of views) if (other !== mine) setTimeout(() => change(other), lagMs);
      };
      return {
        getItem: (key) => mine.get(key) ?? null,
        setItem: (key, value) => apply((view) => view.set(key, value)),
        removeItem: (key) => apply((view) => view.delete(key)),
      };
    },
  };
}
