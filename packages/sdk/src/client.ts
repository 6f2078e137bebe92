import { AuthClient } from './auth/auth-client.js';
import { layeredLock, navigatorLock, processLock, storageLock } from './auth/lock.js';
import { SessionManager } from './auth/session-manager.js';
import { browserStorage, defaultStorageKey, isBrowser, memoryStorage } from './auth/storage.js';
import { type HttpConfig, normalizeUrl } from './fetch.js';
import type { RestContext } from './rest/builder.js';
import { QueryBuilder } from './rest/query-builder.js';
import type { GenericDatabase, TableDef, TableName, UntypedDatabase } from './rest/types.js';
import { RealtimeClient } from './realtime/client.js';
import type {
  RealtimeChange,
  RealtimeOptions,
  RealtimeStatusCallback,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
} from './realtime/types.js';
import { StorageClient } from './storage/index.js';
import type { LockFunction, SupportedStorage } from './types.js';

export interface AuthOptions {
  /** Keep the session across reloads. Default true; false keeps it in memory only. */
  persistSession?: boolean;
  /** Where to keep it. Default: `localStorage` in a browser, memory elsewhere. */
  storage?: SupportedStorage;
  /** Storage key. Default `plinth.auth.<host of the project URL>`. */
  storageKey?: string;
  /** Refresh the access token before it expires. Default true. */
  autoRefreshToken?: boolean;
  /**
   * Share sign-in state with other tabs (lock + BroadcastChannel / storage events). Default:
   * true when the session is in `localStorage`, false otherwise (memory, custom adapters).
   */
  multiTab?: boolean;
  /** Replace the cross-tab lock (default `navigator.locks`, else a lease in `localStorage`). */
  lock?: LockFunction;
}

export interface ClientOptions {
  auth?: AuthOptions;
  /** Custom fetch implementation. */
  fetch?: typeof fetch;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /** Realtime: the WebSocket class where the platform has none (Node 20), reconnection and heartbeat timings. */
  realtime?: RealtimeOptions;
}

/** `client.realtime`, typed by the generated `Database` type. */
export interface RealtimeApi<DB extends GenericDatabase> {
  /**
   * Changes of a table pushed as they commit, under the signed-in user's row-level security;
   * resumes by itself after a drop or a server restart (docs/realtime.md).
   * @example
   * const sub = client.realtime.subscribe({ table: 'todos', filter: 'eq.list_id=7' },
   *   (change) => console.log(change.op, change.row?.title), (status) => console.log(status));
   * await sub.unsubscribe();
   */
  subscribe<T extends TableName<DB>>(
    options: RealtimeSubscribeOptions<T>,
    onChange: (change: RealtimeChange<TableDef<DB, T>['Row']>) => void,
    onStatus?: RealtimeStatusCallback,
  ): RealtimeSubscription;
  /** Ends every subscription and closes the connection. */
  dispose(): void;
}

/** The object `createClient` returns. */
export interface PlinthClient<DB extends GenericDatabase = UntypedDatabase> {
  auth: AuthClient;
  /**
   * Starts a query on a table or view of the `public` schema.
   * @example const { data, error } = await client.from('todos').select('id,title').eq('done', false);
   */
  from<T extends TableName<DB>>(table: T): QueryBuilder<TableDef<DB, T>>;
  /**
   * Files in buckets, under the project's policies on `storage.objects`.
   * @example const { data, error } = await client.storage.from('avatars').upload(`${userId}/me.png`, file, { upsert: true });
   */
  storage: StorageClient;
  /** Changes of tables as they happen (docs/realtime.md). */
  realtime: RealtimeApi<DB>;
}

/**
 * Creates a client for one Plinth project. The stored session (if any) is loaded at once;
 * every call waits for that, so there is nothing to await here.
 * @example
 * import { createClient } from '@plinth/sdk';
 * import type { Database } from './database.types';
 * const client = createClient<Database>('https://api.example.com', 'pk_…');
 * const { data, error } = await client.from('todos').select('id,title').order('id').limit(10);
 */
export function createClient<DB extends GenericDatabase = UntypedDatabase>(
  url: string,
  publicKey: string,
  options: ClientOptions = {},
): PlinthClient<DB> {
  const base = normalizeUrl(url);
  const http: HttpConfig = { url: base, publicKey, fetch: options.fetch, headers: options.headers };
  const auth = options.auth ?? {};
  const local = auth.persistSession === false ? null : isBrowser() && !auth.storage ? browserStorage() : null;
  const storage = auth.persistSession === false ? memoryStorage() : (auth.storage ?? local ?? memoryStorage());
  const multiTab = auth.multiTab ?? local !== null;
  const sharedLock = auth.lock ?? (multiTab ? (navigatorLock() ?? (local ? storageLock(local) : null)) : null);
  const session = new SessionManager({
    http,
    storage,
    storageKey: auth.storageKey ?? defaultStorageKey(base),
    autoRefresh: auth.autoRefreshToken !== false,
    lock: layeredLock(processLock(), sharedLock),
    multiTab,
  });
  const rest: RestContext = {
    http,
    accessToken: () => session.accessToken(),
    refresh: async () => (await session.refresh()).data?.access_token ?? null,
  };
  const realtime = new RealtimeClient({
    http,
    accessToken: () => session.accessToken(),
    refresh: async () => (await session.refresh()).data?.access_token ?? null,
    events: session.events,
    options: options.realtime ?? {},
  });
  return {
    auth: new AuthClient({ http, session, oauthFlows: new Set() }),
    realtime: {
      subscribe: (o, onChange, onStatus) => realtime.subscribe(o, onChange, onStatus),
      dispose: () => realtime.dispose(),
    },
    from: (table) => new QueryBuilder(rest, table),
    // The same token and refresh as the database: storage requests are decided by RLS too.
    storage: new StorageClient(rest),
  };
}
