/**
 * Realtime (docs/realtime.md). What this area adds:
 * - endpoints (route table: routes.ts): the WebSocket `GET /api/v1/realtime`,
 *   `POST /api/v1/realtime/broadcast` (a message to a channel's members, channels.ts) and
 *   `GET /api/v1/realtime/tables`, `PUT|DELETE /api/v1/realtime/tables/{table}` (secret key or
 *   a console admin, a viewer lists only; a switch is in the admin audit log);
 * - broadcast from SQL (migration 0153_realtime_send.sql, sql-broadcast.ts): realtime.send and
 *   realtime.broadcast_changes, delivered to the channel's members after commit;
 * - tables and functions (migration 0080_realtime.sql): the change log realtime.changes fed by a
 *   trigger on each enabled table, realtime.enable/disable, the numbering (realtime.sequence),
 *   retention (realtime.trim), the batched policy check (realtime.authorize), and
 *   realtime.captured / realtime.cursors for other consumers of the log (database webhooks);
 * - metrics: connections, subscriptions, changes captured and delivered, delivery lag;
 * - error codes: realtime_disabled, resume_gap, too_many_subscriptions, too_many_connections, rate_limited,
 *   table_not_found, column_not_found, permission_denied, invalid_parameter, invalid_value,
 *   invalid_json, invalid_request, invalid_token, token_expired, unauthorized, forbidden.
 * Depends on db, http and the schema cache; the principal arrives as for REST (app.ts hands in
 * the resolver that checks keys, tokens and their session).
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { RealtimeConfig } from '../config/index.js';
import { type Db, ddlMode, POLL_MS } from '../db/index.js';
import { ApiError, type App, type Metrics, type PrincipalResolver } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import type { SchemaCache } from '../rest/index.js';
import { createAuthorizer } from './authorize.js';
import { batchedRights, cachedRights } from './channel-rights.js';
import { type Bus, noBus, postgresBus, redisBus } from './bus.js';
import { Channels } from './channels.js';
import { Connection } from './connection.js';
import { Hub } from './hub.js';
import { openSqlBroadcasts } from './sql-broadcast.js';
import type { Session, SessionDeps } from './session.js';
import { type ChangeLog, openChangeLog } from '../changes/index.js';
import { loadAccess, type TableAccess } from './policies.js';
import { registerRealtimeRoutes } from './routes.js';
import { type RealtimeTables, realtimeTables } from './tables.js';

export { type Change, type ChangeLog, openChangeLog } from '../changes/index.js';
export { parseClientMessage, type ClientMessage } from './protocol.js';
export { splitRow, rowText } from '../changes/index.js';
export { REALTIME_PATH } from './routes.js';
export {
  BROADCAST_BURST,
  BROADCASTS_PER_SECOND,
  CLOSE_SESSION_ENDED,
  CLOSE_TOO_SLOW,
  Session,
  type SessionDeps,
  type SubscribeRequest,
} from './session.js';
export type { ChangeFormat, ChangeParts, Subscription } from './hub.js';
export type { ChannelMember, ChannelMessage, Channels, PresenceState, ServerBroadcast } from './channels.js';
export { type SharedFrame, textFrame, writeFrame } from './frames.js';

export interface RealtimeOptions {
  db: Db;
  schema: SchemaCache;
  config: RealtimeConfig;
  /** Keys and tokens to a principal, the session of a token checked (what REST's guards use). */
  resolvePrincipal: PrincipalResolver;
  /** Secret key or console admin whose role may change things (admin's `guards.manage`). */
  manage(req: FastifyRequest): Promise<void>;
  /** A browser's Origin may open a connection (the project's CORS setting). */
  isOriginAllowed(origin: string): boolean;
  clock: Clock;
  log: Logger;
  metrics?: Metrics;
  /** Tests: how often sessions are checked again (default 1 s). */
  sessionCheckMs?: number;
  /**
   * `REDIS_URL`: broadcast and presence cross instances through Redis pub/sub; without it,
   * PostgreSQL's NOTIFY (none on PGlite, a single process). bus.ts.
   */
  redisUrl?: string | null;
  /** What tells this project apart from others on the same Redis (its token issuer). */
  project?: string;
}

export interface Realtime {
  tables: RealtimeTables;
  log: ChangeLog;
  /** Open connections on this instance (every face's). */
  connections(): number;
  /**
   * For a face (supabase/realtime): what its Session subclass is made with, and the one count of
   * connections per client address (REALTIME_MAX_CONNECTIONS_PER_IP) over every face.
   */
  faces: RealtimeFaces;
  /** Broadcast and presence topics of this instance (channels.ts). */
  channels: Channels;
  close(): Promise<void>;
}

export interface RealtimeFaces {
  deps: SessionDeps;
  /** Refuses a connection past REALTIME_MAX_CONNECTIONS_PER_IP (429 too_many_connections). */
  admit(ip: string): void;
  /**
   * Counts a face's session: it is held to the area's housekeeping (session checks, tables
   * switched off, access changed), to the address's connection count and, given its socket, to
   * the heartbeat (REALTIME_HEARTBEAT_SECONDS; two missed pongs drop it) until the returned
   * function is called (its socket closed).
   * @example const detach = realtime.faces.attach(session, req.ip, socket); socket.on('close', () => { session.close(); detach(); });
   */
  attach(session: Session, ip: string, socket?: WebSocket): () => void;
}

/** The carrier between instances (bus.ts): Redis with REDIS_URL, else NOTIFY on PostgreSQL, none on PGlite. */
async function openBus(o: RealtimeOptions, db: Db, log: Logger): Promise<Bus> {
  if (o.redisUrl) {
    const project = createHash('sha256')
      .update(o.project ?? '')
      .digest('hex')
      .slice(0, 12);
    return redisBus(o.redisUrl, `plinth:${project}:realtime`, log, redisWhere(o.redisUrl));
  }
  if (db.kind === 'postgres') return postgresBus(db, log);
  return noBus();
}

/** Where REDIS_URL points, for log lines: host and port, never the password. */
function redisWhere(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 6379}`;
  } catch {
    return 'REDIS_URL';
  }
}

/** How often each connection's session is asked again (sign-out, revocation, ban end it within this). */
const SESSION_CHECK_MS = 1000;

/**
 * Starts reading the change log and mounts the realtime routes.
 * @example const realtime = await registerRealtime(app, { db, schema, config: config.realtime, resolvePrincipal, manage, isOriginAllowed, clock, log, metrics });
 */
export async function registerRealtime(app: App, o: RealtimeOptions): Promise<Realtime> {
  const { db, log: logger, config } = o;
  const m = o.metrics;
  const statements = m?.counter(
    'plinth_realtime_db_statements_total',
    'Database statements realtime sent (numbering, fetching, replay, policy checks)',
  );
  const delivered = m?.counter('plinth_realtime_delivered_total', 'Changes sent to subscribers');
  const captured = m?.counter('plinth_realtime_fetched_total', 'Changes read from the change log by this instance');
  const dropped = m?.counter('plinth_realtime_dropped_total', 'Clients dropped as too slow to take their changes');
  const lag = m?.histogram(
    'plinth_realtime_lag_seconds',
    'From the write of a row to its change sent to a subscriber',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const onError = (what: string) => {
    let last = 0;
    return (err: unknown) => {
      if (Date.now() - last > 60_000) logger.warn({ err }, `realtime: ${what} failed; retrying`);
      last = Date.now();
    };
  };

  // Access rules per table, read once per version of the schema cache (which the SQL runner
  // reloads before it answers, and a DDL notification or poll everywhere else).
  const accessCache = new Map<string, { version: number; rules: Promise<TableAccess | null> }>();
  const access = (table: string): Promise<TableAccess | null> => {
    const version = o.schema.get().version;
    const hit = accessCache.get(table);
    if (hit && hit.version === version) return hit.rules;
    const rules = loadAccess(db, table).catch((err) => {
      accessCache.delete(table);
      throw err;
    });
    accessCache.set(table, { version, rules });
    return rules;
  };

  let hub: Hub | null = null;
  const log = await openChangeLog({
    db,
    log: logger,
    retentionMs: config.retentionMs,
    onStatement: () => statements?.inc(),
    onChanges: async (batch) => {
      captured?.inc(batch.length);
      await hub?.dispatch(batch);
    },
    listening: () => (hub ? hub.count() > 0 : false),
    onUnread: (n) => captured?.inc(n),
  });
  const authorizer = createAuthorizer(db, () => statements?.inc());
  hub = new Hub({
    log,
    authorizer,
    access,
    metrics: { delivered: (n) => delivered?.inc(n), lag: (s) => lag?.observe(s) },
    onError: (err, what) => onError(what)(err),
  });
  // Plinth's own WebSockets (heartbeats are theirs), and every face's sessions with them
  // (housekeeping: tables switched off, access changed, sessions checked).
  const connections = new Set<Connection>();
  const sessions = new Set<Session>();
  const perIp = new Map<string, number>();
  const admitIp = (ip: string) => {
    if ((perIp.get(ip) ?? 0) >= config.maxConnectionsPerIp) {
      throw new ApiError('too_many_connections', `At most ${config.maxConnectionsPerIp} realtime connections per client address.`);
    }
  };
  const beats = new Map<Session, { socket: WebSocket; missed: number }>();
  const attach = (session: Session, ip: string, socket?: WebSocket) => {
    sessions.add(session);
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    if (socket) {
      const beat = { socket, missed: 0 };
      beats.set(session, beat);
      socket.on('pong', () => {
        beat.missed = 0;
      });
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      sessions.delete(session);
      beats.delete(session);
      const n = (perIp.get(ip) ?? 1) - 1;
      if (n <= 0) perIp.delete(ip);
      else perIp.set(ip, n);
    };
  };

  const tables = await realtimeTables(db, (enabled) => {
    for (const conn of sessions) {
      for (const sub of conn.subscriptions()) {
        if (!enabled.has(sub.table)) {
          conn.end(sub, new ApiError('realtime_disabled', `Changes of "${sub.table}" are no longer captured (realtime.disable).`));
        }
      }
    }
  });

  // Private channels' decisions, each tick's asked together, kept per (topic, role, claims) until a
  // policy changes (below).
  const rightsCache = cachedRights(batchedRights(db));
  // After a schema change: fresh access rules, and subscriptions whose role lost the table or a
  // filtered column end with permission_denied.
  const onSchemaChange = async () => {
    accessCache.clear();
    rightsCache.clear();
    for (const conn of sessions) {
      for (const sub of conn.subscriptions()) {
        const a = await access(sub.table).catch(() => undefined);
        if (a === undefined) continue;
        const cols = a?.roles[sub.principal.role].columns;
        if (!a || !cols || cols.size === 0 || sub.filter.columns.some((c) => !cols.has(c))) {
          conn.end(sub, new ApiError('permission_denied', `The access to "${sub.table}" changed: this subscription ended.`));
        }
      }
    }
    await tables.reload().catch(() => undefined);
  };
  const unlistenSchema = await db.listen('plinth_schema', () => void onSchemaChange().catch(() => undefined));
  // Without event triggers (hosted PostgreSQL) a policy change makes no NOTIFY: its catalog is
  // polled, as src/db/ddl-watch.ts polls the rest.
  let policyPoll: NodeJS.Timeout | null = null;
  if (db.kind === 'postgres' && (await ddlMode(db)) === 'poll') {
    // Rows and their xmins, and the catalog's own write counters: a policy made and dropped
    // between two polls leaves the rows as they were, but not the counters (flushed within about
    // a second), and a decision made in between must not outlive it (private channels' cache).
    const fingerprint = async () =>
      (
        await db.query<{ f: string }>(
          `select count(*) || ':' || coalesce(sum(xmin::text::int8), 0) || ':' ||
             (pg_stat_get_tuples_inserted('pg_policy'::regclass) + pg_stat_get_tuples_deleted('pg_policy'::regclass)
              + pg_stat_get_tuples_updated('pg_policy'::regclass)) as f from pg_policy`,
        )
      ).rows[0]?.f ?? '';
    let last = await fingerprint();
    policyPoll = setInterval(() => {
      fingerprint().then(
        (f) => {
          if (f !== last) {
            last = f;
            void onSchemaChange().catch(() => undefined);
          }
        },
        () => undefined,
      );
    }, POLL_MS);
    policyPoll.unref();
  }

  const bus = await openBus(o, db, logger);
  const channels = new Channels((who, topic) => rightsCache.rights(who, topic), { bus, heartbeatMs: config.heartbeatMs });
  // realtime.send and realtime.broadcast_changes (migration 0153): delivered after their commit.
  const sqlBroadcasts = await openSqlBroadcasts(db, channels, {
    pollMs: POLL_MS * 4,
    onError: onError('broadcast from SQL'),
    maxBytes: config.maxMessageBytes,
    onTooLarge: (topic, bytes) =>
      logger.warn(
        { topic: topic.slice(0, 200), bytes },
        `realtime: a message sent from SQL was larger than REALTIME_MAX_MESSAGE_SIZE (${config.maxMessageBytes} bytes) and was not sent; raise it or send less`,
      ),
  });
  const connectionDeps: SessionDeps = {
    db,
    hub,
    channels,
    log,
    schema: o.schema,
    resolve: o.resolvePrincipal,
    access,
    isEnabled: (t) => tables.isEnabled(t),
    clock: o.clock,
    logger,
    maxSubscriptions: config.maxSubscriptions,
    maxBufferedBytes: config.maxBufferedBytes,
    maxSubscriptionsPerIp: config.maxSubscriptionsPerIp,
    maxReplay: config.maxReplay,
    onDropped: () => dropped?.inc(),
  };

  // WebSocket pings for every face's sockets: a client that misses two is dropped, and its
  // channels' presence leaves with it (a socket gone without a close: a laptop asleep, a proxy).
  const heartbeat = setInterval(() => {
    for (const [session, beat] of beats) {
      if (beat.missed >= 2) {
        session.close();
        beat.socket.terminate();
        continue;
      }
      beat.missed++;
      beat.socket.ping();
    }
  }, config.heartbeatMs);
  heartbeat.unref();
  const sessionCheck = setInterval(() => {
    for (const conn of sessions) void conn.checkSession();
  }, o.sessionCheckMs ?? SESSION_CHECK_MS);
  sessionCheck.unref();

  const keyOf = (req: FastifyRequest): string | undefined => {
    const q = (req.query as Record<string, unknown> | undefined)?.apikey;
    if (typeof q === 'string') return q;
    const h = req.headers.apikey;
    return typeof h === 'string' ? h : undefined;
  };

  await registerRealtimeRoutes(app, {
    tables,
    async broadcast(req, body) {
      if (keyOf(req) === undefined) throw new ApiError('unauthorized', 'Send the apikey header (a public or the secret key).');
      const principal = await o.resolvePrincipal(keyOf(req), req.headers.authorization);
      return channels.send(principal, [body]);
    },
    manage: o.manage,
    maxMessageBytes: config.maxMessageBytes,
    async admit(req) {
      const origin = req.headers.origin;
      if (origin !== undefined && !o.isOriginAllowed(origin)) {
        throw new ApiError('forbidden', `The origin ${origin.slice(0, 200)} may not connect: add it to the cors_origins auth setting.`);
      }
      if (keyOf(req) === undefined) throw new ApiError('unauthorized', 'Connect with ?apikey=<public key> (or the apikey header).');
      req.principal = await o.resolvePrincipal(keyOf(req), req.headers.authorization);
      admitIp(req.ip);
    },
    accept(socket: WebSocket, req: FastifyRequest) {
      const ip = req.ip;
      const principal = req.principal ?? { role: 'anon' as const, claims: '{"role":"anon"}', uid: null };
      const bearer = /^bearer\s+(.+)$/i.exec(req.headers.authorization?.trim() ?? '')?.[1] ?? null;
      // Its session is checked like that of a token sent in an auth message.
      const conn = new Connection(socket, keyOf(req), principal, connectionDeps, bearer, ip);
      connections.add(conn);
      const detach = attach(conn, ip, socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        conn.close();
        connections.delete(conn);
        detach();
      });
    },
  });
  m?.gauge('plinth_realtime_connections', 'Open realtime WebSockets (every face)', () => sessions.size);
  m?.gauge('plinth_realtime_subscriptions', 'Realtime subscriptions', () => hub?.count() ?? 0);
  m?.gauge('plinth_realtime_bus_up', 'Broadcast and presence reach the other instances (0: the bus is down; 1 without one)', () =>
    bus.up() ? 1 : 0,
  );

  let closing: Promise<void> | null = null;
  return {
    tables,
    log,
    connections: () => sessions.size,
    faces: { deps: connectionDeps, admit: admitIp, attach },
    channels,
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        clearInterval(sessionCheck);
        if (policyPoll) clearInterval(policyPoll);
        for (const conn of sessions) conn.close(1001, 'server closing');
        await sqlBroadcasts.close().catch(() => undefined);
        await channels.close().catch(() => undefined);
        await unlistenSchema().catch(() => undefined);
        await tables.close().catch(() => undefined);
        await log.close();
      })();
      return closing;
    },
  };
}
