/** One small database interface over PGlite (embedded) and postgres.js (real PostgreSQL). */
import { isConnectionFailure } from './errors.js';

export interface Field {
  name: string;
  dataTypeID: number;
}

export interface QueryResult<R = Record<string, unknown>> {
  rows: R[];
  fields: Field[];
  rowCount: number;
  command: string;
}

export interface Queryable {
  /** One statement with bound parameters (`$1`, `$2`, …). */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/** The role and JWT claims a request's transaction runs under (PostgREST's pre-request). */
export interface RoleContext {
  role: 'anon' | 'authenticated' | 'service';
  /** JSON text of the claims, readable in SQL as `auth.jwt()`. */
  claims: string;
  /**
   * What `auth.uid()` returns, worked out once by the caller (runAs only): the claims' `sub`
   * when it is a uuid, or null for no user. Left out, `auth.uid()` reads the claims per call.
   */
  uid?: string | null;
}

/** What runAs sets `request.jwt.claim.sub` to: a uuid, '-' for no user, null for "read the claims" (set as ''). */
export const runAsUid = (ctx: RoleContext): string | null => (ctx.uid === undefined ? null : (ctx.uid ?? '-'));

export interface ScriptOptions {
  /** Abort after this many milliseconds (PostgreSQL only; PGlite cannot cancel). */
  timeoutMs?: number;
  params?: unknown[];
  /**
   * Run the script as this role with this search_path, for the script only (the SQL runner
   * runs as a role that cannot read secrets; docs/security.md). Trusted constants only.
   */
  as?: { role: string; searchPath: string };
}

/** The statements that switch to `as`; `local` ends them with the transaction. */
export function setAsSql(as: ScriptOptions['as'], local: boolean): string[] {
  if (!as) return [];
  if (!/^[a-z_][a-z0-9_]*$/.test(as.role) || !/^[a-z_][a-z0-9_]*(, *[a-z_][a-z0-9_]*)*$/.test(as.searchPath)) {
    throw new Error('script: role and searchPath must be plain identifiers');
  }
  const scope = local ? 'local ' : '';
  return [`set ${scope}role ${as.role}`, `set ${scope}search_path = ${as.searchPath}`];
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * The API's hot path in one round trip (db/run-as.ts): role and claims set for one
   * transaction, `sql` (prepared once per connection and role) run as that role, so RLS
   * applies, then a role it changed refused (42501, rolled back). Its values are `$1[1]`,
   * `$1[2]`, … of `params` (one `text[]`). With `rows` the statement must return one row
   * `(body text, n int8, total int8)`; without, `n` is its row count.
   */
  runAs(ctx: RoleContext, sql: string, params: string[], rows: boolean): Promise<RunAsResult>;
  /** Runs a script of one or more statements; one result per statement (SQL runner, migrations). */
  script(sql: string, options?: ScriptOptions): Promise<QueryResult[]>;
  /** LISTEN on a channel; resolves to an unlisten function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Resolves when the database answers, rejects (fast) when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * PostgreSQL only: from now on `runAs` runs on connections of this login, which can only
   * become anon, authenticated and service (src/db/api-login.ts). Rejects when it cannot log in.
   */
  useApiLogin?(url: string): Promise<void>;
  /**
   * PGlite only: a consistent copy of the whole database as a tar archive of its data folder,
   * taken while it serves (a checkpoint, then the files while no statement runs; backups).
   */
  dumpDataDir?(): Promise<Uint8Array>;
  /** PostgreSQL: statements under way (queued for or running on a connection) and the pools' size, for GET /metrics. */
  stats?(): { inFlight: number; poolSize: number };
  /**
   * PostgreSQL without event triggers (migration 0015): `script` calls
   * `plinth.secure_new_relations()` after each statement, in the statement's transaction.
   * Set by `migrateSystem`.
   */
  secureNewRelations?: boolean;
}

/**
 * The database cannot be set up for Plinth (a missing privilege, a login that cannot connect).
 * Its message is one line naming the cause and the fix; `plinth start` prints it as is.
 */
export class DbSetupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DbSetupError';
  }
}

export interface RunAsResult {
  body: string | null;
  n: number;
  total: number | null;
}

/** A driver error normalised to what the HTTP layer needs. */
export class DbError extends Error {
  constructor(
    message: string,
    readonly sqlstate: string | undefined,
    readonly detail?: string,
    readonly constraint?: string,
    readonly position?: number,
    readonly column?: string,
    readonly table?: string,
    /** The HINT of the error (`raise exception … using hint = '…'`). */
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'DbError';
  }
}

/** The database cannot be reached (connection refused, closed, timed out). */
export class DbUnavailableError extends Error {
  constructor(
    message = 'The database is unavailable.',
    /** The cause in a few words, e.g. `connection refused (ECONNREFUSED)`. */
    readonly reason = 'no answer',
  ) {
    super(message);
    this.name = 'DbUnavailableError';
  }
}

const UNAVAILABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  CONNECT_TIMEOUT: 'connection timed out',
  EPIPE: 'connection closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  CONNECTION_CLOSED: 'connection closed',
  CONNECTION_ENDED: 'connection ended',
  CONNECTION_DESTROYED: 'connection closed',
  '57P01': 'the server is shutting down',
  '57P02': 'the server is shutting down',
  '57P03': 'the server is starting up',
};

function unavailable(code: string): DbUnavailableError {
  const reason = `${UNAVAILABLE[code] ?? (code.startsWith('08') ? 'connection failure' : 'unavailable')} (${code})`;
  return new DbUnavailableError(`The database is unavailable: ${reason}.`, reason);
}

export function toDbError(err: unknown): Error {
  if (err instanceof DbError || err instanceof DbUnavailableError) return err;
  const e = err as Record<string, unknown> & { message?: string };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  // Node's EPIPE has the shape of a SQLSTATE: the connection codes are looked at first.
  if (code && Object.hasOwn(UNAVAILABLE, code)) return unavailable(code);
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    if (isConnectionFailure(code)) return unavailable(code);
    const pos = e.position !== undefined ? Number(e.position) : undefined;
    return new DbError(
      String(e.message ?? 'database error'),
      code,
      e.detail as string | undefined,
      (e.constraint ?? e.constraint_name) as string | undefined,
      Number.isFinite(pos) ? pos : undefined,
      (e.column ?? e.column_name) as string | undefined,
      (e.table ?? e.table_name) as string | undefined,
      e.hint as string | undefined,
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}
