import type { Logger } from 'pino';
import type { Db, Queryable } from '../db/index.js';
import { type Clock, iso, openWorker, retryAfterMs } from '../lib/index.js';
import { type EmailTemplate, isEmailKind, renderEmail, renderSms } from './templates.js';
import type { EmailTransport, OutgoingMessage, Outbox, SmsTransport } from './types.js';

export interface OutboxOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** SMTP, or `'dev'`: messages are stored in the dev inbox and logged with their link. */
  email: EmailTransport | 'dev';
  /** An SMS provider, `'dev'` (dev inbox), or null when none is configured. */
  sms: SmsTransport | 'dev' | null;
  from: string;
  /** Read at send time: the project's name and its template overrides. */
  project: () => { name: string; templates: Partial<Record<string, Partial<EmailTemplate>>> };
  /** How often an idle worker looks for due messages (another instance may have queued them). */
  pollMs?: number;
  /** How long a claimed message is held before another worker may retry it (a crash). */
  leaseMs?: number;
  /** A message still failing this long after it was queued is given up. */
  giveUpMs?: number;
  batch?: number;
}

interface Claimed {
  id: string;
  channel: 'email' | 'sms';
  kind: string;
  recipient: string;
  payload: Record<string, string>;
  attempts: number;
  created_at: string;
}

export interface MessagingWorker extends Outbox {
  /** Sends every message due now, then resolves (tests, and a clean shutdown). */
  drain(): Promise<void>;
  /** Stops the worker after the batch in flight. */
  close(): Promise<void>;
}

/** 5 s, 10 s, 20 s, … up to 10 minutes between attempts. */
export function backoffMs(attempts: number): number {
  return retryAfterMs(attempts, { min: 5_000, max: 600_000 });
}

/**
 * The durable outbox: flows enqueue in their own transaction; this worker claims due messages
 * (`FOR UPDATE SKIP LOCKED` plus a lease, so instances never take the same message and a
 * crashed instance's claim runs out), sends them, and records the answer with backoff on
 * failure. Once a message is sent or given up its payload (link, code) is emptied.
 * @example const outbox = createOutbox({ db, clock, log, email: createSmtpTransport(url), sms: null, from, project }); outbox.kick();
 */
export function createOutbox(o: OutboxOptions): MessagingWorker {
  const pollMs = o.pollMs ?? 1_000;
  const leaseMs = o.leaseMs ?? 120_000;
  const giveUpMs = o.giveUpMs ?? 24 * 3600_000;
  const batch = o.batch ?? 20;
  let prunedAt = 0;

  async function claim(): Promise<Claimed[]> {
    const now = o.clock.now();
    const { rows } = await o.db.query<Claimed>(
      `update plinth.outbox o set lease_until = $2::timestamptz, attempts = o.attempts + 1, updated_at = $1::timestamptz
       where o.id in (
         select id from plinth.outbox
         where status = 'queued' and next_attempt_at <= $1::timestamptz and (lease_until is null or lease_until <= $1::timestamptz)
         order by id limit $3 for update skip locked)
       returning o.id::text as id, o.channel, o.kind, o.recipient, o.payload, o.attempts, o.created_at::text as created_at`,
      [iso(now), iso(now + leaseMs), batch],
    );
    return rows;
  }

  async function toDevInbox(m: Claimed, subject: string | null, text: string, html: string | null): Promise<string> {
    await o.db.query(
      `insert into plinth.dev_inbox (outbox_id, channel, kind, recipient, subject, text_body, html_body, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz)`,
      [m.id, m.channel, m.kind, m.recipient, subject, text, html, iso(o.clock.now())],
    );
    await o.db.query('delete from plinth.dev_inbox where id <= (select max(id) - 1000 from plinth.dev_inbox)');
    // Dev mode only (no SMTP / SMS provider configured): the link is the point of the log line.
    o.log.info({ channel: m.channel, kind: m.kind, to: m.recipient }, `dev inbox: ${m.payload.link ?? m.payload.code ?? subject ?? ''}`);
    return 'stored in the dev inbox';
  }

  async function deliver(m: Claimed): Promise<{ transport: string; response: string }> {
    const vars = { ...m.payload, project: o.project().name };
    if (m.channel === 'sms') {
      const body = renderSms(vars);
      if (o.sms === 'dev') return { transport: 'dev_inbox', response: await toDevInbox(m, null, body, null) };
      if (!o.sms)
        throw Object.assign(new Error('no SMS provider is configured'), { response: 'no SMS provider is configured', retryable: true });
      return { transport: 'sms', response: (await o.sms.send({ to: m.recipient, body })).response };
    }
    if (!isEmailKind(m.kind))
      throw Object.assign(new Error('unknown kind'), { response: `unknown email kind ${m.kind}`, retryable: false });
    const mail = renderEmail(m.kind, vars, o.project().templates);
    if (o.email === 'dev') return { transport: 'dev_inbox', response: await toDevInbox(m, mail.subject, mail.text, mail.html) };
    const sent = await o.email.send({ ...mail, to: m.recipient, from: o.from, headers: { 'X-Plinth-Kind': m.kind } });
    return { transport: 'smtp', response: sent.response };
  }

  async function settle(m: Claimed): Promise<void> {
    try {
      const { transport, response } = await deliver(m);
      await o.db.query(
        `update plinth.outbox set status = 'sent', sent_at = $2::timestamptz, updated_at = $2::timestamptz, lease_until = null,
           payload = '{}'::jsonb, transport = $3, last_response = $4 where id = $1`,
        [m.id, iso(o.clock.now()), transport, response.slice(0, 1000)],
      );
    } catch (err) {
      const e = err as { response?: string; retryable?: boolean; message?: string };
      const response = String(e.response ?? e.message ?? 'send failed').slice(0, 1000);
      const now = o.clock.now();
      const giveUp = e.retryable === false || now - Date.parse(m.created_at) >= giveUpMs;
      o.log.warn({ id: m.id, kind: m.kind, channel: m.channel, attempts: m.attempts, response, giveUp }, 'message not sent');
      await o.db.query(
        giveUp
          ? `update plinth.outbox set status = 'failed', updated_at = $2::timestamptz, lease_until = null, payload = '{}'::jsonb,
               last_response = $3 where id = $1`
          : `update plinth.outbox set next_attempt_at = $4::timestamptz, updated_at = $2::timestamptz, lease_until = null,
               last_response = $3 where id = $1`,
        giveUp ? [m.id, iso(now), response] : [m.id, iso(now), response, iso(now + backoffMs(m.attempts))],
      );
    }
  }

  // The delivery log keeps 30 days; checked at most hourly by each instance.
  async function prune(): Promise<void> {
    const now = o.clock.now();
    if (now - prunedAt < 3600_000) return;
    prunedAt = now;
    await o.db.query(`delete from plinth.outbox where status <> 'queued' and updated_at < $1::timestamptz`, [
      iso(now - 30 * 24 * 3600_000),
    ]);
  }

  const worker = openWorker({
    pollMs,
    async run() {
      await prune();
      const claimed = await claim();
      await Promise.all(claimed.map(settle));
      return claimed.length === batch;
    },
    onError: (err) => o.log.warn({ err }, 'outbox run failed; retrying at the next poll'),
  });

  return {
    async enqueue(tx: Queryable, m: OutgoingMessage) {
      const now = iso(o.clock.now());
      const due = m.notBefore !== undefined && m.notBefore > o.clock.now() ? iso(m.notBefore) : now;
      if (due !== now) {
        // Never tried yet, still waiting: not claimed by a worker, so its payload can change.
        const { rows } = await tx.query<{ id: string }>(
          `update plinth.outbox set payload = $4::jsonb, updated_at = $5::timestamptz
           where id = (select id from plinth.outbox where status = 'queued' and channel = $1 and kind = $2 and recipient = $3
             and attempts = 0 and lease_until is null and next_attempt_at > $5::timestamptz order by id desc limit 1 for update skip locked)
           returning id::text as id`,
          [m.channel, m.kind, m.to, JSON.stringify(m.data), now],
        );
        if (rows[0]) return rows[0].id;
      }
      const { rows } = await tx.query<{ id: string }>(
        `insert into plinth.outbox (channel, kind, recipient, payload, created_at, updated_at, next_attempt_at)
         values ($1, $2, $3, $4::jsonb, $5::timestamptz, $5::timestamptz, $6::timestamptz) returning id::text as id`,
        [m.channel, m.kind, m.to, JSON.stringify(m.data), now, due],
      );
      return rows[0].id;
    },
    kick: worker.kick,
    drain: worker.drain,
    close: worker.close,
  };
}
