import type { Session, SupportedStorage, User } from '../types.js';

/**
 * A storage adapter that keeps values in this JS realm only (Node, tests, `persistSession: false`).
 * @example const storage = memoryStorage(); storage.setItem('k', 'v'); storage.getItem('k') // 'v'
 */
export function memoryStorage(): SupportedStorage {
  const values = new Map<string, string>();
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => {
      values.set(key, value);
    },
    removeItem: (key) => {
      values.delete(key);
    },
  };
}

/**
 * The browser's `localStorage` when it exists and accepts writes, else null. Safari in private
 * mode and sandboxed iframes expose an object that throws on use, so it is probed first; Node 22+
 * may define a global `localStorage` too, which is why the caller only asks in a browser.
 * @example const storage = browserStorage() ?? memoryStorage();
 */
export function browserStorage(): SupportedStorage | null {
  try {
    const storage = (globalThis as { localStorage?: Storage }).localStorage;
    if (!storage) return null;
    const probe = '__plinth_probe__';
    storage.setItem(probe, probe);
    storage.removeItem(probe);
    return storage;
  } catch {
    return null;
  }
}

/**
 * The default storage key: one per project, so two projects on one origin keep separate sessions.
 * @example defaultStorageKey('https://api.example.com') // 'plinth.auth.api.example.com'
 */
export function defaultStorageKey(url: string): string {
  return `plinth.auth.${new URL(url).host}`;
}

/** True when running in a page (not Node, not a worker without a document). */
export function isBrowser(): boolean {
  return typeof window !== 'undefined' && typeof document !== 'undefined';
}

/**
 * Reads and JSON-decodes the session under `key`. A value that is not a usable session (written
 * by an older SDK, edited by hand) counts as none: the user signs in again rather than the SDK
 * sending garbage as a token.
 * @example const session = await readSession(localStorage, 'plinth.auth.api.example.com');
 */
export async function readSession(storage: SupportedStorage, key: string): Promise<Session | null> {
  let raw: string | null;
  try {
    raw = await storage.getItem(key);
  } catch {
    return null;
  }
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<Session> | null;
    if (
      value &&
      typeof value.access_token === 'string' &&
      typeof value.refresh_token === 'string' &&
      typeof value.expires_at === 'number'
    ) {
      return value as Session;
    }
  } catch {
    // fall through: unreadable means signed out
  }
  return null;
}

/**
 * Stores the session (or removes it for null).
 * @example await writeSession(storage, key, session);
 */
export async function writeSession(storage: SupportedStorage, key: string, session: Session | null): Promise<void> {
  if (session) await storage.setItem(key, JSON.stringify(session));
  else await storage.removeItem(key);
}

/**
 * Completes a token set from the server: `expires_at` is computed from `expires_in` when absent
 * (the OAuth fragment carries only `expires_in`).
 * @example toSession({ access_token: 'a', refresh_token: 'r', expires_in: 3600, token_type: 'bearer', user })
 */
export function toSession(raw: Partial<Session> & { access_token: string; refresh_token: string }, user?: User): Session {
  const expiresIn = Number(raw.expires_in ?? 3600);
  const expiresAt = typeof raw.expires_at === 'number' ? raw.expires_at : Math.floor(Date.now() / 1000) + expiresIn;
  return {
    access_token: raw.access_token,
    token_type: 'bearer',
    expires_in: expiresIn,
    expires_at: expiresAt,
    refresh_token: raw.refresh_token,
    user: (raw.user ?? user) as User,
    ...(raw.next_aal ? { next_aal: raw.next_aal } : {}),
  };
}
