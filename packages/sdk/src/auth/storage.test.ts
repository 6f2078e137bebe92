import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeServer, makeUser, startFakeServer } from '../../test/fake-server.js';
import { clientOf, recordEvents } from '../../test/helpers.js';
import type { SupportedStorage } from '../types.js';
import { storageLock } from './lock.js';
import { browserStorage, defaultStorageKey, memoryStorage, readSession, writeSession } from './storage.js';

let fake: FakeServer;
beforeAll(async () => {
  fake = await startFakeServer();
  fake.users.set('s@example.com', { password: 'pw-123456', user: makeUser('s@example.com') });
});
afterAll(() => fake.close());
afterEach(() => vi.unstubAllGlobals());

/** An adapter in the style of React Native's AsyncStorage: every call is a promise that settles later. */
function asyncStorage(): SupportedStorage & { values: Map<string, string> } {
  const values = new Map<string, string>();
  const later = <T>(fn: () => T) => new Promise<T>((resolve) => setTimeout(() => resolve(fn()), 2));
  return {
    values,
    getItem: (key) => later(() => values.get(key) ?? null),
    setItem: (key, value) => later(() => void values.set(key, value)),
    removeItem: (key) => later(() => void values.delete(key)),
  };
}

describe('storage adapters', () => {
  it('memory storage keeps values per instance', () => {
    const a = memoryStorage();
    a.setItem('k', 'v');
    expect(a.getItem('k')).toBe('v');
    expect(memoryStorage().getItem('k')).toBeNull();
    a.removeItem('k');
    expect(a.getItem('k')).toBeNull();
  });

  it('uses one key per project', () => {
    expect(defaultStorageKey('https://api.example.com/')).toBe('plinth.auth.api.example.com');
    expect(defaultStorageKey('http://localhost:8080')).toBe('plinth.auth.localhost:8080');
  });

  it('treats unreadable stored values as no session', async () => {
    const s = memoryStorage();
    for (const raw of ['not json', 'null', '{"access_token":"a"}', '[]']) {
      s.setItem('k', raw);
      expect(await readSession(s, 'k')).toBeNull();
    }
    const broken: SupportedStorage = { getItem: () => Promise.reject(new Error('denied')), setItem() {}, removeItem() {} };
    expect(await readSession(broken, 'k')).toBeNull();
  });

  it('stores the session in an async adapter and restores it in a new client', async () => {
    const storage = asyncStorage();
    const first = clientOf(fake, { auth: { storage } });
    const signedIn = await first.auth.signIn({ email: 's@example.com', password: 'pw-123456' });
    const key = defaultStorageKey(fake.url);
    expect(JSON.parse(storage.values.get(key) ?? 'null').access_token).toBe(signedIn.data?.access_token);
    first.auth.dispose();

    const second = clientOf(fake, { auth: { storage } });
    const rec = recordEvents(second);
    await rec.next('INITIAL_SESSION');
    expect(rec.events[0].session?.user.email).toBe('s@example.com');
    await second.from('todos').select();
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${signedIn.data?.access_token}`);
    await second.auth.signOut();
    expect(storage.values.has(key)).toBe(false);
    second.auth.dispose();
  });

  it('does not write to storage with persistSession: false', async () => {
    const storage = asyncStorage();
    const client = clientOf(fake, { auth: { storage, persistSession: false } });
    await client.auth.signIn({ email: 's@example.com', password: 'pw-123456' });
    expect(storage.values.size).toBe(0);
    expect((await client.auth.getSession()).data?.session?.user.email).toBe('s@example.com');
    client.auth.dispose();
  });

  it('writeSession(null) removes the key', async () => {
    const s = memoryStorage();
    s.setItem('k', 'x');
    await writeSession(s, 'k', null);
    expect(s.getItem('k')).toBeNull();
  });

  it('finds no localStorage in Node and refuses one that throws', () => {
    expect(browserStorage()).toBeNull();
    vi.stubGlobal('localStorage', {
      setItem() {
        throw new Error('QuotaExceededError');
      },
    });
    expect(browserStorage()).toBeNull();
  });
});

describe('storage lock', () => {
  it('lets one holder at a time through across "tabs" sharing a storage', async () => {
    const shared = memoryStorage();
    const tabs = [storageLock(shared), storageLock(shared), storageLock(shared)];
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      tabs.map((lock) =>
        lock('plinth.auth.x', async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((r) => setTimeout(r, 30));
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(shared.getItem('plinth.auth.x.lock')).toBeNull();
  });

  it('takes over a lease left by a closed tab once it has expired', async () => {
    const shared = memoryStorage();
    shared.setItem('n.lock', JSON.stringify({ id: 'gone', until: Date.now() - 1 }));
    expect(await storageLock(shared)('n', async () => 'ran')).toBe('ran');
  });
});
