import type { AuthChangeEvent } from '../types.js';

/** What one tab tells the others; the session itself is re-read from the shared storage. */
export interface TabMessage {
  event: AuthChangeEvent;
}

/** A link to the other tabs of the same project. */
export interface TabChannel {
  post(message: TabMessage): void;
  close(): void;
}

/**
 * Opens the cross-tab channel: BroadcastChannel where it exists, else the `storage` event that
 * browsers fire in the other tabs when `localStorage[storageKey]` changes (in which case the
 * event is inferred by the listener and `post` has nothing to do). Null when neither exists.
 * @example const channel = openTabChannel(key, (message) => manager.onRemoteChange(message.event));
 */
export function openTabChannel(storageKey: string, onMessage: (message: TabMessage | null) => void): TabChannel | null {
  if (typeof BroadcastChannel === 'function') {
    const channel = new BroadcastChannel(`plinth.auth:${storageKey}`);
    channel.onmessage = (e: MessageEvent) => {
      const data = e.data as Partial<TabMessage> | null;
      if (data && typeof data.event === 'string') onMessage({ event: data.event });
    };
    // A channel keeps a Node process alive; the timer-like unref lets scripts exit.
    (channel as unknown as { unref?: () => void }).unref?.();
    return {
      post: (message) => channel.postMessage(message),
      close: () => channel.close(),
    };
  }
  const target = globalThis as unknown as { addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener };
  if (typeof target.addEventListener !== 'function') return null;
  const listener = (e: Event) => {
    if ((e as StorageEvent).key === storageKey) onMessage(null);
  };
  target.addEventListener('storage', listener);
  return {
    post: () => {},
    close: () => target.removeEventListener?.('storage', listener),
  };
}
