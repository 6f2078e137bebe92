/**
 * The REST engine as one call, for a face that speaks another grammar (supabase/rest: PostgREST's):
 * a parsed request → plan (against the schema cache, reloaded once when a name may be brand new)
 * → one SQL statement → executed as the caller. The grammar is the face's; the plan, the SQL and
 * the execution are the ones `/api/v1/db` and `/api/v1/rpc` use (routes.ts), so a rule lives once.
 */
import type { Db } from '../db/index.js';
import { ApiError, type Principal } from '../http/index.js';
import { type Outcome, execute } from './execute.js';
import { withHint } from './hints.js';
import { type Plan, type RestRequest, type RpcRequest, planRequest, planRpc } from './plan/index.js';
import type { SchemaCache } from './schema-cache/index.js';
import { readOnly, toSql } from './sql/index.js';

/** Codes a brand-new table, column, relation or function could cause: the cache may be a moment behind. */
const MAYBE_STALE = new Set(['table_not_found', 'column_not_found', 'relation_not_found', 'function_not_found']);

export interface RestEngineDeps {
  db: Db;
  schema: SchemaCache;
  /** Largest `limit` (MAX_ROWS); larger values are clamped. */
  maxRows: number;
}

export interface RestEngine {
  /** Plans, builds and runs a table request as `principal`; the plan comes back for the response. */
  run(request: RestRequest, principal: Principal): Promise<{ plan: Plan; outcome: Outcome }>;
  /** Plans, builds and runs a function call; GET (and HEAD) in a read-only transaction. */
  call(request: RpcRequest, principal: Principal): Promise<{ plan: Plan; outcome: Outcome }>;
}

/**
 * The engine of routes.ts behind one function per request kind.
 * @example const engine = createRestEngine({ db, schema, maxRows: 1000 }); await engine.run(request, principal)
 */
export function createRestEngine(deps: RestEngineDeps): RestEngine {
  const options = { maxRows: deps.maxRows };
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
    async run(request, principal) {
      const plan = await withReload(() => planRequest(request, deps.schema.get(), options)).catch(async (err) => {
        throw await withHint(err, { db: deps.db, schema: deps.schema.get(), principal, table: request.table });
      });
      const outcome = await execute(deps.db, principal, plan, toSql(plan));
      return { plan, outcome };
    },
    async call(request, principal) {
      const plan = await withReload(() => planRpc(request, deps.schema.get(), options));
      // GET (and HEAD) never change data, whatever a stable function calls (review round 3, I1).
      const stmt = request.method === 'GET' ? readOnly(toSql(plan)) : toSql(plan);
      const outcome = await execute(deps.db, principal, plan, stmt);
      return { plan, outcome };
    },
  };
}
