/**
 * Database errors: what a SQLSTATE means (`dbErrorKind`) and the API error it becomes
 * (`dbErrorAnswer`). The one home of SQLSTATEs, as PostgREST keeps its in one file
 * (`Error.hs`): the REST API, storage, auth, admin, the CLI and migrations all ask here, so
 * the same database error gets the same answer in every area. `http/errors.ts` `fromDbError`
 * turns an answer into the `ApiError` a route throws.
 */
import type { ErrorCode } from '@plinth/shared';
import type { DbError } from './types.js';

/** What a database error means, named once. */
export type DbErrorKind =
  // Integrity (class 23) and WITH CHECK OPTION: what the row is.
  | 'unique_violation'
  | 'foreign_key_violation'
  | 'exclusion_violation'
  | 'restrict_violation'
  | 'not_null_violation'
  | 'check_violation'
  | 'integrity_violation'
  | 'check_option_violation'
  /** A value the column's type refuses (class 22 and its kin). */
  | 'invalid_value'
  /** A value whose own syntax is wrong: 42601 from a type's input function (tsquery, tsvector, jsonpath, ltree). */
  | 'value_syntax'
  /** 42704 for a text search configuration: a bound value cast to `regconfig` names none. */
  | 'undefined_text_search_config'
  /** Text with NUL (`\u0000`), which PostgreSQL cannot store. */
  | 'nul_in_text'
  /** The project's own refusal: `raise exception` (P0001), `assert` (P0004), a SQLSTATE of its own. */
  | 'raised'
  /** Serialization failure, deadlock, a locked row (NOWAIT): retrying may succeed. */
  | 'concurrent_change'
  /** Statement timeout, or cancelled by an administrator. */
  | 'query_canceled'
  | 'read_only_transaction'
  | 'out_of_resources'
  // Access (42501), told apart by PostgreSQL's message.
  | 'rls_violation'
  | 'insufficient_privilege'
  // The statement itself, or the relation it works on.
  | 'undefined_column'
  | 'undefined_table'
  | 'wrong_object_type'
  | 'not_in_prerequisite_state'
  | 'feature_not_supported'
  | 'syntax_error'
  | 'program_limit'
  | 'function_failed'
  | 'statement_refused'
  /** 42803: a column neither grouped nor aggregated (REST's aggregates). */
  | 'grouping_error'
  /** 42P10: `on conflict (…)` names no unique key. */
  | 'invalid_conflict_target'
  /** 21000: a row changed twice by one statement (an upsert with two rows of one key), or a subquery with several rows. */
  | 'cardinality_violation'
  // Connecting (the CLI's and migrations' concern, never a request's).
  | 'login_refused'
  | 'unknown_database'
  | 'connection_failure'
  /** The database's own fault (internal error, disk, a crashed backend…). */
  | 'internal';

/**
 * The SQLSTATE classes PostgreSQL defines (errcodes.txt). A code outside them was chosen by
 * the project's own code (`raise exception using errcode = 'U0001'`), like P0001.
 */
const PG_CLASSES = new Set(
  '00 01 02 03 08 09 0A 0B 0F 0L 0P 0Z 20 21 22 23 24 25 26 27 28 2B 2D 2F 34 38 39 3B 3D 3F 40 42 44 53 54 55 57 58 72 F0 HV P0 XX'.split(
    ' ',
  ),
);

/** One SQLSTATE → its kind. */
const BY_STATE: Record<string, DbErrorKind> = {
  '23505': 'unique_violation',
  '23503': 'foreign_key_violation',
  '23P01': 'exclusion_violation',
  '23001': 'restrict_violation',
  '23502': 'not_null_violation',
  '23514': 'check_violation',
  '44000': 'check_option_violation',
  '22021': 'nul_in_text',
  '22P05': 'nul_in_text',
  // Besides class 22, what a value of the wrong type or size raises.
  '42804': 'invalid_value',
  '42883': 'invalid_value',
  '428C9': 'invalid_value',
  '54000': 'invalid_value',
  '54001': 'invalid_value',
  P0001: 'raised',
  P0004: 'raised',
  '40001': 'concurrent_change',
  '40P01': 'concurrent_change',
  '55P03': 'concurrent_change',
  '57014': 'query_canceled',
  '25006': 'read_only_transaction',
  '42703': 'undefined_column',
  '42P01': 'undefined_table',
  '42809': 'wrong_object_type',
  '55000': 'not_in_prerequisite_state',
  '0A000': 'feature_not_supported',
  '42601': 'syntax_error',
  '42803': 'grouping_error',
  '42P10': 'invalid_conflict_target',
  '21000': 'cardinality_violation',
  '28P01': 'login_refused',
  '28000': 'login_refused',
  '3D000': 'unknown_database',
  '57P01': 'connection_failure',
  '57P02': 'connection_failure',
  '57P03': 'connection_failure',
};

/** By class, where the code itself is not in `BY_STATE`. */
const BY_CLASS: Record<string, DbErrorKind> = {
  '08': 'connection_failure',
  '22': 'invalid_value',
  '23': 'integrity_violation',
  '42': 'statement_refused',
  '0A': 'statement_refused',
  '55': 'statement_refused',
  '53': 'out_of_resources',
  '54': 'program_limit',
  P0: 'function_failed',
};

/**
 * 42601 raised by a type's input function: the value, not the statement, is malformed. The
 * text-search parsers say so in several ways (`syntax error in tsvector`, `wrong position info
 * in tsvector`, `no operand in tsquery`, `there is no escaped character: "a\"`); jsonpath and
 * ltree in theirs. Any other 42601 is a statement's (ours: a bug; a trigger's: its bug).
 */
const VALUE_SYNTAX = /in (tsquery|tsvector)|there is no escaped character|jsonpath input|(ltree|lquery|ltxtquery) syntax error/i;

/**
 * The SQLSTATE of a `DbError` (`sqlstate`), or of a driver's own error object (`code`, with a
 * digit: Node's `EPIPE` is five capitals too), else undefined.
 */
function sqlstateOf(err: unknown): string | undefined {
  const e = err as { sqlstate?: unknown; code?: unknown } | null;
  if (typeof e?.sqlstate === 'string') return /^[0-9A-Z]{5}$/.test(e.sqlstate) ? e.sqlstate : undefined;
  return typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && /[0-9]/.test(e.code) ? e.code : undefined;
}

/**
 * What a database error means; null for an error that carries no SQLSTATE (not the database's).
 * @example dbErrorKind(new DbError('duplicate key value…', '23505')) // 'unique_violation'
 * @example dbErrorKind(new DbError('no more seats', 'U0A42')) // 'raised'
 */
export function dbErrorKind(err: unknown): DbErrorKind | null {
  const state = sqlstateOf(err);
  if (!state) return null;
  const message = String((err as { message?: unknown }).message ?? '');
  if (state === '42501') return /row-level security/i.test(message) ? 'rls_violation' : 'insufficient_privilege';
  if (state === '42601' && VALUE_SYNTAX.test(message)) return 'value_syntax';
  if (state === '42704' && /text search configuration/i.test(message)) return 'undefined_text_search_config';
  const known = BY_STATE[state];
  if (known) return known;
  if (!PG_CLASSES.has(state.slice(0, 2))) return 'raised';
  return BY_CLASS[state.slice(0, 2)] ?? 'internal';
}

/**
 * Whether a driver error says the connection is gone or cannot be made (class 08, the server
 * shutting down or starting up): `toDbError` makes it a `DbUnavailableError`.
 * @example isConnectionFailure('57P01') // true
 */
export const isConnectionFailure = (sqlstate: string): boolean => dbErrorKind({ code: sqlstate }) === 'connection_failure';

/** The relation a statement reads or writes, as the answers name it. */
export interface DbRelation {
  name: string;
  kind: 'table' | 'view' | 'materialized_view';
  /** Its columns, when known: a check violation's column is read off the constraint's name. */
  columns?: { has(name: string): boolean };
}

/**
 * The column a check constraint guards, when PostgreSQL named the constraint itself: a check
 * written on one column is `<table>_<column>_check` (`<table>_check` when it spans several, and a
 * name the user chose says nothing), so the name is matched against the relation's own columns.
 * No catalog read on the error path. Null when the name does not tell.
 * @example checkedColumn('todos_title_check', { name: 'todos', kind: 'table', columns: new Set(['title']) }) // 'title'
 */
export function checkedColumn(constraint: string | null, rel: DbRelation | undefined): string | null {
  if (!rel?.columns || !constraint) return null;
  const prefix = `${rel.name}_`;
  if (!constraint.startsWith(prefix) || !/_check\d*$/.test(constraint)) return null;
  const column = constraint.slice(prefix.length).replace(/_check\d*$/, '');
  return rel.columns.has(column) ? column : null;
}

/** Where a database error happened, for its answer. */
export interface DbErrorContext {
  /**
   * The project's relation the statement is about: REST's table, `storage.objects` under the
   * project's policies. Only then is an error of the statement's own (a refused statement, an
   * unknown column, a policy) the request's: in Plinth's own statements on its own tables it is
   * a bug, answered 500.
   */
  relation?: DbRelation;
  /**
   * The project's function the statement calls (REST's `/rpc/{function}`): as with `relation`,
   * an error of the statement is the request's, told in the function's name.
   */
  function?: string;
  /** The statement writes to `relation` (a view that cannot take writes is then 405). */
  writes?: boolean;
  /** What the area's own constraints mean, by constraint name: `{ buckets_pkey: ['bucket_exists', 'A bucket … exists.'] }`. */
  constraints?: Readonly<Record<string, readonly [ErrorCode, string]>>;
}

/** The API error a database error becomes. */
export interface DbErrorAnswer {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  /** Seconds, for `Retry-After`. */
  retryAfter?: number;
}

function describe(r: DbRelation): string {
  return `${r.kind === 'materialized_view' ? 'materialized view' : r.kind} "${r.name}"`;
}

const CONFLICT_MESSAGE: Partial<Record<DbErrorKind, string>> = {
  unique_violation: 'A row with the same unique value already exists.',
  exclusion_violation: 'The row conflicts with an existing row (exclusion constraint).',
  foreign_key_violation: 'A foreign key does not match: the referenced row is missing or still referenced.',
  restrict_violation: 'A foreign key does not match: the referenced row is missing or still referenced.',
};

/**
 * The API error for a database error, the same in every area: what a request can cause is a
 * 4xx with `details.sqlstate`; null for what is the database's or Plinth's fault (internal
 * errors, a syntax error in generated SQL, a broken trigger function; and, without a
 * `relation`, anything wrong with the statement itself), which the error handler logs and
 * answers 500. Only a raise's own message is sent; PostgreSQL's messages stay in the cause.
 * Not-null and check violations carry `details.column` when PostgreSQL names one (a check's
 * column is read off the constraint's default name, `checkedColumn`).
 * @example dbErrorAnswer(new DbError('duplicate key', '23505', undefined, 'todos_pkey')) // { code: 'conflict', … }
 * @example dbErrorAnswer(new DbError('no more seats', 'U0A42')) // { code: 'raised_exception', message: 'no more seats', … }
 */
export function dbErrorAnswer(err: DbError, ctx: DbErrorContext = {}): DbErrorAnswer | null {
  const kind = dbErrorKind(err);
  const sqlstate = err.sqlstate ?? '';
  const constraint = err.constraint ?? null;
  const own = constraint === null ? undefined : ctx.constraints?.[constraint];
  if (own) return { code: own[0], message: own[1], details: { sqlstate } };
  const rel = ctx.relation;
  const answer = (code: ErrorCode, message: string, details: Record<string, unknown> = {}): DbErrorAnswer => ({
    code,
    message,
    details: { ...details, sqlstate },
  });
  const refused = (message: string) => answer('invalid_request', message);
  switch (kind) {
    case 'unique_violation':
    case 'foreign_key_violation':
    case 'exclusion_violation':
    case 'restrict_violation':
      return answer('conflict', CONFLICT_MESSAGE[kind] ?? '', { constraint });
    case 'concurrent_change':
      return answer(
        'conflict',
        'The change conflicted with a concurrent one (serialization failure, deadlock or a locked row); retry it.',
        { constraint: null },
      );
    case 'not_null_violation':
      return answer('constraint_violation', 'A required column is missing or null.', { constraint, column: err.column ?? null });
    case 'check_violation':
      return answer('constraint_violation', 'A value fails a check constraint.', {
        constraint,
        column: err.column ?? checkedColumn(constraint, rel),
      });
    case 'integrity_violation':
      return answer('constraint_violation', 'The row violates an integrity constraint.', { constraint });
    case 'check_option_violation':
      return answer(
        'constraint_violation',
        rel ? `The row is outside the ${describe(rel)}, which has WITH CHECK OPTION.` : 'The row is outside a view with WITH CHECK OPTION.',
        { constraint: null },
      );
    case 'invalid_value':
      return answer('invalid_value', 'A value does not fit the type of its column, is too large, or the operator does not apply to it.');
    case 'value_syntax':
      return answer('invalid_value', 'A value is not valid input for the type of its column.');
    case 'undefined_text_search_config':
      // fts(<config>): the configuration is a bound value cast to regconfig.
      return answer('invalid_value', 'No such text search configuration (try simple or english).');
    case 'nul_in_text':
      return answer('invalid_value', 'Text values cannot contain the NUL character (\\u0000).');
    case 'raised':
      // The project's own refusal (trigger, function, policy): its message, detail and hint are meant for the client.
      return {
        code: 'raised_exception',
        message: err.message,
        details: { sqlstate, ...(err.detail ? { detail: err.detail } : {}), ...(err.hint ? { hint: err.hint } : {}) },
      };
    case 'query_canceled':
      return answer(
        'statement_timeout',
        'The statement was cancelled (statement timeout or an administrator); narrow the request or retry.',
      );
    case 'read_only_transaction':
      // GET and HEAD run a function read-only (rest/routes.ts), as PostgREST does.
      if (ctx.function !== undefined) {
        return answer(
          'method_not_allowed',
          `Function "${ctx.function}" (or one it calls) tried to write in a read-only transaction: GET runs a call read-only, call it with POST.`,
        );
      }
      return answer('method_not_allowed', 'The database is read-only: it accepts reads only.');
    case 'out_of_resources':
      return { ...answer('database_unavailable', 'The database is out of resources; try again shortly.'), retryAfter: 1 };
  }
  // What follows is about the statement and the relation or function it works on: the
  // request's only when that is the project's (else Plinth's own SQL is wrong: a 500).
  const fn = ctx.function;
  if (fn !== undefined) return functionAnswer(kind, err, fn, answer);
  if (!rel) return null;
  const table = { table: rel.name };
  const atFault = () =>
    refused(`The database refused the statement (SQLSTATE ${sqlstate}); a policy, trigger or view of "${rel.name}" may be at fault.`);
  switch (kind) {
    case 'rls_violation':
      return answer('rls_violation', 'A row-level security policy refused this row.', table);
    case 'insufficient_privilege':
      return answer('permission_denied', 'Your role lacks the privilege for this operation.', table);
    case 'undefined_column':
      // The schema changed under a cached plan; the next reload catches up.
      return answer('column_not_found', 'A column of the request does not exist (any more).', { column: err.column ?? null });
    case 'undefined_table':
      return answer('table_not_found', `No table or view "${rel.name}" in the public schema.`, table);
    case 'wrong_object_type':
    case 'not_in_prerequisite_state':
    case 'feature_not_supported':
      if (ctx.writes && (kind === 'wrong_object_type' || rel.kind !== 'table')) {
        const how =
          rel.kind === 'materialized_view'
            ? 'it changes only with `refresh materialized view`'
            : 'it is not automatically updatable (aggregates, computed columns…) and has no INSTEAD OF trigger';
        return answer('method_not_allowed', `The ${describe(rel)} cannot be written through the API: ${how}.`);
      }
      if (kind === 'not_in_prerequisite_state' && rel.kind === 'materialized_view') {
        return refused(`The materialized view "${rel.name}" has not been populated yet: run \`refresh materialized view\` on it.`);
      }
      return atFault();
    case 'grouping_error':
      return answer(
        'invalid_parameter',
        'With aggregates in select, order by the grouped columns or the aggregates, and filter on columns.',
      );
    case 'invalid_conflict_target':
      // The cache's unique keys were checked: the key went away meanwhile.
      return answer('invalid_parameter', 'on_conflict names no unique key of the table (any more).');
    case 'cardinality_violation':
      return refused(CARDINALITY);
    case 'statement_refused':
      return atFault();
    case 'program_limit':
      return refused('The request is too complex for the database (too many values or columns).');
    case 'function_failed':
      return refused(`A function or trigger of "${rel.name}" failed on this request (SQLSTATE ${sqlstate}).`);
  }
  return null;
}

const CARDINALITY = 'A row was to be changed twice, or one was expected where several came: an upsert with two rows of the same key?';

/**
 * The answer for an error of a call of the project's function `fn` (REST's RPC): what is
 * refused is the call, and the function may be at fault. Nothing is written "through" a
 * function, so the not-writable answers of relations (405) do not apply.
 */
function functionAnswer(
  kind: DbErrorKind | null,
  err: DbError,
  fn: string,
  answer: (code: ErrorCode, message: string, details?: Record<string, unknown>) => DbErrorAnswer,
): DbErrorAnswer | null {
  const sqlstate = err.sqlstate ?? '';
  const subject = { function: fn };
  const refused = (message: string) => answer('invalid_request', message);
  switch (kind) {
    case 'rls_violation':
      return answer('rls_violation', 'A row-level security policy refused this row.', subject);
    case 'insufficient_privilege':
      // `permission denied for function add`: the called one, closed until granted (docs/security.md).
      if (/permission denied for function/i.test(err.message) && err.message.endsWith(` ${fn}`)) {
        return answer(
          'permission_denied',
          `Your role may not execute the function "${fn}": functions are closed until granted ` +
            `(grant execute on function ${fn} to authenticated).`,
          subject,
        );
      }
      return answer('permission_denied', 'Your role lacks the privilege for this operation.', subject);
    case 'undefined_column':
      return answer('column_not_found', 'A column of the request does not exist (any more).', { column: err.column ?? null });
    case 'undefined_table':
      return refused(`The function "${fn}" uses a table that does not exist (SQLSTATE ${sqlstate}).`);
    case 'grouping_error':
      return answer(
        'invalid_parameter',
        'With aggregates in select, order by the grouped columns or the aggregates, and filter on columns.',
      );
    case 'cardinality_violation':
      return refused(CARDINALITY);
    case 'wrong_object_type':
    case 'not_in_prerequisite_state':
    case 'feature_not_supported':
    case 'invalid_conflict_target':
    case 'statement_refused':
      return refused(`The database refused the call (SQLSTATE ${sqlstate}); the function "${fn}" may be at fault.`);
    case 'program_limit':
      return refused('The request is too complex for the database (too many values or columns).');
    case 'function_failed':
      return refused(`The function "${fn}" failed on this request (SQLSTATE ${sqlstate}).`);
  }
  return null;
}
