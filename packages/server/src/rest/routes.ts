import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/index.js';
import { ApiError, type App, type CallerGuards } from '../http/index.js';
import { execute } from './execute.js';
import { type Plan, type RestRequest, planRequest } from './plan/index.js';
import { parsePrefer, parseQuery } from './request/index.js';
import { StageTimer, respond } from './response/index.js';
import type { SchemaCache } from './schema-cache/index.js';
import { toSql } from './sql/index.js';

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

export const REST_PREFIX = '/api/v1/db/';

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

  /** A table or column the cache does not know may be brand new: reload (at most once a second) and retry. */
  const plan = async (request: RestRequest): Promise<Plan> => {
    try {
      return planRequest(request, deps.schema.get(), options);
    } catch (err) {
      const stale = Date.now() - deps.schema.get().loadedAt > 1000;
      if (!stale || !(err instanceof ApiError) || (err.code !== 'table_not_found' && err.code !== 'column_not_found')) throw err;
      await deps.schema.reload();
      return planRequest(request, deps.schema.get(), options);
    }
  };

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const timer = new StageTimer();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const params = pathParams(req.url);
    if (params === null) throw new ApiError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}.`);
    const action = actions.get(`${method} ${params.pk === null ? 'collection' : 'item'}`);
    if (action === undefined) {
      throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${params.pk === null ? '/{table}' : '/{table}/{pk}'}.`);
    }
    const principal = await deps.callers.callerOf(req);
    req.principal = principal;
    timer.lap('auth');
    const q = req.url.indexOf('?');
    const query = parseQuery(q === -1 ? '' : req.url.slice(q + 1), options);
    const prefer = parsePrefer(req.headers.prefer);
    timer.lap('parse');
    const planned = await plan({ action, table: params.table, pk: params.pk, query, prefer, body: req.body });
    timer.lap('plan');
    const stmt = toSql(planned);
    timer.lap('sql');
    const outcome = await execute(deps.db, principal, planned, stmt);
    timer.lap('execute');
    return respond(reply, planned, outcome, timer);
  };

  const url = `${REST_PREFIX}*`;
  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'], url, handler: handle });
}
