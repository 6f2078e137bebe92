import type { Db } from '../db/index.js';
import type { App } from '../http/server.js';
import type { PrincipalResolver } from '../http/principal.js';
import { registerRoutes } from './routes.js';
import type { SchemaCache } from './schema-cache/index.js';

export { createSchemaCache, loadSchema, type SchemaCache, type TableInfo, type ColumnInfo } from './schema-cache/index.js';
export { registerOpenApi, buildOpenApi, type OpenApiDeps } from './openapi/index.js';
export { REST_ROUTES } from './routes.js';

export interface RestDeps {
  db: Db;
  schema: SchemaCache;
  resolvePrincipal: PrincipalResolver;
  /** Largest `limit` (MAX_ROWS); larger values are clamped. */
  maxRows: number;
}

/**
 * Mounts `/api/v1/db/{table}` (API.md §2): list, read one, create, update, delete, each
 * request going parse → plan → sql → execute → response.
 * @example registerRestRoutes(app, { db, schema, resolvePrincipal, maxRows: 1000 })
 */
export function registerRestRoutes(app: App, deps: RestDeps): void {
  registerRoutes(app, deps);
}
