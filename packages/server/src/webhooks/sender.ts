/**
 * The send queue: each webhook's deliveries go out one at a time, in id order (the change log's
 * order), by the instance holding the webhook's lease. The outbox's rules (src/messaging/outbox.ts),
 * at the level of a queue: a claim is `FOR UPDATE SKIP LOCKED` plus a lease
 * (OUTBOX_LEASE_SECONDS), so two instances never send a webhook's deliveries at once and the
 * queue of an instance that dies goes to another when its lease runs out; what it sent but had
 * not recorded is sent again (at least once). Per queue rather than per message because order
 * matters: the outbox's independent messages may go out side by side, a webhook's may not.
 *
 * A failing endpoint holds its own queue only: its head waits for its retry (WEBHOOK_RETRY_MIN
 * doubling up to WEBHOOK_RETRY_MAX), the deliveries behind it wait behind it, other webhooks go
 * on. A delivery still failing WEBHOOK_RETRY_WINDOW after its change is marked failed and the
 * queue moves on. A run sends up to 100 deliveries and records them in one statement.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '../config/index.js';
import type { Db } from '../db/index.js';
import { type Clock, iso, isoSql, openWorker, retryAfterMs } from '../lib/index.js';
import type { Attempt, Poster } from './post.js';
import { signatureHeader } from './signature.js';

/** Deliveries a run reads and sends before it records them. */
const RUN = 100;
/** Webhooks one instance sends to at once (each of them in order). */
const PARALLEL = 8;

interface Claimed {
  id: string;
  url: string;
  headers: Record<string, string>;
  secret: string;
  previous_secret: string | null;
}

interface Queued {
  id: string;
  body: string;
  attempts: number;
  created_at: string;
  due: boolean;
}

interface Outcome {
  id: string;
  status: 'sent' | 'queued' | 'failed';
  rs: number | null;
  resp: string;
  ms: number;
  next: string | null;
  sent: string | null;
}

export interface SenderStats {
  sent(n: number): void;
  retried(n: number): void;
  gaveUp(n: number): void;
  /** Seconds from a delivery's making (its change read from the log) to its 2xx. */
  lag(seconds: number): void;
}

export interface SenderOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  config: WebhooksConfig;
  poster: Poster;
  leaseMs: number;
  stats?: SenderStats;
  pollMs?: number;
}

/**
 * The wait before attempt `attempts + 1`: WEBHOOK_RETRY_MIN doubled per failed attempt, at most
 * WEBHOOK_RETRY_MAX (1 s, 2 s, 4 s … 1 h by default: about 55 attempts in 3 days).
 * @example retryDelayMs(3, { retryMinMs: 1000, retryMaxMs: 3_600_000 }) // 4000
 */
export function retryDelayMs(attempts: number, c: Pick<WebhooksConfig, 'retryMinMs' | 'retryMaxMs'>): number {
  return retryAfterMs(attempts, { min: c.retryMinMs, max: c.retryMaxMs });
}

export interface Sender {
  kick(): void;
  /** Sends whatever is due now, then resolves (tests). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts this instance's sender.
 * @example const sender = openSender({ db, clock, log, config: config.webhooks, poster, leaseMs: 120_000 });
 */
export function openSender(o: SenderOptions): Sender {
  const { db, clock, config } = o;
  let closed = false;
  let failing = false;

  async function claim(room: number): Promise<Array<Claimed & { token: string }>> {
    const now = clock.now();
    const token = randomUUID();
    const { rows } = await db.query<Claimed>(
      `update plinth.webhooks w set lease_until = $2::timestamptz, lease_token = $3::uuid
       where w.id in (
         select h.id from plinth.webhooks h
         where h.enabled and (h.lease_until is null or h.lease_until <= $1::timestamptz)
           and (select d.next_attempt_at from plinth.webhook_deliveries d
                where d.webhook_id = h.id and d.status = 'queued' order by d.id limit 1) <= $1::timestamptz
         limit $4 for update skip locked)
       returning w.id::text as id, w.url, w.headers, w.secret,
         case when w.previous_secret_until > $1::timestamptz then w.previous_secret end as previous_secret`,
      [iso(now), iso(now + o.leaseMs), token, room],
    );
    return rows.map((r) => ({ ...r, token }));
  }

  /** Sends a claimed webhook's due deliveries in order, until one fails, the run's time is up, or none is left. */
  async function sendQueue(w: Claimed & { token: string }): Promise<void> {
    const { headers } = w;
    const secrets = [w.secret, ...(w.previous_secret ? [w.previous_secret] : [])];
    // Well inside the lease: a run that outlived it could overlap with the next holder's.
    const deadline = clock.now() + Math.min(5_000, o.leaseMs / 4);
    try {
      for (;;) {
        const now = clock.now();
        const { rows } = await db.query<Queued>(
          `select d.id::text as id, d.body, d.attempts, ${isoSql('d.created_at')} as created_at, d.next_attempt_at <= $2::timestamptz as due
           from plinth.webhook_deliveries d where d.webhook_id = $1 and d.status = 'queued' order by d.id limit $3`,
          [w.id, iso(now), RUN],
        );
        if (rows.length === 0 || !rows[0].due) return;
        const outcomes: Outcome[] = [];
        let stop = false;
        for (const d of rows) {
          if (!d.due || closed) break;
          const t = Math.floor(clock.now() / 1000);
          const attempt = await o.poster.post(
            w.url,
            {
              ...headers,
              'content-type': 'application/json',
              'user-agent': 'Plinth-Webhooks/1',
              'plinth-signature': signatureHeader(secrets, t, d.body),
              'plinth-delivery': d.id,
            },
            d.body,
          );
          outcomes.push(outcome(d, attempt));
          if (!attempt.ok || clock.now() >= deadline) {
            stop = true;
            break;
          }
        }
        if (!(await record(w, outcomes))) return;
        if (stop || rows.length < RUN || closed) return;
      }
    } finally {
      await db
        .query('update plinth.webhooks set lease_until = null, lease_token = null where id = $1 and lease_token = $2::uuid', [
          w.id,
          w.token,
        ])
        .catch(() => undefined);
    }
  }

  function outcome(d: Queued, a: Attempt): Outcome {
    const now = clock.now();
    const attempts = d.attempts + 1;
    if (a.ok) {
      o.stats?.lag(Math.max(0, (now - Date.parse(d.created_at)) / 1000));
      return { id: d.id, status: 'sent', rs: a.status, resp: a.response, ms: a.durationMs, next: null, sent: iso(now) };
    }
    const giveUp = now - Date.parse(d.created_at) >= config.retryWindowMs;
    return {
      id: d.id,
      status: giveUp ? 'failed' : 'queued',
      rs: a.status,
      resp: a.response,
      ms: a.durationMs,
      next: giveUp ? null : iso(now + retryDelayMs(attempts, config)),
      sent: null,
    };
  }

  /** Records a run's attempts and renews the lease, in one statement; false when the lease was lost. */
  async function record(w: Claimed & { token: string }, outcomes: Outcome[]): Promise<boolean> {
    if (outcomes.length === 0) return true;
    const now = clock.now();
    const { rows } = await db.query<{ held: boolean }>(
      `with done as (
         update plinth.webhook_deliveries d set status = x.status, attempts = d.attempts + 1, response_status = x.rs,
           response = x.resp, duration_ms = x.ms, next_attempt_at = coalesce(x.next, d.next_attempt_at), sent_at = x.sent,
           updated_at = $2::timestamptz
         from jsonb_to_recordset($1::jsonb) as x(id int8, status text, rs int, resp text, ms int, next timestamptz, sent timestamptz)
         where d.id = x.id and d.status = 'queued'
         returning 1),
       lease as (
         update plinth.webhooks set lease_until = $3::timestamptz where id = $4 and lease_token = $5::uuid returning 1)
       select exists (select 1 from lease) as held, (select count(*) from done) as n`,
      [JSON.stringify(outcomes), iso(now), iso(now + o.leaseMs), w.id, w.token],
    );
    const sent = outcomes.filter((x) => x.status === 'sent').length;
    const failed = outcomes.filter((x) => x.status === 'failed').length;
    if (sent) o.stats?.sent(sent);
    if (outcomes.length - sent - failed) o.stats?.retried(outcomes.length - sent - failed);
    if (failed) {
      o.stats?.gaveUp(failed);
      o.log.warn(
        { webhook: w.id, deliveries: outcomes.filter((x) => x.status === 'failed').map((x) => x.id) },
        'webhooks: delivery given up',
      );
    }
    return Boolean(rows[0]?.held);
  }

  // Queues in flight on this instance: each runs on its own, so a slow endpoint (up to
  // WEBHOOK_TIMEOUT per attempt) never delays another webhook's deliveries.
  const inflight = new Set<Promise<void>>();

  /** Claims due queues while there is room, and starts each; true when it may claim more at once. */
  const pump = openWorker({
    pollMs: o.pollMs ?? 1000,
    async run() {
      const room = PARALLEL - inflight.size;
      if (room <= 0) return false;
      const claimed = await claim(room);
      failing = false;
      for (const w of claimed) {
        const p: Promise<void> = sendQueue(w)
          .catch((err) => {
            if (!failing) o.log.warn({ err, webhook: w.id }, 'webhooks: sending failed; retrying at the next poll');
            failing = true;
          })
          .finally(() => {
            inflight.delete(p);
            pump.kick();
          });
        inflight.add(p);
      }
      return claimed.length === room;
    },
    onError(err) {
      if (!failing) o.log.warn({ err }, 'webhooks: claiming deliveries failed; retrying at the next poll');
      failing = true;
    },
  });

  return {
    kick: () => pump.kick(),
    async drain() {
      await pump.drain();
      while (inflight.size > 0) {
        await Promise.all(inflight);
        await pump.drain();
      }
    },
    async close() {
      closed = true;
      await pump.close();
      while (inflight.size > 0) await Promise.all(inflight);
    },
  };
}
