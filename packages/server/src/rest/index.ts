import type { Db } from '../db/index.js';
import type { App } from '../http/server.js';
import type { PrincipalResolver } from '../http/principal.js';
import type { SchemaCache } from './schema-cache/index.js';

export { createSchemaCache, loadSchema, type SchemaCache, type TableInfo, type ColumnInfo } from './schema-cache/index.js';

export interface RestDeps {
  db: Db;
  schema: SchemaCache;
  resolvePrincipal: PrincipalResolver;
  /** Largest `limit` (MAX_ROWS); larger values are clamped. */
  maxRows: number;
}

/**
 * Mounts `/api/v1/db/{table}` (API.md §2).
 * @example registerRestRoutes(app, { db, schema, resolvePrincipal, maxRows: 1000 })
 */
export function registerRestRoutes(_app: App, _deps: RestDeps): void {
  // filled in by the REST area
}
