/**
 * `/rest/v1` in PostgREST's grammar (docs/supabase.md, "/rest/v1"): a second parser on rest/'s
 * one engine. Adds: `GET|HEAD|POST|PATCH|PUT|DELETE /rest/v1/{table}`,
 * `GET|HEAD|POST /rest/v1/rpc/{function}`, `GET /rest/v1/` (Swagger 2.0). Errors are PostgREST's
 * `{code, message, details, hint}` (errors.ts), in the scope of these routes only.
 */
import type { App } from '../../http/index.js';
import { mountSupabaseRest, type SupabaseRestDeps } from './routes.js';

export type { SupabaseRestDeps } from './routes.js';
export { parsePostgrestQuery } from './query.js';
export { toPostgrestError, sqlstateStatus } from './errors.js';

/**
 * Mounts `/rest/v1` in its own scope (its error handler answers in PostgREST's shape).
 * @example await registerSupabaseRest(app, { db, schema, callers, maxRows: config.maxRows, publicUrl: config.publicUrl })
 */
export async function registerSupabaseRest(app: App, deps: SupabaseRestDeps): Promise<void> {
  await app.register(async (scope) => mountSupabaseRest(scope as unknown as App, deps));
}
