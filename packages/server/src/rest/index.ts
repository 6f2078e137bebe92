/**
 * The database REST area (docs/api.md §2).
 * Adds: `GET|POST|PATCH|DELETE /api/v1/db/{table}`, `GET|PATCH|DELETE /api/v1/db/{table}/{pk}`
 * (route table in routes.ts) and `GET /api/v1/openapi.json`.
 * Error codes: table_not_found, column_not_found, invalid_parameter, invalid_value,
 * filter_required, too_many_rows, conflict, constraint_violation, rls_violation,
 * permission_denied, not_found, method_not_allowed, raised_exception (a trigger's or
 * function's `raise exception`, with its message), invalid_request (a statement the database
 * refuses), statement_timeout, database_unavailable; the SQLSTATE → code table is
 * db/errors.ts, which execute.ts tells the table. Materialized views are read-only and
 * closed to anon and authenticated unless granted (migration 0006).
 * Stages: request/ (parse) → plan/ → sql/ → execute.ts → response/; stage times in `Server-Timing`.
 */
export { createSchemaCache, loadSchema, type SchemaCache, type TableInfo, type ColumnInfo } from './schema-cache/index.js';
export { registerOpenApi, buildOpenApi, type OpenApiDeps } from './openapi/index.js';
export { REST_ROUTES, registerRestRoutes, type RestDeps } from './routes.js';
// The filter grammar and the one quoting function, for areas that take REST filters (realtime).
export { parseQuery, type Filter, type QueryAst } from './request/index.js';
export { arrayLiteral, quoteIdent } from './sql/index.js';
