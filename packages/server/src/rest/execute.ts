/** Execute stage: the only stage that touches the database. Its errors: db/errors.ts's table, told the relation or the function. */
import type { Db, RoleContext } from '../db/index.js';
import { fromDbError } from '../http/index.js';
import type { Plan } from './plan/index.js';
import type { SqlStatement } from './sql/index.js';

export interface Outcome {
  /** JSON text built by PostgreSQL (array, or object for a single row); null for return=minimal. */
  body: string | null;
  /** Rows returned or affected. */
  rows: number;
  /** `count(*)` of the filters, when `Prefer: count=exact` asked for it; for an upsert that returns rows, how many it inserted. */
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
    throw fromDbError(err, plan.kind === 'rpc' ? { function: plan.fn.name } : { relation: plan.table, writes: plan.kind !== 'read' });
  }
}
