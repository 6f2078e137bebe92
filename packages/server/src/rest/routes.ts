import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/index.js';
import { ApiError, type App, type CallerGuards } from '../http/index.js';
import { createRestEngine } from './engine.js';
import type { RestRequest, RpcRequest } from './plan/index.js';
import { parsePrefer, parseQuery } from './request/index.js';
import { StageTimer, respond } from './response/index.js';
import type { SchemaCache } from './schema-cache/index.js';

type Action = RestRequest['action'];

/** The REST route table (docs/api.md §2). The one place that says which method does what. */
export const REST_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; action: Action }> = [
  { method: 'GET', path: '/api/v1/db/{table}', action: 'read' },
  { method: 'GET', path: '/api/v1/db/{table}/{pk}', action: 'read' },
  { method: 'POST', path: '/api/v1/db/{table}', action: 'create' },
  { method: 'PATCH', path: '/api/v1/db/{table}', action: 'update' },
  { method: 'PATCH', path: '/api/v1/db/{table}/{pk}', action: 'update' },
  { method: 'DELETE', path: '/api/v1/db/{table}', action: 'delete' },
  { method: 'DELETE', path: '/api/v1/db/{table}/{pk}', action: 'delete' },
];

/** The audit log's name of a row change made with the console's cookie (docs/security.md, "The audit log"). */
const WRITE_AUDIT = [
  ['POST', 'db.insert'],
  ['PATCH', 'db.update'],
  ['DELETE', 'db.delete'],
] as const;

export const REST_PREFIX = '/api/v1/db/';
export const RPC_PREFIX = '/api/v1/rpc/';

/** The RPC routes (docs/api.md): GET for stable and immutable functions, POST for any. */
export const RPC_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; path: string }> = [
  { method: 'GET', path: '/api/v1/rpc/{function}' },
  { method: 'POST', path: '/api/v1/rpc/{function}' },
];

export interface RestDeps {
  db: Db;
  schema: SchemaCache;
  /** Who is calling (http/guards.ts). */
  callers: CallerGuards;
  /** Largest `limit` (MAX_ROWS); larger values are clamped. */
  maxRows: number;
}

/**
 * `{table}` and `{pk}` from the raw path. Read here rather than by the router so that any
 * name PostgreSQL allows, `/` and long keys included, can be addressed percent-encoded.
 */
function pathParams(url: string): { table: string; pk: string | null } | null {
  const q = url.indexOf('?');
  const rest = url.slice(REST_PREFIX.length, q === -1 ? url.length : q);
  const slash = rest.indexOf('/');
  const rawTable = slash === -1 ? rest : rest.slice(0, slash);
  const rawPk = slash === -1 ? null : rest.slice(slash + 1);
  if (rawTable === '' || rawPk === '' || rawPk?.includes('/')) return null;
  try {
    return { table: decodeURIComponent(rawTable), pk: rawPk === null ? null : decodeURIComponent(rawPk) };
  } catch {
    throw new ApiError('invalid_request', 'The path is not valid percent-encoding.');
  }
}

/**
 * Mounts `/api/v1/db/{table}` (docs/api.md §2): one wildcard per method, dispatched by the
 * route table above; each request goes parse → plan → sql → execute → response.
 * @example registerRestRoutes(app, { db, schema, callers, maxRows: 1000 })
 */
export function registerRestRoutes(app: App, deps: RestDeps): void {
  const actions = new Map<string, Action>();
  for (const r of REST_ROUTES) actions.set(`${r.method} ${r.path.endsWith('{pk}') ? 'item' : 'collection'}`, r.action);
  const options = { maxRows: deps.maxRows };
  const engine = createRestEngine({ db: deps.db, schema: deps.schema, maxRows: deps.maxRows });

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const timer = new StageTimer();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const params = pathParams(req.url);
    if (params === null) throw new ApiError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}.`);
    const action = actions.get(`${method} ${params.pk === null ? 'collection' : 'item'}`);
    if (action === undefined) {
      throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${params.pk === null ? '/{table}' : '/{table}/{pk}'}.`);
    }
    // The console's table browser comes with its admin cookie and no key (an admin whose role has
    // no secret key browses rows too): as the secret key, under the cookie's rule, a viewer reads only.
    const principal = await deps.callers.appOrConsole(req);
    req.principal = principal;
    timer.lap('auth');
    const q = req.url.indexOf('?');
    const query = parseQuery(q === -1 ? '' : req.url.slice(q + 1), options);
    const prefer = parsePrefer(req.headers.prefer);
    timer.lap('parse');
    const request = { action, table: params.table, pk: params.pk, query, prefer, body: req.body };
    const { plan, outcome } = await engine.run(request, principal, { timer });
    return respond(reply, plan, outcome, timer);
  };

  const url = `${REST_PREFIX}*`;
  app.route({ method: ['GET', 'PUT'], url, handler: handle });
  // Row changes made with the console's cookie (the table browser) go to the audit log with the
  // table and the filter, never the rows' values; a key's or a user's writes do not (storage's
  // rule). The log's hook is admin's, and it is mounted on routes that name an action.
  for (const [method, action] of WRITE_AUDIT) {
    app.route({ method, url, handler: handle, config: { audit: action, auditConsoleOnly: true } });
  }

  const rpc = async (req: FastifyRequest, reply: FastifyReply) => {
    const timer = new StageTimer();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const name = rpcName(req.url);
    if (method !== 'GET' && method !== 'POST') {
      throw new ApiError('method_not_allowed', `${req.method} is not allowed on /rpc/{function}: use POST (or GET for stable functions).`);
    }
    const principal = await deps.callers.callerOf(req);
    req.principal = principal;
    timer.lap('auth');
    const q = req.url.indexOf('?');
    const query = parseQuery(q === -1 ? '' : req.url.slice(q + 1), { ...options, args: method === 'GET' });
    const prefer = parsePrefer(req.headers.prefer);
    timer.lap('parse');
    const request: RpcRequest = {
      function: name,
      method,
      query,
      prefer,
      args: method === 'GET' ? Object.fromEntries(query.args ?? []) : rpcBody(req.body),
    };
    const { plan, outcome } = await engine.call(request, principal, { timer });
    return respond(reply, plan, outcome, timer);
  };
  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'], url: `${RPC_PREFIX}*`, handler: rpc });
}

/** `{function}` from the raw path, percent-decoded. */
function rpcName(url: string): string {
  const q = url.indexOf('?');
  const raw = url.slice(RPC_PREFIX.length, q === -1 ? url.length : q);
  if (raw === '' || raw.includes('/')) throw new ApiError('route_not_found', `No route ${url.split('?')[0]}.`);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError('invalid_request', 'The path is not valid percent-encoding.');
  }
}

/** A POST's arguments: a JSON object of names to values (no body: no arguments). */
function rpcBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('invalid_request', 'The body of an RPC call must be a JSON object of argument names to values.');
  }
  return body as Record<string, unknown>;
}
