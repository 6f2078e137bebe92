import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeServer, makeUser, startFakeServer } from '../../test/fake-server.js';
import { clientOf, clientTracker, recordEvents, settle } from '../../test/helpers.js';
import type { AuthChangeEvent } from '../types.js';
import { AuthEvents } from './events.js';
import { memoryStorage } from './storage.js';

let fake: FakeServer;
const { track, disposeAll } = clientTracker();

beforeAll(async () => {
  fake = await startFakeServer();
  fake.users.set('dl@example.com', { password: 'pw-123456', user: makeUser('dl@example.com') });
});
afterAll(() => fake.close());
afterEach(() => {
  disposeAll();
  vi.unstubAllGlobals();
});

/** Fails instead of hanging when a deadlock keeps `promise` pending. */
function within<T>(promise: Promise<T>, ms = 3000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still pending after ${ms} ms: deadlock`)), ms)),
  ]);
}

/**
 * A strict, non-reentrant stand-in for `navigator.locks` (Node has none): a holder that waits
 * for the lock again, directly or through a callback it awaits, never finishes.
 */
function stubNavigatorLocks() {
  const tails = new Map<string, Promise<unknown>>();
  const request = (name: string, _options: unknown, fn: () => Promise<unknown>) => {
    const run = (tails.get(name) ?? Promise.resolve()).then(fn);
    tails.set(
      name,
      run.catch(() => {}),
    );
    return run;
  };
  vi.stubGlobal('navigator', { locks: { request } });
}

describe('callbacks that call the client', () => {
  it.each([
    ['the in-process lock', false],
    ['a navigator.locks-style cross-tab lock', true],
  ])('never deadlock with %s', async (_name, crossTab) => {
    if (crossTab) stubNavigatorLocks();
    const client = track(clientOf(fake, { auth: { storage: memoryStorage(), multiTab: crossTab } }));
    const seen: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.auth.onAuthStateChange(async (event) => {
        seen.push(event);
        if (event !== 'SIGNED_IN') return;
        try {
          // Every call below takes or waits on the session lock; the SIGNED_IN that triggered this
          // callback was emitted by a sign-in that held the same lock.
          expect((await client.auth.getSession()).data?.session?.user.email).toBe('dl@example.com');
          expect((await client.auth.refreshSession()).error).toBeNull();
          expect((await client.auth.getUser()).error).toBeNull();
          expect((await client.auth.updateUser({ name: 'D' })).error).toBeNull();
          expect((await client.from('todos').select()).error).toBeNull();
          expect((await client.auth.signOut()).error).toBeNull();
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
    expect((await within(client.auth.signIn({ email: 'dl@example.com', password: 'pw-123456' }))).error).toBeNull();
    await within(done);
    await settle();
    expect(seen).toEqual(['INITIAL_SESSION', 'SIGNED_IN', 'TOKEN_REFRESHED', 'USER_UPDATED', 'SIGNED_OUT']);
  });

  it('delivers events after the method that caused them has released the lock', async () => {
    const client = track(clientOf(fake));
    const order: string[] = [];
    client.auth.onAuthStateChange((event) => {
      if (event === 'SIGNED_IN') order.push('callback');
    });
    await client.auth.signIn({ email: 'dl@example.com', password: 'pw-123456' });
    order.push('signIn resolved');
    await settle();
    expect(order).toEqual(['signIn resolved', 'callback']);
  });
});

describe('subscriptions', () => {
  it('gives every new subscriber INITIAL_SESSION, once', async () => {
    const storage = memoryStorage();
    const client = track(clientOf(fake, { auth: { storage } }));
    await client.auth.signIn({ email: 'dl@example.com', password: 'pw-123456' });
    const restored = track(clientOf(fake, { auth: { storage } }));
    const first = recordEvents(restored);
    await settle();
    const second = recordEvents(restored);
    await settle();
    expect(first.names()).toEqual(['INITIAL_SESSION']);
    expect(second.names()).toEqual(['INITIAL_SESSION']);
    expect(second.events[0].session?.user.email).toBe('dl@example.com');
  });

  it('stops after unsubscribe and isolates a failing callback', async () => {
    const events = new AuthEvents();
    const got: AuthChangeEvent[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    events.subscribe(() => {
      throw new Error('boom');
    });
    events.subscribe(async () => {
      throw new Error('async boom');
    });
    const { data } = events.subscribe((event) => {
      got.push(event);
    });
    events.markReady(() => null);
    events.emit('SIGNED_OUT', null);
    await settle();
    data.subscription.unsubscribe();
    events.emit('SIGNED_IN', null);
    await settle();
    expect(got).toEqual(['INITIAL_SESSION', 'SIGNED_OUT']);
    expect(error).toHaveBeenCalledTimes(6); // 3 events × 2 failing subscribers
    error.mockRestore();
  });
});
