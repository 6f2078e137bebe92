/**
 * Database webhooks (docs/webhooks.md). What this area adds:
 * - endpoints (route table: routes.ts): `POST|GET /api/v1/webhooks`, `GET|PATCH|DELETE
 *   /api/v1/webhooks/{id}`, `POST …/{id}/secret/rotate`, `GET …/{id}/deliveries[/{delivery_id}]`,
 *   `POST …/{id}/deliveries/{delivery_id}/redeliver` (secret key or console admin);
 * - tables (migration 0120_webhooks.sql): plinth.webhooks, plinth.webhook_deliveries, and the
 *   `webhooks` consumer's cursor in realtime.cursors;
 * - work on every instance: the fan-out of the change log into deliveries (fanout.ts, one
 *   instance at a time) and the send queue (sender.ts, each webhook's queue held by one instance);
 * - config: WEBHOOK_ALLOW_PRIVATE, WEBHOOK_RETRY_MIN/MAX/WINDOW, WEBHOOK_TIMEOUT (config/webhooks.ts),
 *   and OUTBOX_LEASE_SECONDS for the queues' lease;
 * - metrics: plinth_webhook_sent_total, plinth_webhook_retried_total, plinth_webhook_failed_total,
 *   plinth_webhook_queued, plinth_webhook_lag_seconds;
 * - error codes: invalid_webhook, webhook_url_refused, webhook_not_found, webhook_delivery_not_found,
 *   conflict (redelivering a queued delivery), invalid_parameter (the log's query).
 * Depends on db, http, the schema cache and REST's filter grammar (rest), never on auth or admin:
 * the management guard arrives from app.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '../config/index.js';
import type { Db } from '../db/index.js';
import { ApiError, type App, type Metrics } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import type { SchemaCache } from '../rest/index.js';
import type { LookupFunction } from './address.js';
import { createDeliveryLog } from './deliveries.js';
import { openFanout } from './fanout.js';
import { createPoster, type Poster } from './post.js';
import { deliveryQuery, registerWebhookRoutes, type WebhookGuards } from './routes.js';
import { openSender } from './sender.js';
import { createWebhookStore } from './store.js';
import { checkFields, FUNCTION_TARGET } from './validate.js';

export { isBlockedAddress } from './address.js';
export { retryDelayMs } from './sender.js';
export { signatureHeader, verifySignature } from './signature.js';
export { MAX_BODY_BYTES } from './payload.js';

export interface WebhooksOptions {
  db: Db;
  schema: SchemaCache;
  config: WebhooksConfig;
  /** How long an instance holds a webhook's queue (OUTBOX_LEASE_SECONDS). */
  leaseMs: number;
  /** The management guards (admin's `guards.manage` for both, today). */
  guards: WebhookGuards;
  clock: Clock;
  log: Logger;
  metrics?: Metrics;
  /** Tests: the resolver under the address guard (default: the system's). */
  lookup?: LookupFunction;
  /** Tests: how often the fan-out and the sender look for work without a wake-up (1 s). */
  pollMs?: number;
  /**
   * The project's functions, for `function:<name>` targets (app.ts hands them over: this area
   * does not import functions). Absent: such a target is refused at save.
   */
  functions?: FunctionTargets;
}

/** What deliveries to functions need of the functions area. */
export interface FunctionTargets {
  exists(name: string): boolean;
  /** One call as the service with the delivery's exact body and headers: the answer's status and start, or the failure. */
  deliver(name: string, headers: Record<string, string>, body: string): Promise<{ status: number | null; response: string }>;
}

export interface Webhooks {
  /** Reads the change log and sends what is due now, then resolves (tests). */
  drain(): Promise<void>;
  /** Wakes the fan-out and the sender. */
  kick(): void;
  /**
   * plinth.json's `webhooks`, by name: each is created, or updated to what the file says, with the
   * API's own checks; the named ones are held (409 managed_by_config on a PATCH or DELETE) and a
   * name the file no longer has is freed, never deleted. Returns the names.
   */
  applyManaged(file: string, defs: Record<string, Record<string, unknown>>): Promise<string[]>;
  close(): Promise<void>;
}

type Id = { id: string };
type DeliveryId = { id: string; delivery_id: string };
const body = (req: FastifyRequest): Record<string, unknown> => {
  const b = req.body;
  if (b === undefined || b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b)) {
    throw new ApiError('invalid_webhook', 'The body must be a JSON object.', [{ field: 'body', message: 'must be a JSON object' }]);
  }
  return b as Record<string, unknown>;
};

/**
 * Starts the fan-out and the sender of this instance and mounts the routes.
 * @example const webhooks = await registerWebhooks(app, { db, schema, config: config.webhooks, leaseMs, guards: { read: manage, write: manage }, clock, log, metrics });
 */
export async function registerWebhooks(app: App, o: WebhooksOptions): Promise<Webhooks> {
  const { db, clock, log } = o;
  const m = o.metrics;
  const sentTotal = m?.counter('plinth_webhook_sent_total', 'Webhook deliveries answered 2xx');
  const retriedTotal = m?.counter('plinth_webhook_retried_total', 'Webhook attempts that failed and will be tried again');
  const failedTotal = m?.counter('plinth_webhook_failed_total', 'Webhook deliveries given up after WEBHOOK_RETRY_WINDOW');
  const lag = m?.histogram(
    'plinth_webhook_lag_seconds',
    "From a delivery's making (its change read from the log) to its 2xx",
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600],
  );
  m?.gauge('plinth_webhook_queued', 'Webhook deliveries waiting to be sent (all webhooks)', async () => {
    const { rows } = await db.query<{ n: number }>("select count(*)::int as n from plinth.webhook_deliveries where status = 'queued'");
    return Number(rows[0]?.n ?? 0);
  });

  const store = createWebhookStore(db, clock);
  const deliveries = createDeliveryLog(db, clock);
  const http = createPoster({ allowPrivate: o.config.allowPrivate, timeoutMs: o.config.timeoutMs, lookup: o.lookup });
  // `function:<name>` targets: the same queue, order, retries and log; the attempt is a call, not a POST.
  const poster: Poster = {
    async post(url, headers, body) {
      const fn = FUNCTION_TARGET.exec(url);
      if (!fn) return http.post(url, headers, body);
      const started = performance.now();
      const r = o.functions
        ? await o.functions.deliver(fn[1], headers, body).catch((err: Error) => ({ status: null, response: err.message }))
        : { status: null, response: 'this server has no functions' };
      const ok = r.status !== null && r.status >= 200 && r.status < 300;
      return { ok, status: r.status, response: r.response.slice(0, 1000), durationMs: Math.round(performance.now() - started) };
    },
    close: () => http.close(),
  };
  // The embedded database belongs to this one process (its data dir is locked): a lease left by a
  // process that died is no one's, and waiting for it to run out would only delay the restart.
  if (db.kind === 'pglite')
    await db.query('update plinth.webhooks set lease_until = null, lease_token = null where lease_until is not null');
  await store.reconcile().catch((err) => log.warn({ err }, 'webhooks: capture of the watched tables could not be checked'));

  const sender = openSender({
    db,
    clock,
    log,
    config: o.config,
    poster,
    leaseMs: o.leaseMs,
    pollMs: o.pollMs,
    stats: {
      sent: (n) => sentTotal?.inc(n),
      retried: (n) => retriedTotal?.inc(n),
      gaveUp: (n) => failedTotal?.inc(n),
      lag: (s) => lag?.observe(s),
    },
  });
  const fanout = await openFanout({ db, schema: o.schema, clock, log, pollMs: o.pollMs, onDeliveries: () => sender.kick() });
  const prune = setInterval(() => void deliveries.prune().catch(() => undefined), 600_000);
  prune.unref();

  const check = (input: Record<string, unknown>, base: Awaited<ReturnType<typeof store.fields>> | null) =>
    checkFields(
      {
        db,
        schema: o.schema,
        allowPrivate: o.config.allowPrivate,
        lookup: o.lookup,
        hasFunction: o.functions ? (n) => o.functions?.exists(n) ?? false : undefined,
      },
      input,
      base,
    );

  /** The webhooks plinth.json names (by name), and the file. */
  let managed: { file: string; names: Set<string> } | null = null;
  const refuseManaged = async (id: string) => {
    if (!managed) return;
    const w = await store.get(id);
    if (managed.names.has(w.name))
      throw new ApiError('managed_by_config', `The webhook ${w.name} is managed by ${managed.file}; change it there.`, [
        { field: 'name', message: `is managed by ${managed.file}` },
      ]);
  };

  registerWebhookRoutes(app, o.guards, {
    list: async () => store.list(),
    async create(req, reply) {
      const made = await store.create(await check(body(req), null));
      fanout.kick();
      reply.code(201);
      return made;
    },
    get: async (req) => store.get((req.params as Id).id),
    async update(req) {
      const { id } = req.params as Id;
      await refuseManaged(id);
      const updated = await store.update(id, await check(body(req), await store.fields(id)));
      fanout.kick();
      sender.kick();
      return updated;
    },
    async remove(req, reply) {
      await refuseManaged((req.params as Id).id);
      await store.remove((req.params as Id).id);
      reply.code(204);
      return reply.send();
    },
    async rotateSecret(req) {
      const b = body(req);
      const extra = Object.keys(b).filter((k) => k !== 'revoke');
      if (extra.length > 0 || (b.revoke !== undefined && typeof b.revoke !== 'boolean')) {
        throw new ApiError('invalid_request', 'The body takes only {"revoke": true|false}.', [
          { field: extra[0] ?? 'revoke', message: extra.length ? 'is not a field' : 'must be true or false' },
        ]);
      }
      return store.rotateSecret((req.params as Id).id, b.revoke === true);
    },
    async deliveries(req, reply: FastifyReply) {
      const q = deliveryQuery(req.query);
      const { rows, total } = await deliveries.list((req.params as Id).id, q);
      reply.header('content-range', rows.length ? `${q.offset}-${q.offset + rows.length - 1}/${total}` : `*/${total}`);
      return rows;
    },
    delivery: async (req) => deliveries.get((req.params as DeliveryId).id, (req.params as DeliveryId).delivery_id),
    async redeliver(req, reply) {
      const { id, delivery_id } = req.params as DeliveryId;
      const made = await deliveries.redeliver(id, delivery_id);
      sender.kick();
      reply.code(201);
      return made;
    },
  });

  let closing: Promise<void> | null = null;
  return {
    async drain() {
      fanout.kick();
      await fanout.drain();
      await sender.drain();
    },
    kick() {
      fanout.kick();
      sender.kick();
    },
    async applyManaged(file, defs) {
      const all = await store.list();
      for (const [name, def] of Object.entries(defs)) {
        const input = { ...def, name };
        // By name; of several with the name (made through the API), the oldest is the file's.
        const found = all.filter((w) => w.name === name).sort((a, b) => a.created_at.localeCompare(b.created_at))[0];
        try {
          if (found) await store.update(found.id, await check(input, await store.fields(found.id)));
          else await store.create(await check(input, null));
        } catch (err) {
          // The refusal names the webhook: `<name>.<field>`.
          if (err instanceof ApiError && Array.isArray(err.details))
            throw new ApiError(
              err.code,
              err.message,
              (err.details as Array<{ field: string; message: string }>).map((d) => ({ ...d, field: `${name}.${d.field}` })),
            );
          throw err;
        }
      }
      managed = Object.keys(defs).length ? { file, names: new Set(Object.keys(defs)) } : null;
      fanout.kick();
      sender.kick();
      return Object.keys(defs);
    },
    close() {
      closing ??= (async () => {
        clearInterval(prune);
        await fanout.close();
        await sender.close();
        poster.close();
      })();
      return closing;
    },
  };
}
