/**
 * The database REST area (API.md §2, §2.1).
 * Adds: `GET|POST|PATCH|DELETE /api/v1/db/{table}`, `GET|PATCH|DELETE /api/v1/db/{table}/{pk}`,
 * `GET|POST /api/v1/rpc/{function}` (route tables in routes.ts) and `GET /api/v1/openapi.json`.
 * Reads embed related tables by foreign key (one statement per request: correlated subqueries),
 * filter with not./or/and groups, JSON paths and full-text search, and aggregate; creates upsert.
 * Error codes: table_not_found, column_not_found, relation_not_found, ambiguous_relation,
 * function_not_found, ambiguous_function, invalid_parameter, invalid_value, filter_required,
 * too_many_rows, conflict, constraint_violation, rls_violation, permission_denied, not_found,
 * method_not_allowed, invalid_request, raised_exception (a `raise exception`, with its message,
 * detail and hint), statement_timeout, database_unavailable; the SQLSTATE → code table is
 * `mapDbError` in execute.ts. Materialized views are read-only and closed to anon and
 * authenticated unless granted (migration 0006); functions of public are closed until granted
 * (migration 0070).
 * Stages: request/ (parse) → plan/ → sql/ → execute.ts → response/; stage times in `Server-Timing`.
 */
import type { Db } from '../db/index.js';
import type { App, CallerGuards } from '../http/index.js';
import { registerRoutes } from './routes.js';
import type { SchemaCache } from './schema-cache/index.js';

export {
  createSchemaCache,
  loadSchema,
  type SchemaCache,
  type SchemaSnapshot,
  type TableInfo,
  type ColumnInfo,
  type FunctionInfo,
  type Relation,
} from './schema-cache/index.js';
export { registerOpenApi, buildOpenApi, type OpenApiDeps } from './openapi/index.js';
export { REST_ROUTES, RPC_ROUTES } from './routes.js';
// The filter grammar, for other areas that filter rows the same way (realtime subscriptions).
export { parseFilter, parseQuery, splitList, type Condition, type Filter, type QueryAst } from './request/index.js';
export { planConditions } from './plan/index.js';

export interface RestDeps {
  db: Db;
  schema: SchemaCache;
  /** Who is calling (http/guards.ts). */
  callers: CallerGuards;
  /** Largest `limit` (MAX_ROWS); larger values are clamped. */
  maxRows: number;
}

/**
 * Mounts `/api/v1/db/{table}` (API.md §2): list, read one, create, update, delete, each
 * request going parse → plan → sql → execute → response.
 * @example registerRestRoutes(app, { db, schema, callers, maxRows: 1000 })
 */
export function registerRestRoutes(app: App, deps: RestDeps): void {
  registerRoutes(app, deps);
}
