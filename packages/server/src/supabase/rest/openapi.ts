/**
 * `GET /rest/v1/`: PostgREST's root, a Swagger 2.0 document of what the caller may use (the
 * tables and views its role has a privilege on, the functions it may execute), built from the
 * schema cache as `/api/v1/openapi.json` is. Its clients read `definitions` (type generators)
 * and wait on the root to know the API is up.
 */
import type { Principal } from '../../http/index.js';
import { functionAccess, relationAccess, tableSchemas } from '../../rest/index.js';
import type { SupabaseRestDeps } from './routes.js';

type Json = Record<string, unknown>;

/**
 * The document for one caller, of one exposed schema (`Accept-Profile`).
 * @example await swaggerDocument(deps, principal) // { swagger: '2.0', definitions: { todos: … }, paths: { '/todos': … } }
 */
export async function swaggerDocument(
  deps: Pick<SupabaseRestDeps, 'db' | 'schema' | 'publicUrl'>,
  principal: Principal,
  schema = 'public',
): Promise<Json> {
  const snapshot = deps.schema.get(schema) ?? deps.schema.get();
  const all = principal.role === 'service';
  const relations = all ? null : await relationAccess(deps.db, principal.role, snapshot.schema);
  const functions = all ? null : await functionAccess(deps.db, principal.role);
  const definitions: Json = {};
  const paths: Json = {
    '/': { get: { summary: 'OpenAPI description (this document)', tags: ['Introspection'], responses: { 200: { description: 'OK' } } } },
  };
  for (const name of [...snapshot.tables.keys()].sort()) {
    const table = snapshot.tables.get(name);
    if (!table) continue;
    const a = relations?.get(name);
    if (relations && (!a || (a.select.size === 0 && a.insert.size === 0 && a.update.size === 0 && !a.delete))) continue;
    definitions[name] = tableSchemas(table, a).row;
    const ops: Json = {};
    const ok = { 200: { description: 'OK' } };
    if (!a || a.select.size > 0) ops.get = { tags: [name], responses: ok };
    if (table.kind === 'table') {
      if (!a || a.insert.size > 0) ops.post = { tags: [name], responses: { 201: { description: 'Created' } } };
      if (!a || a.update.size > 0) ops.patch = { tags: [name], responses: { 204: { description: 'No Content' } } };
      if (!a || a.delete) ops.delete = { tags: [name], responses: { 204: { description: 'No Content' } } };
    }
    paths[`/${name}`] = ops;
  }
  for (const [name, overloads] of [...snapshot.functions.entries()].sort(([x], [y]) => (x < y ? -1 : 1))) {
    if (functions && !overloads.some((f) => functions.has(f.oid))) continue;
    paths[`/rpc/${name}`] = { post: { tags: ['(rpc) ' + name], responses: { 200: { description: 'OK' } } } };
  }
  const url = new URL(deps.publicUrl);
  return {
    swagger: '2.0',
    info: { title: 'Plinth /rest/v1 (PostgREST grammar)', version: '12.2.0', description: 'docs/supabase.md, "/rest/v1"' },
    host: url.host,
    basePath: '/rest/v1/',
    schemes: [url.protocol.replace(':', '')],
    consumes: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'],
    produces: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'],
    paths,
    definitions,
  };
}
