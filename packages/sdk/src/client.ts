import { AuthClient } from './auth/auth-client.js';
import { layeredLock, navigatorLock, processLock, storageLock } from './auth/lock.js';
import { SessionManager } from './auth/session-manager.js';
import { browserStorage, defaultStorageKey, isBrowser, memoryStorage } from './auth/storage.js';
import { type HttpConfig, normalizeUrl } from './fetch.js';
import type { ChannelOptions, RealtimeChannel } from './realtime/channel.js';
import { RealtimeClient } from './realtime/client.js';
import type {
  RealtimeChange,
  RealtimeOptions,
  RealtimeStatusCallback,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
} from './realtime/types.js';
import type { RestContext } from './rest/builder.js';
import { QueryBuilder } from './rest/query-builder.js';
import { type RpcBuilder, type RpcOptions, rpcBuilder } from './rest/rpc.js';
import type { FunctionDef, FunctionName, FunctionResult, GenericDatabase, TableDef, TableName, UntypedDatabase } from './rest/types.js';
import { FunctionsClient } from './functions.js';
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
  /**
   * A channel: broadcast between clients and presence, on the same connection (docs/realtime.md, "Channels").
   * @example client.realtime.channel('room-1').on('broadcast', 'message', (p) => show(p)).subscribe();
   */
  channel(name: string, options?: ChannelOptions): RealtimeChannel;
  /** Ends every subscription and channel, and closes the connection. */
  dispose(): void;
}

/** The object `createClient` returns. */
export interface PlinthClient<DB extends GenericDatabase = UntypedDatabase> {
  auth: AuthClient;
  /**
   * Starts a query on a table or view of the `public` schema.
   * @example const { data, error } = await client.from('todos').select('id,title').eq('done', false);
   */
  from<T extends TableName<DB>>(table: T): QueryBuilder<DB['public'], T>;
  /**
   * Calls a function of the `public` schema with named arguments (POST; `{ get: true }` for
   * stable ones). Resolves to its value, its row, or its rows — which, for a set, take
   * `select()`, filters, `order()` and `range()` like a table. Functions are closed until the
   * project grants them (`grant execute on function … to authenticated`).
   * @example const { data } = await client.rpc('add', { a: 1, b: 2 }); // 3
   * @example const { data } = await client.rpc('posts_by', { author: 1 }).select('id, title').order('id').limit(10);
   */
  rpc<F extends FunctionName<DB>, A extends FunctionDef<DB, F>['Args']>(
    fn: F,
    args?: A & NoExtraKeys<A, FunctionDef<DB, F>['Args']>,
    options?: RpcOptions,
  ): RpcCall<FunctionResult<FunctionDef<DB, F>, A>>;
  /**
   * Files in buckets, under the project's policies on `storage.objects`.
   * @example const { data, error } = await client.storage.from('avatars').upload(`${userId}/me.png`, file, { upsert: true });
   */
  storage: StorageClient;
  /**
   * The project's functions (docs/functions.md), called as the signed-in user (else with the public key).
   * @example const { data, error } = await client.functions.invoke('hello', { body: { name: 'Ada' } });
   */
  functions: FunctionsClient;
  /** Changes of tables as they happen (docs/realtime.md). */
  realtime: RealtimeApi<DB>;
  /**
   * A channel (broadcast and presence), as `client.realtime.channel(name)`.
   * @example const room = client.channel('room-1').on('broadcast', 'typing', (p) => show(p)).subscribe();
   */
  channel(name: string, options?: ChannelOptions): RealtimeChannel;
}

/** Keys of any overload's arguments. */
type KeysOfAny<U> = U extends unknown ? keyof U : never;
/** Refuses keys no overload takes (`A` is inferred, so TypeScript would not check excess keys by itself). */
type NoExtraKeys<A, Args> = { [K in Exclude<keyof A, KeysOfAny<Args>>]: never };

/** The builder `rpc()` gives: rows to filter for a set, a value otherwise. */
export type RpcCall<Res> = [Res] extends [{ returns: infer R; set: infer S }]
  ? boolean extends S
    ? // biome-ignore lint/suspicious/noExplicitAny: an untyped client's function: anything goes
      RpcBuilder<Record<string, any>, any>
    : [S] extends [true]
      ? RpcBuilder<R extends object ? R : Record<string, never>, R[]>
      : RpcBuilder<Record<string, never>, R>
  : // biome-ignore lint/suspicious/noExplicitAny: overloads whose arguments do not tell them apart
    RpcBuilder<Record<string, any>, any>;

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
      channel: (name, o) => realtime.channel(name, o),
      dispose: () => realtime.dispose(),
    },
    channel: (name, o) => realtime.channel(name, o),
    from: (table) => new QueryBuilder(rest, table),
    rpc: (fn, args, options = {}) => rpcBuilder(rest, fn, args ?? {}, options) as never,
    // The same token and refresh as the database: storage requests are decided by RLS too.
    storage: new StorageClient(rest),
    functions: new FunctionsClient(http, rest.accessToken, rest.refresh),
  };
}
