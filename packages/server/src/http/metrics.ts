/**
 * What `GET /metrics` reports (Prometheus text, prom-client): requests by route and status, their
 * latency, the requests of the last hour, rate-limit refusals, and the gauges other areas add (database pool, outbox queue).
 * Counted in one `onResponse` hook: a counter and a histogram observation per request, about a
 * microsecond each (bench: Node CPU per request with and without them is the same within noise).
 *
 * With `plinth start --workers N` each worker counts its own requests and the one answering a
 * scrape asks the others through the primary (prom-client's AggregatorRegistry), so a scrape
 * sees the whole server whichever worker it reaches.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface Metrics {
  registry: Registry;
  /** The `onResponse` hook that counts a request. */
  observe(request: FastifyRequest, reply: FastifyReply): void;
  /**
   * A gauge read at each scrape, e.g. the outbox's queue length.
   * @example metrics.gauge('plinth_outbox_queued', 'Messages waiting in the outbox', async () => outbox.queued())
   */
  gauge(name: string, help: string, read: () => Promise<number> | number): void;
  /**
   * A counter an area increments, e.g. realtime's deliveries.
   * @example const delivered = metrics.counter('plinth_realtime_delivered_total', 'Changes sent to subscribers'); delivered.inc(3);
   */
  counter(name: string, help: string): { inc(n?: number): void };
  /**
   * A histogram an area observes (seconds), e.g. realtime's delivery lag.
   * @example metrics.histogram('plinth_realtime_lag_seconds', 'Write to delivery').observe(0.004);
   */
  histogram(name: string, help: string, buckets?: number[]): { observe(value: number): void };
  /** The text of a scrape: this process's metrics, or the whole cluster's under --workers. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

// Seconds; REST reads take around a millisecond, sign-ins (argon2id) tens of milliseconds.
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One registry per app (no module-level state). `processMetrics` adds Node's own (CPU, memory,
 * event-loop lag, GC): only for a real server, since they cannot be removed again.
 * @example const metrics = createMetrics({ processMetrics: true });
 */
export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  // A worker answers the primary's gathering with this registry: prom-client keeps the list,
  // and starts listening for the primary's requests when an AggregatorRegistry is made.
  if (cluster.isWorker) {
    void new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  }
  const requests = new Counter({
    name: 'plinth_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'plinth_http_request_duration_seconds',
    help: 'Time from the request received to the answer sent, by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: BUCKETS,
    registers: [registry],
  });
  const limited = new Counter({
    name: 'plinth_rate_limited_total',
    help: 'Requests refused with 429 rate_limited, by route',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  // Requests of the last hour (the console's overview): a ring of 60 one-minute counts, the
  // current minute and the 59 before it; a slot is reset when its minute comes round again.
  const perMinute = new Float64Array(60);
  const minuteOf = new Float64Array(60).fill(-1);
  new Gauge({
    name: 'plinth_http_requests_last_hour',
    help: 'HTTP requests answered in the current minute and the 59 before it',
    registers: [registry],
    collect() {
      const now = Math.floor(Date.now() / 60_000);
      let n = 0;
      for (let i = 0; i < 60; i++) if (now - minuteOf[i] < 60) n += perMinute[i];
      this.set(n);
    },
  });
  return {
    registry,
    observe(request, reply) {
      const minute = Math.floor(Date.now() / 60_000);
      const slot = minute % 60;
      if (minuteOf[slot] !== minute) {
        minuteOf[slot] = minute;
        perMinute[slot] = 0;
      }
      perMinute[slot]++;
      // The route's pattern (`/api/v1/db/*`, `/api/v1/users/:id`), never the raw URL: table names,
      // ids and unknown paths would make a series per value.
      const route = request.routeOptions.url ?? 'unmatched';
      const status = reply.statusCode;
      requests.labels(request.method, route, String(status)).inc();
      duration.labels(request.method, route).observe(reply.elapsedTime / 1000);
      if (status === 429) limited.labels(route).inc();
    },
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(await read());
        },
      });
    },
    counter(name, help) {
      const c = new Counter({ name, help, registers: [registry] });
      return { inc: (n = 1) => c.inc(n) };
    },
    histogram(name, help, buckets = BUCKETS) {
      const h = new Histogram({ name, help, buckets, registers: [registry] });
      return { observe: (v) => h.observe(v) };
    },
    async scrape() {
      if (cluster.isWorker) {
        const body = await askPrimary();
        if (body !== null) return { contentType: registry.contentType, body };
      }
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/**
 * Under --workers: the primary gathers every worker's metrics (installPrimaryMetrics); null when
 * it does not answer within 3 s (then this worker's own are served).
 */
function askPrimary(): Promise<string | null> {
  return new Promise((resolve) => {
    const id = `${process.pid}-${Math.random().toString(36).slice(2)}`;
    const onMessage = (m: { type?: string; id?: string; body?: string }) => {
      if (m?.type !== 'plinth:metrics' || m.id !== id) return;
      done(m.body ?? null);
    };
    const done = (body: string | null) => {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve(body);
    };
    const timer = setTimeout(() => done(null), 3000);
    process.on('message', onMessage);
    process.send?.({ type: 'plinth:metrics?', id });
  });
}

/**
 * In the primary of --workers: answers a worker's `plinth:metrics?` with the metrics of all
 * workers (counters summed; gauges summed, e.g. connections in use across the pools).
 */
export function installPrimaryMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, m: { type?: string; id?: string }) => {
    if (m?.type !== 'plinth:metrics?') return;
    aggregator.clusterMetrics().then(
      (body) => worker.send({ type: 'plinth:metrics', id: m.id, body }),
      () => worker.send({ type: 'plinth:metrics', id: m.id, body: null }),
    );
  });
}
