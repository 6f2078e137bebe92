import { createClient } from '../src/index.js';
import type { ClientOptions } from '../src/client.js';
import type { AuthChangeEvent, Session } from '../src/types.js';
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
    next: (event: AuthChangeEvent) =>
      events.some((e) => e.event === event) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ event, resolve })),
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
