/**
 * The database REST area (API.md §2).
 * Adds: `GET|POST|PATCH|DELETE /api/v1/db/{table}`, `GET|PATCH|DELETE /api/v1/db/{table}/{pk}`
 * (route table in routes.ts) and `GET /api/v1/openapi.json`.
 * Error codes: table_not_found, column_not_found, invalid_parameter, invalid_value,
 * filter_required, too_many_rows, conflict, constraint_violation, rls_violation,
 * permission_denied, not_found, method_not_allowed, invalid_request (also a trigger's
 * `raise exception`, with its message), statement_timeout, database_unavailable; the
 * SQLSTATE → code table is db/errors.ts, told the table by execute.ts. Materialized views are read-only and
 * closed to anon and authenticated unless granted (migration 0006).
 * Stages: request/ (parse) → plan/ → sql/ → execute.ts → response/; stage times in `Server-Timing`.
 */
import type { Db } from '../db/index.js';
import type { App, CallerGuards } from '../http/index.js';
import { registerRoutes } from './routes.js';
import type { SchemaCache } from './schema-cache/index.js';

export { createSchemaCache, loadSchema, type SchemaCache, type TableInfo, type ColumnInfo } from './schema-cache/index.js';
export { registerOpenApi, buildOpenApi, type OpenApiDeps } from './openapi/index.js';
export { REST_ROUTES } from './routes.js';

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
