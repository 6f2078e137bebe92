import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeServer, makeUser, startFakeServer } from '../../test/fake-server.js';
import { clientOf, clientTracker, laggingStorage, recordEvents, settle } from '../../test/helpers.js';
import type { LockFunction, Session, SupportedStorage } from '../types.js';
import { processLock } from './lock.js';
import { defaultStorageKey, memoryStorage } from './storage.js';

let fake: FakeServer;
const { track, disposeAll } = clientTracker();

beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.refreshDelayMs = 0;
  fake.requests.length = 0;
});
afterEach(() => {
  disposeAll();
});

/** A storage holding a session whose access token expired a minute ago. */
function storageWithExpiredSession(): { storage: SupportedStorage; session: Session } {
  const session = fake.issue(makeUser('exp@example.com'), -60);
  const storage = memoryStorage();
  storage.setItem(defaultStorageKey(fake.url), JSON.stringify(session));
  return { storage, session };
}

describe('refresh', () => {
  it('refreshes an expired stored session when the client starts, before INITIAL_SESSION', async () => {
    const { storage, session } = storageWithExpiredSession();
    const client = track(clientOf(fake, { auth: { storage } }));
    const rec = recordEvents(client);
    await rec.next('INITIAL_SESSION');
    expect(fake.count('/v1/auth/refresh')).toBe(1);
    expect(rec.events[0].session?.refresh_token).not.toBe(session.refresh_token);
    expect(rec.names()).toEqual(['INITIAL_SESSION']);
    const stored = JSON.parse(String(storage.getItem(defaultStorageKey(fake.url)))) as Session;
    expect(stored.access_token).toBe(rec.events[0].session?.access_token);
  });

  it('makes one refresh for many concurrent calls (single flight)', async () => {
    const { storage } = storageWithExpiredSession();
    let lockTurns = 0;
    const inner = processLock();
    const counting: LockFunction = (name, fn) => {
      lockTurns++;
      return inner(name, fn);
    };
    const client = track(clientOf(fake, { auth: { storage, autoRefreshToken: false, lock: counting } }));
    fake.refreshDelayMs = 100;
    const results = await Promise.all([
      client.from('todos').select(),
      client.from('todos').select().eq('id', 1),
      client.auth.getSession(),
      client.auth.getUser(),
      client.auth.refreshSession(),
    ]);
    expect(results.every((r) => r.error === null)).toBe(true);
    expect(fake.count('/v1/auth/refresh')).toBe(1);
    expect(lockTurns).toBe(1); // the callers shared one promise instead of queueing on the lock
    const bearers = new Set(fake.requests.filter((r) => r.path !== '/v1/auth/refresh').map((r) => r.headers.authorization));
    expect(bearers.size).toBe(1);
  });

  it('makes one refresh across two tabs sharing storage and a lock; the waiting tab adopts the new tokens', async () => {
    const { storage } = storageWithExpiredSession();
    const lock = processLock(); // stands in for navigator.locks, which every tab of an origin shares
    const options = { auth: { storage, lock, multiTab: true, autoRefreshToken: false } };
    const tabA = track(clientOf(fake, options));
    const tabB = track(clientOf(fake, options));
    const [recA, recB] = [recordEvents(tabA), recordEvents(tabB)];
    fake.refreshDelayMs = 100;
    const [a, b] = await Promise.all([tabA.auth.getSession(), tabB.auth.getSession()]);
    expect(fake.count('/v1/auth/refresh')).toBe(1);
    expect(a.data?.session?.access_token).toBe(b.data?.session?.access_token);
    await settle();
    // The broadcast of tab A must not make tab B announce the same refresh twice.
    expect(recA.names()).toEqual(['INITIAL_SESSION', 'TOKEN_REFRESHED']);
    expect(recB.names()).toEqual(['INITIAL_SESSION', 'TOKEN_REFRESHED']);
  });

  it('copes without a shared lock: the server reuse grace gives both tabs the same token set', async () => {
    const { storage } = storageWithExpiredSession();
    const tabA = track(clientOf(fake, { auth: { storage, multiTab: true, autoRefreshToken: false, lock: processLock() } }));
    const tabB = track(clientOf(fake, { auth: { storage, multiTab: true, autoRefreshToken: false, lock: processLock() } }));
    fake.refreshDelayMs = 50;
    const [a, b] = await Promise.all([tabA.auth.refreshSession(), tabB.auth.refreshSession()]);
    expect(a.error).toBeNull();
    expect(b.error).toBeNull();
    expect(a.data?.session.refresh_token).toBe(b.data?.session.refresh_token);
  });

  it('signs out when the server refuses the refresh token', async () => {
    const storage = memoryStorage();
    const key = defaultStorageKey(fake.url);
    const revoked = { ...fake.issue(makeUser('r@example.com'), -60), refresh_token: 'rt_unknown' };
    storage.setItem(key, JSON.stringify(revoked));
    const client = track(clientOf(fake, { auth: { storage, autoRefreshToken: false } }));
    const rec = recordEvents(client);
    await rec.next('INITIAL_SESSION');
    const res = await client.auth.getSession();
    expect(res.error).toMatchObject({ code: 'invalid_refresh_token', status: 401 });
    expect(storage.getItem(key)).toBeNull();
    expect((await client.auth.getSession()).data?.session).toBeNull();
    await rec.next('SIGNED_OUT');
    await client.from('todos').select();
    expect(fake.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('keeps the session when the refresh cannot reach the server', async () => {
    const { storage, session } = storageWithExpiredSession();
    const offline: typeof fetch = async (url, init) => {
      if (String(url).endsWith('/v1/auth/refresh')) throw new TypeError('fetch failed');
      return fetch(url, init);
    };
    const client = track(clientOf(fake, { fetch: offline, auth: { storage, autoRefreshToken: false } }));
    expect((await client.auth.getSession()).error).toMatchObject({ code: 'network_error', status: 0 });
    expect(JSON.parse(String(storage.getItem(defaultStorageKey(fake.url)))).refresh_token).toBe(session.refresh_token);
    // The request still carries the old token, so the app sees the server's token_expired rather than anon data.
    expect((await client.from('todos').select()).error).toMatchObject({ code: 'token_expired', status: 401 });
  });

  it('refreshes on its own before the token expires (timer)', async () => {
    const storage = memoryStorage();
    const soon = fake.issue(makeUser('t@example.com'), 3600);
    soon.expires_at = Math.floor(Date.now() / 1000) + 30; // inside the 60 s head start, outside the request margin
    storage.setItem(defaultStorageKey(fake.url), JSON.stringify(soon));
    const client = track(clientOf(fake, { auth: { storage } }));
    const rec = recordEvents(client);
    await rec.next('TOKEN_REFRESHED');
    expect(rec.names()).toEqual(['INITIAL_SESSION', 'TOKEN_REFRESHED']);
    expect(fake.count('/v1/auth/refresh')).toBe(1);
  });

  it('tells the other tabs about sign-in and sign-out', async () => {
    fake.users.set('tabs@example.com', { password: 'pw-123456', user: makeUser('tabs@example.com') });
    const storage = memoryStorage();
    const options = { auth: { storage, multiTab: true, lock: processLock() } };
    const tabA = track(clientOf(fake, options));
    const tabB = track(clientOf(fake, options));
    const recB = recordEvents(tabB);
    await tabA.auth.signIn({ email: 'tabs@example.com', password: 'pw-123456' });
    await recB.next('SIGNED_IN');
    expect((await tabB.auth.getSession()).data?.session?.user.email).toBe('tabs@example.com');
    await tabA.auth.signOut();
    await recB.next('SIGNED_OUT');
    expect((await tabB.auth.getSession()).data?.session).toBeNull();
  });

  it('hears the other tab even when its storage view lags behind (Chromium across processes)', async () => {
    fake.users.set('lag@example.com', { password: 'pw-123456', user: makeUser('lag@example.com') });
    const shared = laggingStorage(200);
    const lock = processLock();
    const tabA = track(clientOf(fake, { auth: { storage: shared.view(), multiTab: true, lock } }));
    const tabB = track(clientOf(fake, { auth: { storage: shared.view(), multiTab: true, lock } }));
    const recB = recordEvents(tabB);
    await tabA.auth.signIn({ email: 'lag@example.com', password: 'pw-123456' });
    await recB.next('SIGNED_IN');
    expect((await tabB.auth.getSession()).data?.session?.user.email).toBe('lag@example.com');
    await tabA.auth.signOut();
    await recB.next('SIGNED_OUT');
    expect((await tabB.auth.getSession()).data?.session).toBeNull();
  });

  it('ends two lagging tabs that refresh at once on one token set, without a refusal', async () => {
    const shared = laggingStorage(200);
    const views = [shared.view(), shared.view()];
    shared.seed(defaultStorageKey(fake.url), JSON.stringify(fake.issue(makeUser('lag2@example.com'), -60)));
    const lock = processLock();
    const [tabA, tabB] = views.map((storage) =>
      track(clientOf(fake, { auth: { storage, multiTab: true, lock, autoRefreshToken: false } })),
    );
    fake.refreshDelayMs = 50;
    const [a, b] = await Promise.all([tabA.auth.getSession(), tabB.auth.getSession()]);
    expect(a.error).toBeNull();
    expect(b.error).toBeNull();
    expect(a.data?.session?.refresh_token).toBe(b.data?.session?.refresh_token);
    expect(fake.count('/v1/auth/refresh')).toBeLessThanOrEqual(2);
  });
});
