import type { FastifyReply } from 'fastify';
import type { Db } from '../db/index.js';
import type { Metrics } from '../http/index.js';

/**
 * `GET /metrics` (docs/operations.md): the gauges read at scrape time (the database pool, the outbox's
 * queue) join the request counters, then the Prometheus text.
 * @example const scrape = createMetricsHandler(metrics, db); app.get('/metrics', { onRequest: manage }, scrape);
 */
export function createMetricsHandler(metrics: Metrics, db: Db) {
  if (db.stats) {
    const stats = db.stats;
    metrics.gauge('plinth_db_pool_size', 'Database connections this instance may open (both pools)', () => stats().poolSize);
    metrics.gauge(
      'plinth_db_queries_in_flight',
      'Database statements under way: running on a pooled connection or waiting for one',
      () => stats().inFlight,
    );
  }
  metrics.gauge('plinth_outbox_queued', 'Emails and SMS waiting in the outbox (queued, not yet sent or given up)', async () => {
    const { rows } = await db.query<{ n: number }>("select count(*)::int as n from plinth.outbox where status = 'queued'");
    return Number(rows[0]?.n ?? 0);
  });
  metrics.gauge('plinth_outbox_failed', 'Emails and SMS the outbox gave up on (status failed; the messages log lists them)', async () => {
    const { rows } = await db.query<{ n: number }>("select count(*)::int as n from plinth.outbox where status = 'failed'");
    return Number(rows[0]?.n ?? 0);
  });
  return async (_req: unknown, reply: FastifyReply) => {
    const { contentType, body } = await metrics.scrape();
    reply.type(contentType);
    return body;
  };
}
