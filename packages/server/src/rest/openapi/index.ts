/**
 * `GET /api/v1/openapi.json`: OpenAPI 3.1 of the tables, the functions (`/api/v1/rpc/…`) and of the
 * routes other areas document (http/route-docs.ts), rebuilt when the schema changes. The public key and users see what their
 * role may use (its privileges); the secret key sees everything, management routes included.
 */
import type { Db } from '../../db/index.js';
import { type App, type CallerGuards, type Principal, type RouteDocs, SECURITY_SCHEMES } from '../../http/index.js';
import { addressableRelations, type SchemaCache, type SchemaSnapshot, type TableInfo } from '../schema-cache/index.js';
import { functionAccess, type RelationAccess, relationAccess } from './access.js';
import { tablePaths } from './paths.js';
import { rpcPath } from './rpc.js';
import { type JsonSchema, tableSchemas } from './schema.js';

export { columnSchema, tableSchemas, type JsonSchema } from './schema.js';

export interface OpenApiDeps {
  db: Db;
  schema: SchemaCache;
  /** Who is calling (http/guards.ts). */
  callers: CallerGuards;
  /** `PUBLIC_URL`, the document's server. */
  publicUrl: string;
  /** The documented routes of the other areas; read once the routes are fixed. */
  routeDocs?: () => RouteDocs;
}

const ERROR_BODY: JsonSchema = {
  type: 'object',
  properties: {
    code: { type: 'string', description: 'A stable code (docs/api.md §1).' },
    message: { type: 'string' },
    details: { description: 'More about the error, when there is more.' },
  },
  required: ['code', 'message'],
};

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Component keys must match `^[a-zA-Z0-9._-]+$`: odd table names get a safe, unique key. */
function componentKeys(names: string[]): Map<string, { row: string; insert: string; update: string }> {
  const taken = new Set<string>();
  const out = new Map<string, { row: string; insert: string; update: string }>();
  const claim = (wanted: string) => {
    let key = wanted;
    for (let i = 2; taken.has(key); i++) key = `${wanted}_${i}`;
    taken.add(key);
    return key;
  };
  for (const name of names) {
    const safe = /^[A-Za-z0-9._-]+$/.test(name) ? name : name.replace(/[^A-Za-z0-9._-]/g, '_');
    out.set(name, { row: claim(safe), insert: claim(`${safe}.insert`), update: claim(`${safe}.update`) });
  }
  return out;
}

/** What a role may use: its privileges on relations, and the functions it may execute. */
export interface RoleAccess {
  relations: Map<string, RelationAccess>;
  functions: Set<number>;
}

/**
 * `x-plinth-relationships` of a table's row: each way `select=` may embed a relation the caller
 * may read, with what it gives (`plinth gen types` types embedded results from it).
 */
function relationships(snapshot: SchemaSnapshot, table: TableInfo, readable: (name: string) => boolean): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, r] of addressableRelations(snapshot.relations.get(table.name) ?? [])) {
    if (!readable(r.target)) continue;
    out[name] = {
      table: r.target,
      cardinality: r.cardinality,
      kind: r.kind,
      constraint: r.via ? r.via.fk.name : r.fk.name,
      ...(r.via ? { via: r.via.table } : {}),
    };
  }
  return out;
}

/**
 * The OpenAPI document of a schema snapshot. Deterministic: tables and paths in code-point order.
 * `access` (a role's privileges per relation and function) limits it to what that role may use;
 * without it every table, function and documented route is in it.
 * @example buildOpenApi(cache.get(), 'http://localhost:8080').components.schemas.todos
 */
export function buildOpenApi(
  snapshot: SchemaSnapshot,
  publicUrl: string,
  routes: RouteDocs = { paths: {}, schemas: {} },
  roleAccess?: RoleAccess,
): JsonSchema {
  const access = roleAccess?.relations;
  const schemas: Record<string, JsonSchema> = { ...routes.schemas };
  const paths: Record<string, JsonSchema> = {};
  const names = [...snapshot.tables.keys()].sort(byName);
  const keys = componentKeys(names);
  const readableTable = (name: string) => !access || (access.get(name)?.select.size ?? 0) > 0;
  for (const name of names) {
    const table = snapshot.tables.get(name);
    const k = keys.get(name);
    if (!table || !k) continue;
    const a = access ? access.get(name) : undefined;
    if (access && !a) continue;
    const can = a
      ? { read: a.select.size > 0, insert: a.insert.size > 0, update: a.update.size > 0, delete: a.delete }
      : { read: true, insert: true, update: true, delete: true };
    if (!can.read && !can.insert && !can.update && !can.delete) continue;
    const s = tableSchemas(table, a);
    const rels = relationships(snapshot, table, readableTable);
    schemas[k.row] = Object.keys(rels).length ? { ...s.row, 'x-plinth-relationships': rels } : s.row;
    if (table.kind === 'table') {
      if (can.insert) schemas[k.insert] = s.insert;
      if (can.update) schemas[k.update] = s.update;
    }
    const readable = table.columnList.filter((c) => !a || a.select.has(c.name));
    Object.assign(paths, tablePaths({ table, keys: k, readable, relations: Object.keys(rels), can }));
  }
  // Functions: those the role may execute (all for the secret key), one path per name.
  const rowKey = (t: TableInfo) =>
    snapshot.tables.get(t.name) === t && schemas[keys.get(t.name)?.row ?? ''] ? (keys.get(t.name)?.row ?? null) : null;
  for (const name of [...snapshot.functions.keys()].sort(byName)) {
    const overloads = (snapshot.functions.get(name) ?? []).filter((f) => !roleAccess || roleAccess.functions.has(f.oid));
    if (overloads.length) paths[`/api/v1/rpc/${encodeURIComponent(name)}`] = rpcPath(name, overloads, rowKey);
  }
  for (const p of Object.keys(routes.paths).sort(byName)) {
    const item = access ? publicOperations(routes.paths[p]) : routes.paths[p];
    if (item) paths[p] = item;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plinth API',
      version: '1',
      description: 'The REST API of the project’s tables, end-user auth and, for the secret key, management. docs/api.md has the rules.',
    },
    servers: [{ url: publicUrl }],
    security: [{ apikey: [] }, { bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: SECURITY_SCHEMES,
      responses: {
        Error: { description: 'An error: {code, message, details?}.', content: { 'application/json': { schema: ERROR_BODY } } },
      },
    },
  };
}

/** A path item without its management operations (tag `management`), or null when none is left. */
function publicOperations(item: JsonSchema): JsonSchema | null {
  const kept = Object.entries(item).filter(([, op]) => !((op as { tags?: string[] }).tags ?? []).includes('management'));
  return kept.length ? Object.fromEntries(kept) : null;
}

/** Whose view of the document a principal gets: its role's privileges, or everything. */
const audience = (p: Principal): 'anon' | 'authenticated' | 'all' => (p.role === 'service' ? 'all' : p.role);

/**
 * Mounts `GET /api/v1/openapi.json` for any valid key; the JSON text is cached per schema
 * version and audience (anon, users, secret key).
 * @example registerOpenApi(app, { db, schema, callers, publicUrl: config.publicUrl, routeDocs })
 */
export function registerOpenApi(app: App, deps: OpenApiDeps): void {
  const cached = new Map<string, { version: number; text: string }>();
  app.get('/api/v1/openapi.json', async (req, reply) => {
    const who = audience(await deps.callers.callerOf(req));
    const snapshot = deps.schema.get();
    let hit = cached.get(who);
    if (!hit || hit.version !== snapshot.version) {
      const access =
        who === 'all' ? undefined : { relations: await relationAccess(deps.db, who), functions: await functionAccess(deps.db, who) };
      const doc = buildOpenApi(snapshot, deps.publicUrl, deps.routeDocs?.(), access);
      hit = { version: snapshot.version, text: JSON.stringify(doc) };
      cached.set(who, hit);
    }
    return reply.type('application/json; charset=utf-8').send(hit.text);
  });
}
