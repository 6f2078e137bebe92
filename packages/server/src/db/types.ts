/** One small database interface over PGlite (embedded) and postgres.js (real PostgreSQL). */

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
}

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
   * Sets role and claims for one transaction and runs one statement in it, in as few
   * round trips as the driver allows. RLS applies to `anon` and `authenticated`.
   */
  queryAs<R = Record<string, unknown>>(ctx: RoleContext, sql: string, params?: unknown[]): Promise<QueryResult<R>>;
  /** Runs a script of one or more statements; one result per statement (SQL runner, migrations). */
  script(sql: string, options?: ScriptOptions): Promise<QueryResult[]>;
  /** LISTEN on a channel; resolves to an unlisten function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Resolves when the database answers, rejects (fast) when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The SQL both drivers send before a request's statement (transaction-local settings). */
export const SET_ROLE_SQL = "select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)";

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
  ) {
    super(message);
    this.name = 'DbError';
  }
}

/** The database cannot be reached (connection refused, closed, timed out). */
export class DbUnavailableError extends Error {
  constructor(message = 'The database is unavailable.') {
    super(message);
    this.name = 'DbUnavailableError';
  }
}

export function toDbError(err: unknown): Error {
  if (err instanceof DbError || err instanceof DbUnavailableError) return err;
  const e = err as Record<string, unknown> & { message?: string };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') {
      return new DbUnavailableError();
    }
    const pos = e.position !== undefined ? Number(e.position) : undefined;
    return new DbError(
      String(e.message ?? 'database error'),
      code,
      e.detail as string | undefined,
      (e.constraint ?? e.constraint_name) as string | undefined,
      Number.isFinite(pos) ? pos : undefined,
      (e.column ?? e.column_name) as string | undefined,
      (e.table ?? e.table_name) as string | undefined,
    );
  }
  if (
    code &&
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|CONNECT_TIMEOUT|CONNECTION_CLOSED|CONNECTION_ENDED|CONNECTION_DESTROYED)$/.test(
      code,
    )
  ) {
    return new DbUnavailableError();
  }
  return err instanceof Error ? err : new Error(String(err));
}
