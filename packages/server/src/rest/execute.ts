/** Execute stage: the only stage that touches the database. Maps SQLSTATEs to API errors. */
import { DbError, type Db, type RoleContext } from '../db/index.js';
import { ApiError } from '../http/index.js';
import type { Plan } from './plan/index.js';
import type { SqlStatement } from './sql/index.js';

export interface Outcome {
  /** JSON text built by PostgreSQL (array, or object for a single row); null for return=minimal. */
  body: string | null;
  /** Rows returned or affected. */
  rows: number;
  /** `count(*)` of the filters, when `Prefer: count=exact` asked for it. */
  total: number | null;
}

/**
 * Runs a statement as the caller (role + claims set in the same transaction, so RLS applies).
 * @example await execute(db, { role: 'anon', claims: '{}' }, plan, toSql(plan))
 */
export async function execute(db: Db, who: RoleContext, plan: Plan, stmt: SqlStatement): Promise<Outcome> {
  try {
    const r = await db.runAs(who, stmt.text, stmt.values, plan.returning !== null);
    return { body: plan.returning === null ? null : r.body, rows: r.n, total: r.total };
  } catch (err) {
    throw err instanceof DbError ? mapDbError(err, plan) : err;
  }
}

/** Besides class 22, what a value of the wrong type or size raises. */
const INVALID_VALUE = new Set(['42804', '42883', '428C9', '54000', '54001']);

/**
 * The SQLSTATE classes PostgreSQL defines (errcodes.txt). A code outside them was chosen by
 * the project's own code (`raise exception using errcode = 'U0001'`), like P0001.
 */
const PG_CLASSES = new Set(
  '00 01 02 03 08 09 0A 0B 0F 0L 0P 0Z 20 21 22 23 24 25 26 27 28 2B 2D 2F 34 38 39 3B 3D 3F 40 42 44 53 54 55 57 58 72 F0 HV P0 XX'.split(
    ' ',
  ),
);

/** A `raise exception` (P0001), an `assert` (P0004) or an owner-defined SQLSTATE: its author wrote the message for the client. */
function isRaised(state: string): boolean {
  return state === 'P0001' || state === 'P0004' || (state.length === 5 && !PG_CLASSES.has(state.slice(0, 2)));
}

const NOT_WRITABLE = new Set(['42809', '55000', '0A000']);
/**
 * 42601 raised by a type's input function: the value, not the statement, is malformed. The
 * text-search parsers say so in several ways (`syntax error in tsvector`, `wrong position info
 * in tsvector`, `no operand in tsquery`, `there is no escaped character: "a\"`); jsonpath and
 * ltree in theirs. Any other 42601 is a statement's (ours: a bug; a trigger's: its bug).
 */
const VALUE_SYNTAX = /in (tsquery|tsvector)|there is no escaped character|jsonpath input|(ltree|lquery|ltxtquery) syntax error/i;

function describeRelation(plan: Plan): string {
  if (plan.kind === 'rpc') return `function "${plan.fn.name}"`;
  const kind = plan.table.kind === 'materialized_view' ? 'materialized view' : plan.table.kind;
  return `${kind} "${plan.table.name}"`;
}

/** What the request was about, for details: `{table}` or `{function}`. */
const subject = (plan: Plan) => (plan.kind === 'rpc' ? { function: plan.fn.name } : { table: plan.table.name });

/**
 * Maps a database error to the API's codes (API.md §2): what a request can cause is a 4xx
 * with `details.sqlstate`, never a 500. What is the database's or Plinth's fault (internal
 * errors, a syntax error in the generated SQL, a broken trigger function) is rethrown: the
 * error handler logs it and answers 500. Only a raise's own message is sent; PostgreSQL's
 * messages stay in the cause.
 * @example mapDbError(new DbError('duplicate key', '23505', undefined, 'todos_pkey'), plan) // 409 conflict
 */
export function mapDbError(err: DbError, plan: Plan): Error {
  const sqlstate = err.sqlstate ?? '';
  const cause = { cause: err };
  const constraint = err.constraint ?? null;
  const refused = (message: string) => new ApiError('invalid_request', message, { sqlstate }, cause);
  switch (sqlstate) {
    case '23505':
    case '23503':
    case '23P01':
    case '23001':
      return new ApiError('conflict', conflictMessage(sqlstate), { constraint, sqlstate }, cause);
    case '40001':
    case '40P01':
    case '55P03':
      return new ApiError(
        'conflict',
        'The change conflicted with a concurrent one (serialization failure, deadlock or a locked row); retry it.',
        { constraint: null, sqlstate },
        cause,
      );
    case '23502':
      return new ApiError(
        'constraint_violation',
        'A required column is missing or null.',
        { constraint, column: err.column ?? null, sqlstate },
        cause,
      );
    case '23514':
      return new ApiError('constraint_violation', 'A value fails a check constraint.', { constraint, sqlstate }, cause);
    case '44000':
      return new ApiError(
        'constraint_violation',
        `The row is outside the ${describeRelation(plan)}, which has WITH CHECK OPTION.`,
        { constraint: null, sqlstate },
        cause,
      );
    case '42501':
      if (/row-level security/i.test(err.message)) {
        return new ApiError('rls_violation', 'A row-level security policy refused this row.', { ...subject(plan), sqlstate }, cause);
      }
      if (plan.kind === 'rpc' && /permission denied for function/i.test(err.message)) {
        return new ApiError(
          'permission_denied',
          `Your role may not execute the function "${plan.fn.name}": functions are closed until granted ` +
            `(grant execute on function ${plan.fn.name} to authenticated).`,
          { function: plan.fn.name, sqlstate },
          cause,
        );
      }
      return new ApiError('permission_denied', 'Your role lacks the privilege for this operation.', { ...subject(plan), sqlstate }, cause);
    case '42703':
      // The schema changed under a cached plan; the next reload catches up.
      return new ApiError(
        'column_not_found',
        'A column of the request does not exist (any more).',
        { column: err.column ?? null, sqlstate },
        cause,
      );
    case '42P01':
      if (plan.kind === 'rpc') return refused(`The function "${plan.fn.name}" uses a table that does not exist (SQLSTATE 42P01).`);
      return new ApiError(
        'table_not_found',
        `No table or view "${plan.table.name}" in the public schema.`,
        { table: plan.table.name, sqlstate },
        cause,
      );
    case '57014':
      return new ApiError(
        'statement_timeout',
        'The statement was cancelled (statement timeout or an administrator); narrow the request or retry.',
        { sqlstate },
        cause,
      );
    case '25006':
      return new ApiError('method_not_allowed', 'The database is read-only: it accepts reads only.', { sqlstate }, cause);
    case '42601':
      // A value's own syntax is the client's; a syntax error in the statement is a bug.
      if (VALUE_SYNTAX.test(err.message)) {
        return new ApiError('invalid_value', 'A value is not valid input for the type of its column.', { sqlstate }, cause);
      }
      return err;
    case '42704':
      // fts(<config>): the configuration is a bound value cast to regconfig.
      if (/text search configuration/i.test(err.message)) {
        return new ApiError('invalid_value', 'No such text search configuration (try simple or english).', { sqlstate }, cause);
      }
      break;
    case '42803':
      return new ApiError(
        'invalid_parameter',
        'With aggregates in select, order by the grouped columns or the aggregates, and filter on columns.',
        { sqlstate },
        cause,
      );
    case '42P10':
      // The cache's unique keys were checked: the key went away meanwhile.
      return new ApiError('invalid_parameter', 'on_conflict names no unique key of the table (any more).', { sqlstate }, cause);
    case '21000':
      return new ApiError(
        'invalid_request',
        'A row was to be changed twice, or one was expected where several came: an upsert with two rows of the same key?',
        { sqlstate },
        cause,
      );
  }
  if (NOT_WRITABLE.has(sqlstate) && plan.kind !== 'read' && plan.kind !== 'rpc' && (sqlstate === '42809' || plan.table.kind !== 'table')) {
    const how =
      plan.table.kind === 'materialized_view'
        ? 'it changes only with `refresh materialized view`'
        : 'it is not automatically updatable (aggregates, computed columns…) and has no INSTEAD OF trigger';
    return new ApiError(
      'method_not_allowed',
      `The ${describeRelation(plan)} cannot be written through the API: ${how}.`,
      { sqlstate },
      cause,
    );
  }
  if (sqlstate === '55000' && plan.kind !== 'rpc' && plan.table.kind === 'materialized_view') {
    return refused(`The materialized view "${plan.table.name}" has not been populated yet: run \`refresh materialized view\` on it.`);
  }
  if (isRaised(sqlstate)) {
    // The project's own refusal (trigger, function): its message, detail and hint are meant for the client.
    const details = { sqlstate, ...(err.detail ? { detail: err.detail } : {}), ...(err.hint ? { hint: err.hint } : {}) };
    return new ApiError('raised_exception', err.message, details, cause);
  }
  const cls = sqlstate.slice(0, 2);
  if (cls === '22' || INVALID_VALUE.has(sqlstate)) {
    return new ApiError(
      'invalid_value',
      'A value does not fit the type of its column, is too large, or the operator does not apply to it.',
      { sqlstate },
      cause,
    );
  }
  switch (cls) {
    case '23':
      return new ApiError('constraint_violation', 'The row violates an integrity constraint.', { constraint, sqlstate }, cause);
    case '42':
    case '0A':
    case '55':
      return refused(
        plan.kind === 'rpc'
          ? `The database refused the call (SQLSTATE ${sqlstate}); the function "${plan.fn.name}" may be at fault.`
          : `The database refused the statement (SQLSTATE ${sqlstate}); a policy, trigger or view of "${plan.table.name}" may be at fault.`,
      );
    case '54':
      return refused('The request is too complex for the database (too many values or columns).');
    case 'P0':
      return refused(`A function or trigger of the ${describeRelation(plan)} failed on this request (SQLSTATE ${sqlstate}).`);
    case '53':
      return new ApiError(
        'database_unavailable',
        'The database is out of resources; try again shortly.',
        { sqlstate },
        {
          cause: err,
          headers: { 'retry-after': '1' },
        },
      );
  }
  return err;
}

function conflictMessage(state: string): string {
  if (state === '23505') return 'A row with the same unique value already exists.';
  if (state === '23P01') return 'The row conflicts with an existing row (exclusion constraint).';
  return 'A foreign key does not match: the referenced row is missing or still referenced.';
}
