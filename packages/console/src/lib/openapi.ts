/**
 * Reads `GET /api/v1/openapi.json` into what the API explorer and the table browser show: the
 * tables with their columns and operations, and the other endpoints (auth). Defensive on
 * purpose: the document grows (response schemas, `$ref`s into components, new areas), so
 * anything unexpected is skipped, never thrown. No DOM: unit-tested in Node.
 */

export type JsonSchema = Record<string, unknown>;
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type TableOp = 'list' | 'get' | 'create' | 'update' | 'delete';

export interface ColumnDoc {
  name: string;
  /** A short type from the JSON Schema (`integer`, `string · uuid`, `json`), for when the SQL type is unknown. */
  type: string;
  /** `integer`, `number`, `boolean`, `string`, `json` (any JSON value), `array`, `object`. */
  kind: 'integer' | 'number' | 'boolean' | 'string' | 'json' | 'array' | 'object';
  nullable: boolean;
  /** Not null and without a default: a create must send it. */
  required: boolean;
  readOnly: boolean;
  description?: string;
}

/** A relation `select=` may embed (`x-plinth-relationships` of the row's schema), under the name to write. */
export interface RelationDoc {
  /** What to write in `select=`: `authors`, or `authors!posts_editor_id_fkey` when several keys lead there. */
  name: string;
  table: string;
  /** `one`: an object (or null); `many`: an array. */
  cardinality: 'one' | 'many';
  constraint: string;
  /** The join table of a many-to-many relation. */
  via?: string;
}

/** One argument of a function: its name, JSON kind, and whether a call must give it. */
export interface ArgDoc {
  name: string;
  kind: ColumnDoc['kind'];
  type: string;
  required: boolean;
}

/** One overload of a function (`x-plinth-overloads`). */
export interface OverloadDoc {
  signature: string;
  args: ArgDoc[];
  /** Returns a set of rows or values (filters, order, limit apply). */
  set: boolean;
  volatility: string;
}

/** A function of `/api/v1/rpc/{name}` the caller may execute. */
export interface FunctionDoc {
  name: string;
  overloads: OverloadDoc[];
  /** Every overload is stable or immutable: it may be called with GET too. */
  get: boolean;
  description?: string;
}

export interface TableDoc {
  name: string;
  columns: ColumnDoc[];
  /** The relations `select=` may embed, by name. */
  relations: RelationDoc[];
  /** The operations the document lists for the table (a view has `list` and maybe `get`). */
  ops: TableOp[];
  /** `/{pk}` paths exist (a single-column primary key). */
  byKey: boolean;
  /** The key's column, when the document says which. */
  pk: string | null;
  description?: string;
}

export interface ParamDoc {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  description?: string;
}

export interface EndpointDoc {
  method: Method;
  path: string;
  tag: string;
  summary?: string;
  params: ParamDoc[];
  /** The JSON body's schema, `$ref`s resolved. */
  body: JsonSchema | null;
  /** Answers with a browser redirect (social sign-in): not callable with fetch. */
  redirect: boolean;
}

export interface ApiDoc {
  tables: TableDoc[];
  functions: FunctionDoc[];
  endpoints: EndpointDoc[];
  serverUrl: string | null;
}

const DB_PREFIX = '/api/v1/db/';
const RPC_PREFIX = '/api/v1/rpc/';
const METHODS: Method[] = ['GET', 'POST', 'PATCH', 'DELETE'];

const isObj = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Follows a local `$ref` (`#/components/…`, JSON-pointer escapes, percent-encoding) at most 20 deep. */
export function resolveRef(doc: JsonSchema, value: unknown, depth = 0): unknown {
  if (!isObj(value) || typeof value.$ref !== 'string' || depth > 20) return value;
  const ref = value.$ref;
  if (!ref.startsWith('#/')) return {};
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return {};
    }
    if (!isObj(node) || !Object.hasOwn(node, key)) return {};
    node = node[key];
  }
  return resolveRef(doc, node, depth + 1);
}

/** A schema with every nested `$ref` replaced (cycles cut at depth 8). */
export function deref(doc: JsonSchema, value: unknown, depth = 0): unknown {
  const v = resolveRef(doc, value);
  if (depth > 8) return {};
  if (Array.isArray(v)) return v.map((x) => deref(doc, x, depth + 1));
  if (!isObj(v)) return v;
  const out: JsonSchema = {};
  for (const [k, x] of Object.entries(v)) out[k] = deref(doc, x, depth + 1);
  return out;
}

function columnOf(name: string, schema: unknown, required: Set<string>): ColumnDoc {
  const s = isObj(schema) ? schema : {};
  const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t): t is string => typeof t === 'string');
  const main = types.find((t) => t !== 'null');
  const kind: ColumnDoc['kind'] =
    main === 'integer' || main === 'number' || main === 'boolean' || main === 'string' || main === 'array' || main === 'object'
      ? main
      : 'json';
  const format = str(s.format);
  return {
    name,
    type: kind === 'json' ? 'json' : format ? `${kind} · ${format}` : Array.isArray(s.enum) ? 'enum' : kind,
    kind,
    // No `type` at all is any JSON value, null included.
    nullable: types.length === 0 || types.includes('null'),
    required: required.has(name),
    readOnly: s.readOnly === true,
    description: str(s.description),
  };
}

/** The table's row schema: the component named like it, else the list answer's items. */
function rowSchema(doc: JsonSchema, name: string, list: unknown): JsonSchema | null {
  const components = isObj(doc.components) && isObj(doc.components.schemas) ? doc.components.schemas : {};
  const own = Object.hasOwn(components, name) ? resolveRef(doc, components[name]) : null;
  if (isObj(own) && isObj(own.properties)) return own;
  const responses = isObj(list) && isObj(list.responses) ? list.responses : {};
  const ok = resolveRef(doc, responses['200']);
  const content = isObj(ok) && isObj(ok.content) ? ok.content['application/json'] : null;
  const schema = isObj(content) ? resolveRef(doc, content.schema) : null;
  const items = isObj(schema) ? resolveRef(doc, schema.items) : null;
  return isObj(items) && isObj(items.properties) ? items : null;
}

function paramsOf(doc: JsonSchema, op: JsonSchema): ParamDoc[] {
  const list = Array.isArray(op.parameters) ? op.parameters : [];
  const out: ParamDoc[] = [];
  for (const raw of list) {
    const p = resolveRef(doc, raw);
    if (!isObj(p) || typeof p.name !== 'string') continue;
    if (p.in !== 'query' && p.in !== 'path' && p.in !== 'header') continue;
    out.push({ name: p.name, in: p.in, required: p.required === true, description: str(p.description) });
  }
  return out;
}

function bodyOf(doc: JsonSchema, op: JsonSchema): JsonSchema | null {
  const rb = resolveRef(doc, op.requestBody);
  const content = isObj(rb) && isObj(rb.content) ? rb.content['application/json'] : null;
  const schema = isObj(content) ? deref(doc, content.schema) : null;
  return isObj(schema) ? schema : null;
}

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The key column from the `pk` path parameter's description ("The id of the row."), if it says. */
function pkFromDoc(doc: JsonSchema, item: JsonSchema): string | null {
  for (const m of ['get', 'patch', 'delete']) {
    const op = item[m];
    if (!isObj(op)) continue;
    for (const raw of Array.isArray(op.parameters) ? op.parameters : []) {
      const p = resolveRef(doc, raw);
      const match = isObj(p) && p.in === 'path' ? /^The (.+) of the row\.?$/.exec(str(p.description) ?? '') : null;
      if (match) return match[1];
    }
  }
  return null;
}

/** The JSON body schema of a create (the object form of a `oneOf` of object and array), `$ref`s resolved. */
function insertSchema(doc: JsonSchema, post: unknown): JsonSchema | null {
  if (!isObj(post)) return null;
  const body = resolveRef(doc, post.requestBody);
  if (!isObj(body) || !isObj(body.content)) return null;
  const json = body.content['application/json'];
  if (!isObj(json)) return null;
  const schema = resolveRef(doc, json.schema);
  if (!isObj(schema)) return null;
  if (!Array.isArray(schema.oneOf)) return schema;
  for (const option of schema.oneOf) {
    const s = resolveRef(doc, option);
    if (isObj(s) && (s.type === 'object' || isObj(s.properties))) return s;
  }
  return null;
}

/**
 * The relations of a row's schema, one per foreign key (and join table): the document lists
 * every way to write each (`authors`, `author`, `author_id`, `authors!books_author_id_fkey`); the
 * picker offers one, the table's name when it is unambiguous, else the shortest.
 */
function relationsOf(schema: JsonSchema | null): RelationDoc[] {
  const rels = isObj(schema?.['x-plinth-relationships']) ? (schema['x-plinth-relationships'] as JsonSchema) : {};
  const byKey = new Map<string, RelationDoc>();
  for (const [name, r] of Object.entries(rels)) {
    if (!isObj(r) || typeof r.table !== 'string') continue;
    const rel: RelationDoc = {
      name,
      table: r.table,
      cardinality: r.cardinality === 'many' ? 'many' : 'one',
      constraint: str(r.constraint) ?? '',
      ...(typeof r.via === 'string' ? { via: r.via } : {}),
    };
    const key = `${rel.constraint}|${rel.via ?? ''}|${rel.table}`;
    const held = byKey.get(key);
    const better = !held || name === rel.table || (held.name !== rel.table && name.length < held.name.length);
    if (better) byKey.set(key, rel);
  }
  return [...byKey.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A function's path item: its overloads with their arguments, from `x-plinth-overloads`. */
function functionOf(doc: JsonSchema, name: string, item: JsonSchema): FunctionDoc | null {
  const post = isObj(item.post) ? item.post : null;
  const raw = post && Array.isArray(post['x-plinth-overloads']) ? post['x-plinth-overloads'] : [];
  const overloads: OverloadDoc[] = [];
  for (const o of raw) {
    if (!isObj(o)) continue;
    const args = resolveRef(doc, o.args);
    const props = isObj(args) && isObj(args.properties) ? args.properties : {};
    const required = new Set(isObj(args) && Array.isArray(args.required) ? args.required : []);
    overloads.push({
      signature: str(o.signature) ?? name,
      args: Object.entries(props).map(([arg, sch]) => {
        const c = columnOf(arg, resolveRef(doc, sch), new Set());
        return { name: arg, kind: c.kind, type: c.type, required: required.has(arg) };
      }),
      set: o.set === true,
      volatility: str(o.volatility) ?? 'volatile',
    });
  }
  if (!post || overloads.length === 0) return null;
  return { name, overloads, get: isObj(item.get), description: str(post.description) };
}

/**
 * The tables and endpoints of an OpenAPI document; never throws.
 * @example parseOpenApi(await (await fetch('/api/v1/openapi.json', { headers: { apikey } })).json()).tables[0].name // 'todos'
 */
export function parseOpenApi(input: unknown): ApiDoc {
  const doc = isObj(input) ? input : {};
  const paths = isObj(doc.paths) ? doc.paths : {};
  const tables = new Map<string, { collection?: JsonSchema; item?: JsonSchema }>();
  const endpoints: EndpointDoc[] = [];
  const functions: FunctionDoc[] = [];
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = resolveRef(doc, rawItem);
    if (!isObj(item)) continue;
    if (path.startsWith(RPC_PREFIX)) {
      const segment = path.slice(RPC_PREFIX.length);
      const name = segment && !segment.includes('/') ? decode(segment) : null;
      const fn = name ? functionOf(doc, name, item) : null;
      if (fn) functions.push(fn);
      continue;
    }
    if (path.startsWith(DB_PREFIX)) {
      const [segment, key, ...extra] = path.slice(DB_PREFIX.length).split('/');
      const name = segment ? decode(segment) : null;
      if (!name || extra.length > 0 || (key !== undefined && !/^\{[^}]+\}$/.test(key))) continue;
      const entry = tables.get(name) ?? {};
      if (key === undefined) entry.collection = item;
      else entry.item = item;
      tables.set(name, entry);
      continue;
    }
    for (const method of METHODS) {
      const op = item[method.toLowerCase()];
      if (!isObj(op)) continue;
      const tags = Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === 'string') : [];
      const responses = isObj(op.responses) ? op.responses : {};
      endpoints.push({
        method,
        path,
        tag: tags[0] ?? (path.startsWith('/v1/auth') ? 'auth' : 'other'),
        summary: str(op.summary),
        params: paramsOf(doc, op),
        body: bodyOf(doc, op),
        redirect: Object.keys(responses).some((code) => /^3\d\d$/.test(code)) && !('200' in responses),
      });
    }
  }
  const out: TableDoc[] = [];
  for (const [name, { collection = {}, item }] of tables) {
    const ops: TableOp[] = [];
    if (isObj(collection.get)) ops.push('list');
    if (item && isObj(item.get)) ops.push('get');
    if (isObj(collection.post)) ops.push('create');
    if (isObj(collection.patch) || (item && isObj(item.patch))) ops.push('update');
    if (isObj(collection.delete) || (item && isObj(item.delete))) ops.push('delete');
    const schema = rowSchema(doc, name, collection.get);
    // What a create must send is the create body's `required` (a row lists every column it
    // answers with as required); a document without a create body falls back to the row's.
    const insert = insertSchema(doc, collection.post) ?? schema;
    const required = new Set(Array.isArray(insert?.required) ? insert.required.filter((r): r is string => typeof r === 'string') : []);
    const props = isObj(schema?.properties) ? schema.properties : {};
    out.push({
      name,
      columns: Object.entries(props).map(([col, s]) => columnOf(col, resolveRef(doc, s), required)),
      relations: relationsOf(schema),
      ops,
      byKey: item !== undefined,
      pk: item ? pkFromDoc(doc, item) : null,
      description: str(schema?.description),
    });
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const servers = Array.isArray(doc.servers) ? doc.servers : [];
  const serverUrl = isObj(servers[0]) ? (str(servers[0].url) ?? null) : null;
  functions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { tables: out, functions, endpoints, serverUrl };
}
