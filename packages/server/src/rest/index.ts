/**
 * The database REST area (docs/api.md §2).
 * Adds: `GET|POST|PATCH|DELETE /api/v1/db/{table}`, `GET|PATCH|DELETE /api/v1/db/{table}/{pk}`,
 * `GET|POST /api/v1/rpc/{function}` (route tables in routes.ts) and `GET /api/v1/openapi.json`.
 * Reads embed related tables by foreign key (one statement per request: correlated subqueries),
 * filter with not./or/and groups, JSON paths and full-text search, and aggregate; creates upsert.
 * Error codes: table_not_found, column_not_found, relation_not_found, ambiguous_relation,
 * function_not_found, ambiguous_function, invalid_parameter, invalid_value, filter_required,
 * too_many_rows, conflict, constraint_violation, rls_violation, permission_denied, not_found,
 * method_not_allowed, raised_exception (a trigger's or function's `raise exception`, with its
 * message, detail and hint), invalid_request (a statement the database refuses),
 * statement_timeout, database_unavailable; the SQLSTATE → code table is db/errors.ts, which
 * execute.ts tells the table or the function. Materialized views are read-only and closed to
 * anon and authenticated unless granted (migration 0006); functions of public are closed until
 * granted (migration 0070).
 * Stages: request/ (parse) → plan/ → sql/ → execute.ts → response/; stage times in `Server-Timing`.
 */
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
export { REST_ROUTES, RPC_ROUTES, registerRestRoutes, type RestDeps } from './routes.js';
// The filter grammar and the one quoting function, for areas that take REST filters (realtime,
// webhooks): its core operators only, which they evaluate themselves.
export { parseCoreQuery as parseQuery } from './request/index.js';
import type { CoreFilter, Condition as AnyCondition, QueryAst as AnyQueryAst } from './request/index.js';
export type Filter = CoreFilter;
export type Condition = AnyCondition<CoreFilter>;
export type QueryAst = AnyQueryAst<CoreFilter>;
export { arrayLiteral, quoteIdent } from './sql/index.js';
// For faces in another grammar (supabase/rest): the same parser pieces, plan, SQL and execution.
export { createRestEngine, type RestEngine, type RestEngineDeps, type RunOptions } from './engine.js';
export type { Outcome } from './execute.js';
export type { Plan, RestRequest, RpcRequest } from './plan/index.js';
export {
  emptyQueryAst,
  isOperator as isRestOperator,
  leaf as restLeaf,
  parseOrder,
  parseSelect,
  splitList,
  type Condition as RestCondition,
  type Filter as RestFilter,
  type LogicGroup as RestLogicGroup,
  type Preferences,
  type QueryAst as RestQueryAst,
} from './request/index.js';
export { contentRange } from './response/index.js';
export { functionAccess, relationAccess } from './openapi/access.js';
export { tableSchemas } from './openapi/index.js';
