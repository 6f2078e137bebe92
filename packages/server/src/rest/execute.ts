/** Execute stage: the only stage that touches the database. Maps SQLSTATEs to API errors. */
import { DbError, type Db, type RoleContext } from '../db/index.js';
import { ApiError } from '../http/errors.js';
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

interface Row {
  body: string | null;
  n: number;
  total?: number | string | null;
}

/**
 * Runs a statement as the caller (role + claims set in the same transaction, so RLS applies).
 * @example await execute(db, { role: 'anon', claims: '{}' }, plan, toSql(plan))
 */
export async function execute(db: Db, who: RoleContext, plan: Plan, stmt: SqlStatement): Promise<Outcome> {
  let result: Awaited<ReturnType<Db['queryAs']>>;
  try {
    result = await db.queryAs(who, stmt.text, stmt.values);
  } catch (err) {
    throw err instanceof DbError ? mapDbError(err, plan) : err;
  }
  if (plan.returning === null) return { body: null, rows: result.rowCount, total: null };
  const row = result.rows[0] as unknown as Row;
  const total = row.total === undefined || row.total === null ? null : Number(row.total);
  return { body: row.body, rows: Number(row.n), total };
}

/** Data exceptions a bad value can raise (class 22 is mapped whole below). */
const INVALID_VALUE = new Set(['42804', '42883', '428C9', '2201B', '54000']);

/**
 * Maps a database error to the API's codes (API.md §2). What is not the client's fault is
 * rethrown: the error handler logs it and answers 500.
 * @example mapDbError(new DbError('duplicate key', '23505', undefined, 'todos_pkey'), plan) // 409 conflict
 */
export function mapDbError(err: DbError, plan: Plan): Error {
  const state = err.sqlstate ?? '';
  const cause = { cause: err };
  const constraint = err.constraint ?? null;
  switch (state) {
    case '23505':
    case '23503':
    case '23P01':
    case '23001':
      return new ApiError('conflict', conflictMessage(state), { constraint }, cause);
    case '23502':
      return new ApiError(
        'constraint_violation',
        'A required column is missing or null.',
        { constraint, column: err.column ?? null },
        cause,
      );
    case '23514':
      return new ApiError('constraint_violation', 'A value fails a check constraint.', { constraint }, cause);
    case '42501':
      return /row-level security/i.test(err.message)
        ? new ApiError('rls_violation', 'A row-level security policy refused this row.', { table: plan.table.name }, cause)
        : new ApiError('permission_denied', 'Your role lacks the privilege for this operation.', { table: plan.table.name }, cause);
    case '42703':
      // The schema changed under a cached plan; the next reload catches up.
      return new ApiError('column_not_found', 'A column of the request does not exist (any more).', { column: err.column ?? null }, cause);
    case '42P01':
      return new ApiError(
        'table_not_found',
        `No table or view "${plan.table.name}" in the public schema.`,
        { table: plan.table.name },
        cause,
      );
    case '0A000':
    case '55000':
      if (plan.table.kind === 'view') {
        return new ApiError('method_not_allowed', `The view "${plan.table.name}" cannot be written through the API.`, undefined, cause);
      }
      return err;
  }
  if (state.startsWith('22') || INVALID_VALUE.has(state)) {
    return new ApiError(
      'invalid_value',
      'A value does not fit the type of its column, or the operator does not apply to it.',
      undefined,
      cause,
    );
  }
  return err;
}

function conflictMessage(state: string): string {
  if (state === '23505') return 'A row with the same unique value already exists.';
  if (state === '23P01') return 'The row conflicts with an existing row (exclusion constraint).';
  return 'A foreign key does not match: the referenced row is missing or still referenced.';
}
