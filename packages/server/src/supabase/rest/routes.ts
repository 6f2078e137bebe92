/**
 * `/rest/v1` (docs/supabase.md, "/rest/v1"): PostgREST's grammar on rest/'s engine. Each request
 * is parsed here (query.ts, headers.ts) into rest/'s request, planned, built and run by rest/
 * (one statement, as the caller), and answered in PostgREST's form (status, `Content-Range`,
 * `Preference-Applied`, one object, CSV, its error shape).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/index.js';
import { ApiError, type App, type CallerGuards, type Principal } from '../../http/index.js';
import {
  type Outcome,
  type Plan,
  type Preferences,
  type RestEngine,
  type RpcRequest,
  type RunOptions,
  type SchemaCache,
  contentRange,
  createRestEngine,
} from '../../rest/index.js';
import { PostgrestError, pgrst, rpcError, toPostgrestError } from './errors.js';
import {
  type PostgrestPrefs,
  type Representation,
  acceptOf,
  checkProfile,
  parsePostgrestPrefer,
  rangeOf,
  stripNulls,
  stripsNulls,
  toCsv,
} from './headers.js';
import { swaggerDocument } from './openapi.js';
import { parsePostgrestQuery } from './query.js';

export const SUPABASE_REST_PREFIX = '/rest/v1/';
const RPC_PREFIX = '/rest/v1/rpc/';

export interface SupabaseRestDeps {
  db: Db;
  schema: SchemaCache;
  callers: CallerGuards;
  /** Largest number of rows a read returns (MAX_ROWS): PostgREST's `db-max-rows`. */
  maxRows: number;
  publicUrl: string;
  /**
   * The schemas `/rest/v1` exposes (PostgREST's `db-schemas`, a Supabase folder's `[api] schemas`),
   * the default profile first; `['public']` when absent. Each is in the schema cache (`schemas`).
   */
  schemas?: readonly string[];
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** The raw path segment after a prefix, percent-decoded (a name may hold any character). */
function segment(url: string, prefix: string): string {
  const q = url.indexOf('?');
  const raw = url.slice(prefix.length, q === -1 ? url.length : q);
  if (raw === '' || raw.includes('/')) throw pgrst(404, 'PGRST125', `Invalid path specified in request URL`);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw pgrst(404, 'PGRST125', 'Invalid path specified in request URL');
  }
}

const queryOf = (url: string) => {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
};

/**
 * Mounts `/rest/v1/{table}`, `/rest/v1/rpc/{function}` and `GET /rest/v1/` in a scope whose
 * errors take PostgREST's shape.
 * @example await app.register(async (scope) => mountSupabaseRest(scope, deps))
 */
export function mountSupabaseRest(app: App, deps: SupabaseRestDeps): void {
  const engine = createRestEngine({ db: deps.db, schema: deps.schema, maxRows: deps.maxRows });

  // postgrest-js sends `Content-Type: application/json` with a DELETE's empty body: no body, as PostgREST reads it.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    const s = String(text);
    if (s.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(s));
    } catch {
      done(pgrst(400, 'PGRST102', 'Empty or invalid json'), undefined);
    }
  });

  // A function with one unnamed xml or bytea argument takes the body whole (PostgREST's rule; text/plain is Fastify's own).
  app.addContentTypeParser('text/xml', { parseAs: 'string' }, (_req, text, done) => done(null, String(text)));
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, bytes, done) => done(null, bytes));

  app.setErrorHandler((err, req, reply) => {
    const ctx = (req as FastifyRequest & { pgrstContext?: Parameters<typeof toPostgrestError>[1] }).pgrstContext;
    const e = toPostgrestError(frameworkError(err), ctx ?? { principal: req.principal ?? null });
    if (e === null) {
      req.log.error({ err, url: req.url.split('?')[0], method: req.method }, 'request failed');
      return reply.code(500).type(JSON_TYPE).send({ code: 'internal_error', message: 'Internal server error.', details: null, hint: null });
    }
    if (e.status >= 500) req.log.warn({ err, code: e.body.code }, `answering ${e.status}`);
    if (err instanceof ApiError && err.headers) reply.headers(err.headers);
    return reply.code(e.status).type(JSON_TYPE).send(e.body);
  });

  const table = (req: FastifyRequest, reply: FastifyReply) => handleTable(engine, deps, req, reply);
  const rpc = (req: FastifyRequest, reply: FastifyReply) => handleRpc(engine, deps, req, reply);
  app.route({ method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'], url: `${RPC_PREFIX}*`, handler: rpc });
  app.route({ method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'], url: `${SUPABASE_REST_PREFIX}*`, handler: table });
  app.route({
    method: ['GET', 'HEAD'],
    url: SUPABASE_REST_PREFIX,
    handler: async (req, reply) => {
      const schema = profileOf(deps, req, reply, true);
      const principal = await deps.callers.callerOf(req);
      const doc = await swaggerDocument(deps, principal, schema);
      return reply.type('application/openapi+json; charset=utf-8').send(JSON.stringify(doc));
    },
  });
}

/** Fastify's own errors (body too large, another content type) as the PostgREST errors of the same cases. */
function frameworkError(err: unknown): unknown {
  const code = (err as { code?: unknown })?.code;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return pgrst(413, 'PGRST413', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return pgrst(415, 'PGRST107', 'Send the body as application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return pgrst(400, 'PGRST102', 'Empty or invalid json');
  }
  return err;
}

/** A POST body PostgREST hands whole to a function's one unnamed argument: text, xml or bytes (as `\x…` hex). */
function rawBody(req: FastifyRequest): RpcRequest['body'] | undefined {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  const b = req.body;
  if (type === 'application/octet-stream') return { media: 'bytea', text: `\\x${Buffer.isBuffer(b) ? b.toString('hex') : ''}` };
  if (type === 'text/plain') return { media: 'text', text: typeof b === 'string' ? b : '' };
  if (type === 'text/xml') return { media: 'xml', text: typeof b === 'string' ? b : '' };
  return undefined;
}

/**
 * The request's schema from `Accept-Profile` (reads) or `Content-Profile` (writes), checked
 * against the exposed ones; a named profile is echoed in `Content-Profile`, as PostgREST does.
 */
function profileOf(deps: SupabaseRestDeps, req: FastifyRequest, reply: FastifyReply, read: boolean): string {
  const header = read ? req.headers['accept-profile'] : req.headers['content-profile'];
  const schema = checkProfile(header, deps.schemas ?? ['public']);
  if (header !== undefined) reply.header('content-profile', schema);
  return schema;
}

function setContext(req: FastifyRequest, ctx: Parameters<typeof toPostgrestError>[1]) {
  (req as FastifyRequest & { pgrstContext?: typeof ctx }).pgrstContext = ctx;
}

function bodyKeys(body: unknown): Set<string> {
  const rows = Array.isArray(body) ? body : [body];
  const keys = new Set<string>();
  for (const r of rows) if (r && typeof r === 'object') for (const k of Object.keys(r)) keys.add(k);
  return keys;
}

async function handleTable(engine: RestEngine, deps: SupabaseRestDeps, req: FastifyRequest, reply: FastifyReply) {
  const method = req.method;
  const name = segment(req.url, SUPABASE_REST_PREFIX);
  const read = method === 'GET' || method === 'HEAD';
  const schema = profileOf(deps, req, reply, read);
  const principal = await deps.callers.callerOf(req);
  req.principal = principal;
  setContext(req, { principal, table: name, schema, bodyKeys: read ? undefined : bodyKeys(req.body) });
  const accept = acceptOf(req.headers.accept);
  const prefs = parsePostgrestPrefer(req.headers.prefer);
  const { ast } = parsePostgrestQuery(queryOf(req.url), { maxRows: deps.maxRows });
  const prefer: Preferences = {
    count: prefs.count !== null,
    minimal: !prefs.representation,
    ...(prefs.resolution ? { resolution: prefs.resolution } : {}),
  };
  let action: 'read' | 'create' | 'update' | 'delete';
  let body = req.body;
  // text/plain, text/xml and bytes are bodies for functions only.
  if (!read && (typeof body === 'string' || Buffer.isBuffer(body))) {
    throw pgrst(415, 'PGRST107', `Content-Type not acceptable: ${String(req.headers['content-type'] ?? '').split(';')[0]}`);
  }
  if (read) {
    action = 'read';
    const range = rangeOf(req.headers.range);
    if (range && ast.limit === null && ast.offset === null) {
      ast.offset = range.offset;
      if (range.limit !== null) ast.limit = Math.min(range.limit, deps.maxRows);
    }
    // PostgREST has no default page: every row, up to db-max-rows (MAX_ROWS here).
    if (ast.limit === null) ast.limit = deps.maxRows;
  } else if (method === 'POST') {
    action = 'create';
    if (prefs.missingDefault) prefer.missingDefault = true;
  } else if (method === 'PATCH') {
    action = 'update';
  } else if (method === 'DELETE') {
    action = 'delete';
  } else {
    // PUT: an upsert of the one row its primary-key filters name (PostgREST's rule).
    action = 'create';
    body = putBody(deps, schema, name, ast, req.body);
    prefer.resolution = 'merge';
  }
  if (action === 'read' || action === 'update' || action === 'delete') {
    // PostgREST's limit/order on a write would need a key to page by; Plinth refuses them (rest/).
  }
  const { plan, outcome } = await engine.run(
    { action, table: name, schema, pk: null, query: ast, prefer, body },
    principal,
    runOptions(prefs),
  );
  // count=planned: the planner's estimate; count=estimated: the exact count up to db-max-rows,
  // the estimate beyond (PostgREST's rules). Both are counted exactly first, for that threshold.
  if (plan.kind === 'read' && outcome.total !== null) {
    const planned = prefs.count === 'planned' || (prefs.count === 'estimated' && outcome.total > deps.maxRows);
    if (planned) outcome.total = (await engine.estimate(plan, principal)) ?? outcome.total;
  }
  return send(reply, req, plan, outcome, { accept, prefs, method, offset: ast.offset ?? 0 });
}

/** PUT's body and filters: one object whose primary key the `eq` filters give, all of them. */
function putBody(
  deps: SupabaseRestDeps,
  schema: string,
  name: string,
  ast: ReturnType<typeof parsePostgrestQuery>['ast'],
  body: unknown,
): unknown {
  const table = deps.schema.get(schema)?.tables.get(name);
  const row = Array.isArray(body) && body.length === 1 ? body[0] : body;
  const filters = ast.filters;
  const pk = table?.pk ?? [];
  const byColumn = new Map<string, string>();
  for (const f of filters) if (!('items' in f) && f.op === 'eq' && !f.negate) byColumn.set(f.column, f.value);
  const ok =
    table !== undefined &&
    pk.length > 0 &&
    filters.length === pk.length &&
    pk.every((c) => byColumn.has(c)) &&
    row !== null &&
    typeof row === 'object' &&
    !Array.isArray(row);
  if (!ok) throw pgrst(405, 'PGRST105', "Filters must include all and only primary key columns with 'eq' operators");
  const r = row as Record<string, unknown>;
  for (const c of pk) {
    if (r[c] === undefined || String(r[c]) !== byColumn.get(c)) {
      throw pgrst(400, 'PGRST115', 'Payload values do not match URL in primary key column(s)');
    }
  }
  ast.filters = [];
  ast.onConflict = pk;
  return r;
}

/** `tx=rollback` and `max-affected` as the engine's options. */
function runOptions(prefs: PostgrestPrefs): RunOptions {
  const limit = prefs.maxAffected;
  return {
    rollback: prefs.rollback,
    ...(limit === null
      ? {}
      : {
          maxAffected: {
            limit,
            tooMany: (rows: number) =>
              pgrst(400, 'PGRST124', 'Query result exceeds max-affected preference constraint', `The query affects ${rows} rows`),
          },
        }),
  };
}

interface SendOptions {
  accept: Representation;
  prefs: PostgrestPrefs;
  method: string;
  offset: number;
}

/** The answer in PostgREST's form. */
function send(reply: FastifyReply, req: FastifyRequest, plan: Plan, outcome: Outcome, o: SendOptions) {
  const list = plan.kind === 'read' || (plan.kind === 'rpc' && !plan.single);
  const write = plan.kind === 'insert' || plan.kind === 'update' || plan.kind === 'delete';
  if (o.prefs.applied.length > 0) reply.header('preference-applied', o.prefs.applied.join(', '));
  let body = outcome.body;
  if (list) {
    reply.header('content-range', contentRange(o.offset, outcome.rows, outcome.total));
  } else if (plan.kind === 'rpc' && o.prefs.count !== null) {
    // One value or row: PostgREST counts it as one.
    reply.header('content-range', '0-0/1');
  } else if (write) {
    const total = o.prefs.count !== null ? String(outcome.rows) : '*';
    reply.header('content-range', outcome.rows === 0 ? `*/${total}` : `0-${outcome.rows - 1}/${total}`);
  }
  // Writes with return=representation and sets: a JSON array from rest/ (an insert of one object is an object there).
  if (plan.kind === 'insert' && plan.single && body !== null && !body.startsWith('[')) body = `[${body}]`;
  // An upsert that ignored its one row: PostgREST's empty array.
  if (plan.kind === 'insert' && body === null && o.prefs.representation) body = '[]';
  if (o.accept === 'object' && body !== null && (list || write)) {
    if (outcome.rows !== 1) {
      // PostgREST 12's words (postgrest-js's maybeSingle() writes its own for writes).
      throw pgrst(406, 'PGRST116', 'Cannot coerce the result to a single JSON object', `The result contains ${outcome.rows} rows`);
    }
    body = body.slice(1, -1);
  }
  // A list of fewer rows than its known total is partial content (PostgREST's rule).
  let status = list && outcome.total !== null && outcome.rows < outcome.total ? 206 : 200;
  // A merge that inserted nothing (every row was there, and updated) is 200, as in PostgREST.
  if (plan.kind === 'insert') status = o.method === 'PUT' || (plan.conflict?.action === 'merge' && outcome.total === 0) ? 200 : 201;
  if (write && (body === null || !o.prefs.representation)) {
    body = null;
    if (o.method !== 'POST') status = 204;
  }
  if (plan.kind === 'rpc' && plan.fn.returns.kind === 'void') {
    body = null;
    status = 204;
  }
  reply.code(status);
  if (req.method === 'HEAD' || body === null) return reply.send();
  if (o.accept === 'csv') return reply.type('text/csv; charset=utf-8').send(toCsv(body));
  if (stripsNulls(req.headers.accept)) body = stripNulls(body);
  return reply.type(o.accept === 'object' ? 'application/vnd.pgrst.object+json; charset=utf-8' : JSON_TYPE).send(body);
}

async function handleRpc(engine: RestEngine, deps: SupabaseRestDeps, req: FastifyRequest, reply: FastifyReply) {
  const name = segment(req.url, RPC_PREFIX);
  const read = req.method === 'GET' || req.method === 'HEAD';
  if (!read && req.method !== 'POST') throw pgrst(405, 'PGRST101', 'Only GET, HEAD and POST are allowed on functions');
  const schema = profileOf(deps, req, reply, read);
  const principal: Principal = await deps.callers.callerOf(req);
  req.principal = principal;
  setContext(req, { principal, schema });
  const snapshot = () => deps.schema.get(schema) ?? deps.schema.get();
  const accept = acceptOf(req.headers.accept);
  const prefs = parsePostgrestPrefer(req.headers.prefer);
  let overloads = snapshot().functions.get(name) ?? [];
  if (overloads.length === 0) {
    await deps.schema.reload();
    overloads = snapshot().functions.get(name) ?? [];
  }
  const argNames = new Set(overloads.flatMap((f) => f.args.map((a) => a.name).filter((n) => n !== '')));
  let parsed: ReturnType<typeof parsePostgrestQuery>;
  try {
    parsed = parsePostgrestQuery(queryOf(req.url), { maxRows: deps.maxRows, argNames: read ? argNames : new Set() });
  } catch (err) {
    // A GET argument no overload has: PostgREST's PGRST202 for the function with that argument.
    if (!(err instanceof ApiError) || err.code !== 'function_not_found') throw err;
    const argument = String((err.details as { argument?: unknown } | undefined)?.argument ?? '');
    const notFound = new ApiError('function_not_found', err.message, { function: name, arguments: [argument] });
    throw await rpcError(notFound, { db: deps.db, schema: snapshot(), principal, post: false, media: 'json' });
  }
  const { ast, args: queryArgs } = parsed;
  let args: Record<string, unknown>;
  let body: RpcRequest['body'];
  if (read) {
    args = queryArgs;
  } else {
    const raw = rawBody(req);
    if (raw) {
      // text/plain, text/xml, application/octet-stream: only for a function whose one argument has no name.
      args = {};
      body = raw;
    } else {
      const json = req.body;
      body = { media: 'json', text: json === undefined || json === null || json === '' ? '{}' : JSON.stringify(json) };
      const single = overloads.find(
        (f) => f.args.length === 1 && f.args[0].name !== '' && (f.args[0].udt === 'json' || f.args[0].udt === 'jsonb'),
      );
      const unnamedJson = overloads.some(
        (f) => f.args.length === 1 && f.args[0].name === '' && (f.args[0].udt === 'json' || f.args[0].udt === 'jsonb'),
      );
      if (prefs.singleObject && single) args = { [single.args[0].name]: json ?? {} };
      else if (json === undefined || json === null || json === '') args = {};
      else if (typeof json === 'object' && !Array.isArray(json)) args = json as Record<string, unknown>;
      else if (unnamedJson) args = {};
      else throw pgrst(400, 'PGRST102', 'The body of a function call must be a JSON object of argument names to values');
    }
  }
  const sets = overloads.length > 0 && overloads.every((f) => f.returns.kind !== 'void' && f.returns.set);
  if (sets) {
    const range = rangeOf(req.headers.range);
    if (range && ast.limit === null && ast.offset === null) {
      ast.offset = range.offset;
      if (range.limit !== null) ast.limit = Math.min(range.limit, deps.maxRows);
    }
    if (ast.limit === null) ast.limit = deps.maxRows;
  }
  const request = {
    function: name,
    schema,
    method: read ? ('GET' as const) : ('POST' as const),
    query: ast,
    prefer: { count: prefs.count !== null, minimal: false },
    args,
    ...(body ? { body } : {}),
    overloads: 'postgrest' as const,
  };
  const { plan, outcome } = await engine.call(request, principal, runOptions(prefs)).catch(async (err) => {
    throw await rpcError(err, { db: deps.db, schema: snapshot(), principal, post: !read, media: body?.media ?? 'json' });
  });
  if (accept === 'object' && plan.kind === 'rpc' && plan.single && plan.fn.returns.kind !== 'void') {
    // One value or row already: as it is.
    reply.code(200);
    if (req.method === 'HEAD') return reply.send();
    return reply.type(JSON_TYPE).send(outcome.body);
  }
  return send(reply, req, plan, outcome, { accept, prefs, method: req.method, offset: ast.offset ?? 0 });
}

export { PostgrestError };
