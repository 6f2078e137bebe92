/**
 * The REST engine as one call, for a face that speaks another grammar (supabase/rest: PostgREST's):
 * a parsed request → plan (against the schema cache, reloaded once when a name may be brand new)
 * → one SQL statement → executed as the caller. The grammar is the face's; the plan, the SQL and
 * the execution are the ones `/api/v1/db` and `/api/v1/rpc` use (routes.ts), so a rule lives once.
 */
import { type Db, type RoleContext, runAsUid } from '../db/index.js';
import { ApiError, fromDbError, type Principal } from '../http/index.js';
import { type Outcome, execute } from './execute.js';
import { withHint } from './hints.js';
import { type Plan, type RestRequest, type RpcRequest, planRequest, planRpc } from './plan/index.js';
import type { SchemaCache } from './schema-cache/index.js';
import { countRows, readOnly, type SqlStatement, toSql } from './sql/index.js';

/** Codes a brand-new table, column, relation or function could cause: the cache may be a moment behind. */
const MAYBE_STALE = new Set(['table_not_found', 'column_not_found', 'relation_not_found', 'function_not_found']);

export interface RestEngineDeps {
  db: Db;
  schema: SchemaCache;
  /** Largest `limit` (MAX_ROWS); larger values are clamped. */
  maxRows: number;
}

export interface RunOptions {
  /** PostgREST's `Prefer: tx=rollback`: the statement runs, its answer is sent, and nothing it wrote is kept. */
  rollback?: boolean;
  /**
   * PostgREST's `Prefer: handling=strict, max-affected=n`: more rows changed (or returned by a
   * function) than this, and the transaction is rolled back and `tooMany` thrown.
   */
  maxAffected?: { limit: number; tooMany: (rows: number) => Error };
  /** Told the end of each stage (`plan`, `sql`, `execute`): the Server-Timing header of /api/v1. */
  timer?: { lap(stage: string): void };
}

export interface RestEngine {
  /** Plans, builds and runs a table request as `principal`; the plan comes back for the response. */
  run(request: RestRequest, principal: Principal, options?: RunOptions): Promise<{ plan: Plan; outcome: Outcome }>;
  /**
   * The planner's estimate of the rows a read's filters match (EXPLAIN as the caller, row-level
   * security included; nothing runs): `Prefer: count=planned`. Null for anything but a read.
   */
  estimate(plan: Plan, principal: Principal): Promise<number | null>;
  /** Plans, builds and runs a function call; GET (and HEAD) in a read-only transaction. */
  call(request: RpcRequest, principal: Principal, options?: RunOptions): Promise<{ plan: Plan; outcome: Outcome }>;
}

/** Thrown inside the transaction to end it with a rollback once the answer is read. */
class RolledBack extends Error {}

const inTransaction = (o?: RunOptions) => o?.rollback === true || o?.maxAffected !== undefined;

/**
 * The statement as runAs runs it (role and claims for the transaction, then the role check of
 * plinth.end_request: SQL that switched role is refused before its answer is used), in a
 * transaction that is rolled back.
 */
async function executeInTransaction(db: Db, who: RoleContext, plan: Plan, stmt: SqlStatement, o: RunOptions): Promise<Outcome> {
  const rows = plan.returning !== null;
  let outcome: Outcome | null = null;
  try {
    await db.transaction(async (tx) => {
      // plinth.run_as (migration 0008): role and claims for this transaction, the statement's
      // values typed as its one text[]; then the role check every request gets.
      const r = await tx.query<{ body: string | null; n: string | number; total: string | number | null }>(
        'select body, n, total from plinth.run_as($1, $2, $3, $4, $5::text[], $6)',
        [who.role, who.claims, runAsUid(who), stmt.text, stmt.values, rows],
      );
      await tx.query('select plinth.end_request($1, session_user::text)', [who.role]);
      const row = r.rows[0];
      const total = row?.total === null || row?.total === undefined ? null : Number(row.total);
      const result: Outcome = { body: rows ? (row?.body ?? null) : null, rows: Number(row?.n ?? 0), total };
      // Thrown inside: the transaction ends in a rollback.
      if (o.maxAffected && result.rows > o.maxAffected.limit) throw o.maxAffected.tooMany(result.rows);
      outcome = result;
      if (o.rollback) throw new RolledBack();
    });
  } catch (err) {
    // fromDbError hands back anything that is no database error (maxAffected's own) as it is.
    if (!(err instanceof RolledBack)) {
      throw fromDbError(err, plan.kind === 'rpc' ? { function: plan.fn.name } : { relation: plan.table, writes: plan.kind !== 'read' });
    }
  }
  if (outcome === null) throw new Error('rolled-back statement gave no outcome');
  return outcome;
}

/**
 * The engine of routes.ts behind one function per request kind.
 * @example const engine = createRestEngine({ db, schema, maxRows: 1000 }); await engine.run(request, principal)
 */
export function createRestEngine(deps: RestEngineDeps): RestEngine {
  const options = { maxRows: deps.maxRows };
  /** The snapshot of the request's schema; the face checked the name against the exposed ones. */
  const snapshot = (schema: string | undefined) => {
    const s = deps.schema.get(schema ?? 'public');
    if (!s) throw new ApiError('invalid_parameter', `The schema "${schema}" is not exposed.`);
    return s;
  };
  const withReload = async (planOnce: () => Plan): Promise<Plan> => {
    try {
      return planOnce();
    } catch (err) {
      const stale = Date.now() - deps.schema.get().loadedAt > 1000;
      if (!stale || !(err instanceof ApiError) || !MAYBE_STALE.has(err.code)) throw err;
      await deps.schema.reload();
      return planOnce();
    }
  };
  return {
    estimate,
    async run(request, principal, runOptions) {
      const plan = await withReload(() => planRequest(request, snapshot(request.schema), options)).catch(async (err) => {
        throw await withHint(err, { db: deps.db, schema: snapshot(request.schema), principal, table: request.table });
      });
      runOptions?.timer?.lap('plan');
      return { plan, outcome: await runPlan(plan, toSql(plan), principal, runOptions) };
    },
    async call(request, principal, runOptions) {
      const plan = await withReload(() => planRpc(request, snapshot(request.schema), options));
      runOptions?.timer?.lap('plan');
      // GET (and HEAD) never change data, whatever a stable function calls (review round 3, I1).
      const stmt = request.method === 'GET' ? readOnly(toSql(plan)) : toSql(plan);
      return { plan, outcome: await runPlan(plan, stmt, principal, runOptions) };
    },
  };

  async function estimate(plan: Plan, principal: Principal): Promise<number | null> {
    if (plan.kind !== 'read') return null;
    const stmt = countRows(plan);
    // The values are one text[] parameter, typed here as run_as's PREPARE types it.
    const text = `explain (format json) ${stmt.text.replaceAll('$1[', '($1::text[])[')}`;
    try {
      return await deps.db.transaction(async (tx) => {
        await tx.query(
          "select set_config('role', $1, true), set_config('request.jwt.claims', $2, true), set_config('request.jwt.claim.sub', coalesce($3, ''), true)",
          [principal.role, principal.claims, runAsUid(principal)],
        );
        const r = await tx.query<Record<string, unknown>>(text, stmt.values.length ? [stmt.values] : []);
        await tx.query('select plinth.end_request($1, session_user::text)', [principal.role]);
        const cell = Object.values(r.rows[0] ?? {})[0];
        const parsed = (typeof cell === 'string' ? JSON.parse(cell) : cell) as Array<{ Plan?: { 'Plan Rows'?: unknown } }>;
        const rows = Number(parsed?.[0]?.Plan?.['Plan Rows']);
        return Number.isFinite(rows) ? rows : null;
      });
    } catch (err) {
      throw fromDbError(err, { relation: plan.table, writes: false });
    }
  }

  async function runPlan(plan: Plan, stmt: SqlStatement, principal: Principal, runOptions?: RunOptions): Promise<Outcome> {
    runOptions?.timer?.lap('sql');
    const outcome = inTransaction(runOptions)
      ? await executeInTransaction(deps.db, principal, plan, stmt, runOptions ?? {})
      : await execute(deps.db, principal, plan, stmt);
    runOptions?.timer?.lap('execute');
    return outcome;
  }
}
