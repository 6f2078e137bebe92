import type { AuditEntry } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { ApiError, type App } from '../http/index.js';
import { type Clock, iso, isoSql } from '../lib/index.js';

export const AuditParams = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$' })),
});

/** Query text kept per SQL runner entry: enough to know what ran, not a copy of a dump. */
const MAX_QUERY = 4000;

type Body = Record<string, unknown> | null;

/** What each action keeps besides who and when: field names, never secret values. */
const DETAILS: Record<string, (req: FastifyRequest, body: Body, answer: Body) => Record<string, unknown>> = {
  'sql.run': (_req, body) => ({ query: String(body?.query ?? '').slice(0, MAX_QUERY) }),
  'sql.saved.create': (_req, _body, answer) => ({ name: answer?.name }),
  'sql.saved.update': (_req, body, answer) => ({ fields: Object.keys(body ?? {}), name: answer?.name }),
  'settings.auth.update': (_req, body) => ({ fields: Object.keys(body ?? {}) }),
  'project.update': (_req, body) => ({ fields: Object.keys(body ?? {}) }),
  'user.create': (_req, body) => ({ fields: Object.keys(body ?? {}) }),
  'user.update': (_req, body) => ({ fields: Object.keys(body ?? {}) }),
  'admin.invite': (_req, _body, answer) => ({ email: answer?.email, role: answer?.role }),
  'admin.role': (_req, body) => ({ role: body?.role }),
  'admin.create': (_req, body) => ({ email: body?.email }),
  'admin.password': (_req, body) => ({ email: body?.email }),
  'backup.create': (_req, _body, answer) => ({ name: answer?.name }),
  'email.test': (_req, body) => ({ to: body?.to }),
  'signing_keys.rotate': (_req, _body, answer) => ({ kid: answer?.kid, revoke: answer?.revoked === true }),
  // The console's row changes through /api/v1/db: the table and the filter, never the rows' values.
  'db.insert': rowChange,
  'db.update': rowChange,
  'db.delete': rowChange,
};

/** Query text kept per row change: the filter (and `on_conflict`, `columns`…), not a dump. */
const MAX_FILTER = 1000;

/** `/api/v1/db/{table}[/{pk}]?…`: the table, the key when the path names one, and the query string. */
function rowTarget(req: FastifyRequest): { table: string; pk?: string; filter: string } {
  const url = req.url;
  const q = url.indexOf('?');
  const path = url.slice(0, q === -1 ? url.length : q).replace(/^\/api\/v1\/db\//, '');
  const [table, pk] = path.split('/', 2).map(decoded);
  return { table, ...(pk === undefined ? {} : { pk }), filter: decoded(q === -1 ? '' : url.slice(q + 1)).slice(0, MAX_FILTER) };
}

function rowChange(req: FastifyRequest): Record<string, unknown> {
  const prefer = String(req.headers.prefer ?? '');
  return { ...rowTarget(req), ...(/resolution=/.test(prefer) ? { upsert: true } : {}) };
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The thing acted on: an id or name from the path, or the id of what was made (or of the admin signed in). */
function targetOf(req: FastifyRequest, answer: Body): string | null {
  const p = (req.params ?? {}) as Record<string, string | undefined>;
  if (req.routeOptions.config?.audit?.startsWith('db.')) return rowTarget(req).table;
  if (p.bucket !== undefined) return p['*'] !== undefined ? `${p.bucket}/${p['*']}` : p.bucket;
  const made = answer?.id ?? (answer?.admin as { id?: unknown } | undefined)?.id;
  return p.id ?? p.name ?? p.table ?? (typeof made === 'string' ? made : null);
}

function parsed(payload: unknown): Body {
  if (typeof payload !== 'string' || payload.length > 65_536 || !payload.startsWith('{')) return null;
  try {
    return JSON.parse(payload) as Body;
  } catch {
    return null;
  }
}

/**
 * Records every admin action (docs/security.md, "The audit log"): a route whose line says
 * `config: { audit: '<action>' }` is written to `plinth.admin_audit` once it has succeeded,
 * before its answer leaves (an `onSend` hook of that route), with the console admin who made
 * it, or null for the secret key. Sign-in, setup and accepting an invitation name the admin
 * they signed in. Mounted before the routes it records (storage's come later).
 * @example registerAudit(app, { db, clock, log }); app.post('/api/v1/sql', { onRequest: guards.sql, config: { audit: 'sql.run' } }, h)
 */
export function registerAudit(app: App, deps: { db: Db; clock: Clock; log: Logger }): void {
  const record = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const config = req.routeOptions.config;
    const action = config?.audit;
    if (!action || reply.statusCode >= 400) return payload;
    if (config.auditConsoleOnly && !req.admin) return payload;
    const answer = parsed(payload);
    const signedIn = (answer?.admin ?? null) as { id?: string; email?: string } | null;
    const who = req.admin ?? (signedIn?.id ? { id: signedIn.id, email: signedIn.email ?? null } : null);
    const body = req.body && typeof req.body === 'object' ? (req.body as Body) : null;
    const details = { ...(DETAILS[action]?.(req, body, answer) ?? {}), ip: req.ip, ...(who ? {} : { via: 'secret_key' }) };
    try {
      await deps.db.query(
        `insert into plinth.admin_audit (at, admin_id, admin_email, action, target, details) values ($1::timestamptz, $2, $3, $4, $5, $6::jsonb)`,
        [iso(deps.clock.now()), who?.id ?? null, who?.email ?? null, action, targetOf(req, answer), JSON.stringify(details)],
      );
    } catch (err) {
      // The action is done; its answer still goes. A missing entry is an operator's problem to see.
      deps.log.error({ err, action }, 'audit: the entry could not be written');
    }
    return payload;
  };
  // Only the routes that name an action carry the hook: every other request never runs it.
  app.addHook('onRoute', (route) => {
    if (!route.config?.audit) return;
    const own = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
    route.onSend = [...own, record] as typeof route.onSend;
  });
}

/**
 * `GET /api/v1/admin/audit?limit=&offset=`: newest first; `Content-Range` carries the total.
 * @example app.get('/api/v1/admin/audit', { onRequest: guards.team }, createAuditLog(db))
 */
export function createAuditLog(db: Db) {
  return async (req: FastifyRequest<{ Querystring: { limit?: string; offset?: string } }>, reply: FastifyReply) => {
    const limit = Math.min(Number(req.query.limit ?? 50), 1000);
    const offset = Number(req.query.offset ?? 0);
    if (limit < 1) throw new ApiError('invalid_parameter', 'limit must be 1 to 1000.');
    const [page, count] = await Promise.all([
      db.query<AuditEntry>(
        `select l.id::text as id, ${isoSql('l.at')} as at, l.admin_email, l.action, l.target, l.details from plinth.admin_audit l
         order by l.id desc limit $1 offset $2`,
        [limit, offset],
      ),
      db.query<{ n: number }>('select count(*)::int as n from plinth.admin_audit'),
    ]);
    const total = Number(count.rows[0].n);
    const { rows } = page;
    reply.header('content-range', rows.length ? `${offset}-${offset + rows.length - 1}/${total}` : `*/${total}`);
    return rows;
  };
}
