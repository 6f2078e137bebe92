import postgres from 'postgres';
import { databaseWhere } from '../config/index.js';
import { commandOf, splitStatements } from './statements.js';
import { type Db, DbError, DbUnavailableError, type QueryResult, type Queryable, setAsSql, toDbError } from './types.js';
import { WirePool } from './wire-pool.js';

type Sql = postgres.Sql<Record<string, never>>;
type Row = Record<string, unknown>;

/** Statements that manage or cannot run inside a transaction block. */
const NO_TX =
  /^\s*(begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|prepare\s+transaction|vacuum|create\s+database|drop\s+database|alter\s+system|create\s+(unique\s+)?index\s+concurrently|drop\s+index\s+concurrently|reindex\b.*concurrently|cluster)\b/i;

const int8 = (v: string) => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
};

const sqlTypes = {
  bigint: { to: 20, from: [20], serialize: (x: unknown) => String(x), parse: int8 },
  // Dates and times stay as PostgreSQL's text, the same on both drivers.
  date: {
    to: 1184,
    from: [1082, 1083, 1114, 1184, 1266],
    serialize: (x: unknown) => (x instanceof Date ? x.toISOString() : String(x)),
    parse: (x: string) => x,
  },
  bytea: { to: 17, from: [17], serialize: (x: unknown) => x as string, parse: (x: string) => x },
  // A string bound to a json/jsonb parameter is JSON text already, as PGlite takes it;
  // postgres.js would encode it again and store a JSON string instead of the object.
  json: {
    to: 114,
    from: [114, 3802],
    serialize: (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)),
    parse: (x: string) => JSON.parse(x),
  },
} as unknown as Record<string, postgres.PostgresType>;

function shape(r: postgres.RowList<Row[]>, fallbackCommand = 'OK'): QueryResult {
  const cols = (r.columns ?? []) as Array<{ name: string; type: number }>;
  return {
    rows: Array.from(r),
    fields: cols.map((c) => ({ name: c.name, dataTypeID: c.type })),
    rowCount: r.count ?? r.length,
    command: r.command ?? fallbackCommand,
  };
}

/**
 * Seconds postgres.js waits before a connection's next attempt after one failed. Its default
 * grows 3^n (up to 20 s, the count shared by the whole pool), so after an outage that made many
 * requests fail, the pool waited up to 20 s to try again: requests came back 3 to 10 s after
 * the database did, and a request that arrived meanwhile waited that long too. A refused
 * attempt costs next to nothing, so: at most 250 ms, and the pool is back within a quarter of a
 * second of the database (db/outage.postgres.test.ts, test/faults.postgres.test.ts).
 */
export const RECONNECT_BACKOFF_S = (attempts: number) => Math.min(0.05 * attempts, 0.25);

/**
 * A real PostgreSQL through postgres.js. Connection failures surface as
 * `DbUnavailableError` within about a second, and the pool reconnects by itself.
 * @example const db = await openPostgres('postgres://localhost/app', { max: 10 });
 */
export async function openPostgres(url: string, options: { max?: number; connectTimeoutS?: number } = {}): Promise<Db> {
  const connectTimeoutS = options.connectTimeoutS ?? 1;
  const pool = (login: string, applicationName: string): Sql =>
    postgres(login, {
      max: options.max ?? 10,
      connect_timeout: connectTimeoutS,
      idle_timeout: 60,
      max_lifetime: 60 * 30,
      onnotice: () => undefined,
      prepare: true,
      backoff: RECONNECT_BACKOFF_S,
      connection: { application_name: applicationName },
      types: sqlTypes,
    }) as unknown as Sql;
  // The owner's pool: migrations, the auth service, settings, the outbox, the schema cache.
  const sql = pool(url, 'plinth');
  // runAs speaks the wire protocol itself (db/run-as.ts), on the API login's connections
  // (useApiLogin): the requests' SQL never runs on a connection that could switch back to the
  // owner. Before useApiLogin (tests, tools) on connections of the owner's login.
  const wirePool = (login: string, applicationName: string) =>
    new WirePool(login, { max: options.max ?? 10, connectTimeoutS, applicationName, backoff: RECONNECT_BACKOFF_S });
  let api: WirePool | null = null;
  let owners: WirePool | null = null;

  // An outage names the database (host, port, name; never the user or password) and the cause.
  const where = databaseWhere(url);
  const located = (err: unknown): Error => {
    const e = toDbError(err);
    return e instanceof DbUnavailableError ? new DbUnavailableError(`The database at ${where} is unavailable: ${e.reason}.`, e.reason) : e;
  };
  let inFlight = 0;
  const run = async <T>(fn: () => Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await fn();
    } catch (err) {
      throw located(err);
    } finally {
      inFlight--;
    }
  };

  const queryable = (s: Sql | postgres.TransactionSql<Record<string, never>>): Queryable => ({
    query: <R>(text: string, params: unknown[] = []) =>
      run(async () => shape(await s.unsafe<Row[]>(text, params as postgres.ParameterOrJSON<never>[])) as QueryResult<R>),
  });

  const db: Db = {
    kind: 'postgres',
    stats: () => ({ inFlight, poolSize: (options.max ?? 10) * (api || owners ? 2 : 1) }),
    ...queryable(sql),
    runAs: (ctx, text, params, rows) => run(() => (api ?? (owners ??= wirePool(url, 'plinth'))).runAs(ctx, text, params, rows)),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => run(async () => (await sql.begin((tx) => fn(queryable(tx)))) as T),
    script: (text, options = {}) =>
      run(async () => {
        const timeout = options.timeoutMs ? Math.floor(options.timeoutMs) : 0;
        // Every script gets a connection of its own, closed right after: whatever it changes
        // in its session (SET, SET ROLE, temp tables, advisory locks, an open transaction)
        // dies with that connection and never reaches the pool the API runs on.
        const own = postgres(url, {
          max: 1,
          connect_timeout: options.timeoutMs ? Math.max(1, connectTimeoutS) : connectTimeoutS,
          onnotice: () => undefined,
          connection: timeout ? { statement_timeout: timeout, application_name: 'plinth-sql' } : { application_name: 'plinth-sql' },
          types: sqlTypes,
        }) as unknown as Sql;
        // Without event triggers, what a statement created in public is secured right after it,
        // in its transaction, as the trigger would (migration 0015).
        const secure = async (conn: Sql | postgres.TransactionSql<Record<string, never>>) => {
          if (db.secureNewRelations) await conn.unsafe('select plinth.secure_new_relations()');
        };
        try {
          if (options.params?.length) {
            if (!options.as) {
              const result = shape(await own.unsafe<Row[]>(text, options.params as never[]));
              await secure(own);
              return [result];
            }
            return (await own.begin(async (tx) => {
              for (const s of setAsSql(options.as, true)) await tx.unsafe(s);
              const result = shape(await tx.unsafe<Row[]>(text, options.params as never[]));
              await secure(tx);
              return [result];
            })) as unknown as QueryResult[];
          }
          const statements = splitStatements(text);
          // One statement at a time, so each keeps its own result (postgres.js drops row-less
          // results of a multi-statement query).
          const runAll = async (conn: Sql | postgres.TransactionSql<Record<string, never>>) => {
            const results: QueryResult[] = [];
            let offset = 0;
            for (const stmt of statements) {
              const at = text.indexOf(stmt, offset);
              offset = at >= 0 ? at + stmt.length : offset;
              try {
                results.push(shape((await conn.unsafe(stmt).simple()) as postgres.RowList<Row[]>, commandOf(stmt)));
                await secure(conn);
              } catch (err) {
                const e = toDbError(err);
                if (e instanceof DbError && e.position !== undefined && at >= 0) {
                  throw new DbError(e.message, e.sqlstate, e.detail, e.constraint, e.position + at, e.column, e.table, e.hint);
                }
                throw e;
              }
            }
            return results;
          };
          if (!statements.some((s) => NO_TX.test(s))) {
            // One transaction, so the script is atomic.
            return (await own.begin(async (tx) => {
              for (const s of setAsSql(options.as, true)) await tx.unsafe(s);
              return runAll(tx);
            })) as unknown as QueryResult[];
          }
          // The script manages transactions itself (or runs VACUUM and the like).
          for (const s of setAsSql(options.as, false)) await own.unsafe(s);
          return await runAll(own);
        } finally {
          await own.end({ timeout: 1 });
        }
      }),
    async listen(channel, onNotify) {
      const sub = await run(() => sql.listen(channel, (payload) => onNotify(payload)));
      return async () => {
        await sub.unlisten().catch(() => undefined);
      };
    },
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DbUnavailableError(undefined, 'no answer within 1 s')), 1000);
      });
      try {
        // After the database restarted, a pooled connection may still be the old, dead one: the
        // first query on it fails and the pool drops it. One more try (on a new connection)
        // within the same second tells that apart from an outage.
        await Promise.race([sql`select 1`.catch(() => sql`select 1`), deadline]);
      } catch (err) {
        throw located(err);
      } finally {
        clearTimeout(timer);
      }
    },
    async useApiLogin(login: string) {
      const next = wirePool(login, 'plinth-api');
      try {
        await next.connect();
      } catch (err) {
        await next.end(1).catch(() => undefined);
        throw err;
      }
      const previous = [api, owners];
      api = next;
      owners = null;
      await Promise.all(previous.map((p) => p?.end(5)));
    },
    async close() {
      await Promise.all([sql.end({ timeout: 5 }), api?.end(5), owners?.end(5)]);
    },
  };
  return db;
}
