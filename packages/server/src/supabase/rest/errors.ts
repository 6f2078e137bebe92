/**
 * PostgREST's error shape `{code, message, details, hint}` for what rest/ and the database
 * refused: a database error keeps PostgreSQL's own SQLSTATE, message, detail and hint (as
 * PostgREST sends them, which its clients compare) with PostgREST's SQLSTATE → status map
 * (its `Error.hs`); rest/'s own refusals become the PGRST code PostgREST gives the same case.
 */
import { type Db, DbError, DbUnavailableError } from '../../db/index.js';
import { ApiError, type Principal } from '../../http/index.js';
import { functionAccess, type SchemaSnapshot } from '../../rest/index.js';
import { fuzzyBest } from './fuzzy.js';

export interface PostgrestErrorBody {
  code: string;
  message: string;
  details: unknown;
  hint: string | null;
}

/** An error to answer as is: already in PostgREST's shape (PGRST116, PGRST106…). */
export class PostgrestError extends Error {
  constructor(
    readonly status: number,
    readonly body: PostgrestErrorBody,
  ) {
    super(body.message);
    this.name = 'PostgrestError';
  }
}

export const pgrst = (status: number, code: string, message: string, details: unknown = null, hint: string | null = null) =>
  new PostgrestError(status, { code, message, details, hint });

/**
 * PostgREST's HTTP status of a SQLSTATE (Error.hs, `pgErrorStatus`); `anon` turns 42501 into
 * 401 as PostgREST does for a request without a user.
 * @example sqlstateStatus('23505', false) // 409
 */
export function sqlstateStatus(code: string, anon: boolean): number {
  switch (code) {
    case '23503':
    case '23505':
    case '40001':
      return 409;
    case '25006':
      return 405;
    case '42883':
    case '42P01':
      return 404;
    case '42501':
      return anon ? 401 : 403;
    case '42P17':
    case '57014':
      return 500;
    case 'P0001':
      return 400;
  }
  const cls = code.slice(0, 2);
  switch (cls) {
    case '08':
    case '53':
      return 503;
    case '0L':
    case '0P':
    case '28':
      return 403;
    case '09':
    case '25':
    case '2D':
    case '38':
    case '39':
    case '3B':
    case '40':
    case '54':
    case '55':
    case '57':
    case '58':
    case 'F0':
    case 'HV':
    case 'P0':
    case 'XX':
      return 500;
    default:
      return 400;
  }
}

/** A raise with a PostgREST-style `PTxyz` SQLSTATE sets the status itself (PostgREST's custom status). */
function customStatus(code: string): number | null {
  const m = /^PT([1-5][0-9][0-9])$/.exec(code);
  return m ? Number(m[1]) : null;
}

export interface ErrorContext {
  principal: Principal | null;
  /** The table of the request (for PGRST205's and 42703's messages). */
  table?: string;
  /** The request's schema (its profile), for the messages that name it; public when absent. */
  schema?: string;
  /** The body's keys of a write: an unknown one of these is PGRST204, not 42703. */
  bodyKeys?: Set<string>;
}

/**
 * Any error of a `/rest/v1` request as PostgREST's status and body; null for a fault of the
 * server's (logged and answered 500 by the caller).
 * @example const e = toPostgrestError(err, { principal }); if (e) reply.code(e.status).send(e.body)
 */
export function toPostgrestError(err: unknown, ctx: ErrorContext): PostgrestError | null {
  if (err instanceof PostgrestError) return err;
  const cause = err instanceof DbError ? err : err instanceof ApiError && err.cause instanceof DbError ? err.cause : null;
  if (cause?.sqlstate) {
    const code = cause.sqlstate;
    const status = customStatus(code) ?? sqlstateStatus(code, ctx.principal?.role === 'anon');
    return pgrst(status, code, cause.message, cause.detail ?? null, cause.hint ?? null);
  }
  if (err instanceof DbUnavailableError || (err instanceof ApiError && err.code === 'database_unavailable')) {
    return pgrst(503, 'PGRST001', 'Database client error. Retrying the connection.', null, null);
  }
  if (!(err instanceof ApiError)) return null;
  const d = (err.details ?? {}) as Record<string, unknown>;
  switch (err.code) {
    case 'table_not_found': {
      const name = String(d.table ?? ctx.table ?? '');
      const ns = ctx.schema ?? 'public';
      const meant = typeof d.did_you_mean === 'string' ? `Perhaps you meant the table '${ns}.${d.did_you_mean}'` : null;
      return pgrst(404, 'PGRST205', `Could not find the table '${ns}.${name}' in the schema cache`, null, meant);
    }
    case 'column_not_found': {
      const column = String(d.column ?? '');
      if (ctx.bodyKeys?.has(column)) {
        return pgrst(400, 'PGRST204', `Could not find the '${column}' column of '${ctx.table}' in the schema cache`);
      }
      const table = /table "([^"]*)"/.exec(err.message)?.[1] ?? ctx.table ?? '';
      // Inside an embedded relation PostgREST's SQL names the table `<table>_<depth>`.
      const alias = typeof d.depth === 'number' ? `${table}_${d.depth}` : table;
      return pgrst(400, '42703', `column ${alias}.${column} does not exist`);
    }
    case 'relation_not_found': {
      const [relation, hint] = String(d.relation ?? '').split('!');
      const table = String(d.table ?? ctx.table ?? '');
      const using = hint ? ` using the hint '${hint}'` : '';
      return pgrst(
        400,
        'PGRST200',
        `Could not find a relationship between '${table}' and '${relation}' in the schema cache`,
        `Searched for a foreign key relationship between '${table}' and '${relation}'${using} in the schema '${ctx.schema ?? 'public'}', but no matches were found.`,
      );
    }
    case 'ambiguous_relation': {
      const relation = String(d.relation ?? '');
      const table = String(d.table ?? ctx.table ?? '');
      const candidates = (d.candidates ?? []) as Array<Record<string, unknown>>;
      return pgrst(
        300,
        'PGRST201',
        `Could not embed because more than one relationship was found for '${table}' and '${relation}'`,
        candidates.map((c) => ({
          cardinality: String(c.kind ?? ''),
          embedding: `${table} with ${String(c.relation ?? relation)}`,
          relationship: String(c.using ?? c.constraint ?? ''),
        })),
        // PostgREST's spelling: the target with the constraint (a join table for many-to-many).
        `Try changing '${relation}' to one of the following: ${candidates.map((c) => `'${String(c.relation)}!${String(c.via ?? c.constraint)}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
      );
    }
    case 'filter_required':
      // Supabase's PostgREST runs pg-safeupdate: a whole-table write is this error there too.
      return pgrst(400, '21000', `${err.message.startsWith('PATCH') ? 'UPDATE' : 'DELETE'} requires a WHERE clause`);
    case 'invalid_json':
      return pgrst(400, 'PGRST102', 'Empty or invalid json', null);
    case 'invalid_parameter':
      if (typeof d.embeddedTwice === 'string') return pgrst(400, '42712', `table name "${d.embeddedTwice}" specified more than once`);
      return pgrst(400, 'PGRST100', err.message, d.parameter === undefined ? null : `parameter: ${String(d.parameter)}`);
    case 'invalid_request':
    case 'invalid_value':
    case 'too_many_rows':
      return pgrst(400, 'PGRST100', err.message, d.parameter === undefined ? null : `parameter: ${String(d.parameter)}`);
    case 'method_not_allowed':
      return pgrst(405, 'PGRST101', err.message);
    case 'unauthorized':
    case 'invalid_token':
    case 'token_expired':
      return pgrst(401, err.code === 'token_expired' ? 'PGRST303' : 'PGRST301', err.message);
    case 'unsupported_media_type':
      return pgrst(415, 'PGRST107', err.message);
    case 'payload_too_large':
      return pgrst(413, 'PGRST413', err.message);
    default:
      return pgrst(err.status, err.code, err.message, err.details ?? null);
  }
}

export interface RpcErrorContext {
  db: Db;
  schema: SchemaSnapshot;
  principal: Principal;
  /** A POST (a body a function with one unnamed argument could take), and the body's media type. */
  post: boolean;
  media: 'json' | 'text' | 'xml' | 'bytea';
}

/**
 * A function call's `function_not_found` and `ambiguous_function` as PostgREST's PGRST202 and
 * PGRST203, word for word (its Error.hs), with its "Perhaps you meant" hint: the closest name
 * among the functions the caller may execute (a function not granted is never named), or, when
 * the function exists, the closest list of its parameters. Any other error as it is.
 * @example throw await rpcError(err, { db, schema, principal, post: true, media: 'json' })
 */
export async function rpcError(err: unknown, ctx: RpcErrorContext): Promise<unknown> {
  if (!(err instanceof ApiError)) return err;
  const d = (err.details ?? {}) as Record<string, unknown>;
  const fn = `${ctx.schema.schema}.${String(d.function ?? '')}`;
  if (err.code === 'ambiguous_function') {
    const lists = (d.parameters ?? []) as Array<Array<[string, string]>>;
    const named = lists.map((l) => `${fn}(${l.map(([n, t]) => `${n} => ${t}`).join(', ')})`);
    return pgrst(
      300,
      'PGRST203',
      `Could not choose the best candidate function between: ${named.join(', ')}`,
      null,
      'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
    );
  }
  if (err.code !== 'function_not_found') return err;
  const args = (d.arguments ?? []) as string[];
  const raw = ctx.post && ctx.media !== 'json';
  const list = args.length === 0 ? ' without parameters' : null;
  const message = `Could not find the function ${fn}${raw ? '' : (list ?? `(${args.join(', ')})`)} in the schema cache`;
  const searched = list ?? ` with parameter${args.length > 1 ? 's' : ''} ${args.join(', ')}`;
  const how = !ctx.post
    ? searched
    : ctx.media === 'json'
      ? `${searched} or with a single unnamed json/jsonb parameter`
      : ` with a single unnamed ${ctx.media} parameter`;
  const details = `Searched for the function ${fn}${how}, but no matches were found in the schema cache.`;
  return pgrst(404, 'PGRST202', message, details, raw ? null : await rpcHint(ctx, String(d.function ?? ''), args));
}

async function rpcHint(ctx: RpcErrorContext, name: string, args: string[]): Promise<string | null> {
  const granted = ctx.principal.role === 'service' ? null : await functionAccess(ctx.db, ctx.principal.role).catch(() => new Set<number>());
  const visible = (f: { oid: number }) => granted === null || granted.has(f.oid);
  const overloads = (ctx.schema.functions.get(name) ?? []).filter(visible);
  const asText = (names: string[]) => `(${[...names].sort().join(', ')})`;
  if (overloads.length > 0) {
    const best = fuzzyBest(
      overloads.map((f) => asText(f.args.map((a) => a.name))),
      asText(args),
      0.33,
    );
    return best === null ? null : `Perhaps you meant to call the function ${ctx.schema.schema}.${name}${best}`;
  }
  const names = [...ctx.schema.functions.entries()].filter(([, fns]) => fns.some(visible)).map(([n]) => n);
  const best = fuzzyBest(names, name, 0.75);
  return best === null ? null : `Perhaps you meant to call the function ${ctx.schema.schema}.${best}`;
}
