import type { AuthChangeEvent, Session } from '../types.js';

/**
 * Called with what another tab did. The session travels with the event because Chromium
 * updates another tab's `localStorage` asynchronously: a tab that re-read storage on the
 * message could still see the old session (and miss a sign-out). With the `storage` event
 * fallback the event name is null (the listener infers it) and the session is the new value.
 */
export type TabListener = (event: AuthChangeEvent | null, session: Session | null) => void;

/** A link to the other tabs of the same project. */
export interface TabChannel {
  post(event: AuthChangeEvent, session: Session | null): void;
  close(): void;
}

/**
 * Opens the cross-tab channel: BroadcastChannel where it exists, else the `storage` event that
 * browsers fire in the other tabs when `localStorage[storageKey]` changes (then `post` has
 * nothing to do: the write itself is the message). Null when neither exists.
 * @example const channel = openTabChannel(key, (event, session) => manager.onRemoteChange(event, session));
 */
export function openTabChannel(storageKey: string, listener: TabListener): TabChannel | null {
  if (typeof BroadcastChannel === 'function') {
    const channel = new BroadcastChannel(`plinth.auth:${storageKey}`);
    channel.onmessage = (e: MessageEvent) => {
      const data = e.data as { event?: unknown; session?: unknown } | null;
      if (data && typeof data.event === 'string') listener(data.event as AuthChangeEvent, (data.session as Session | null) ?? null);
    };
    // A channel keeps a Node process alive; unref lets scripts exit.
    (channel as unknown as { unref?: () => void }).unref?.();
    return {
      post: (event, session) => channel.postMessage({ event, session }),
      close: () => channel.close(),
    };
  }
  const target = globalThis as unknown as { addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener };
  if (typeof target.addEventListener !== 'function') return null;
  const onStorage = (e: Event) => {
    const { key, newValue } = e as StorageEvent;
    if (key === storageKey) listener(null, parseSession(newValue));
  };
  target.addEventListener('storage', onStorage);
  return {
    post: () => {},
    close: () => target.removeEventListener?.('storage', onStorage),
  };
}

function parseSession(raw: string | null): Session | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Session | null;
    return value && typeof value.access_token === 'string' ? value : null;
  } catch {
    return null;
  }
}
