/**
 * Email and SMS delivery. What this area adds:
 * - the durable outbox (`plinth.outbox`, migration 0004) and its worker (outbox.ts);
 * - SMTP through nodemailer (`SMTP_URL`, `SMTP_FROM`), SMS providers (sms/), and the dev
 *   inbox (`plinth.dev_inbox`) when neither is configured;
 * - templates per email kind with per-project overrides (templates.ts);
 * - the delivery log and a synchronous test email, served by admin/messages.ts.
 */
import type { DevMessage, LogEntry } from '@plinth/shared';
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import { type Clock, iso, isoSql } from '../lib/index.js';
import { createSmtpTransport } from './email/smtp.js';
import { SendError } from './send-error.js';
import { createOutbox, type MessagingWorker } from './outbox.js';
import { type EmailTemplate, renderEmail } from './templates.js';
import type { EmailTransport, SmsTransport } from './types.js';

export { SendError } from './send-error.js';
export { createSmsTransport, SMS_PROVIDERS } from './sms/index.js';
export { DEFAULT_TEMPLATES, renderEmail, renderSms, type EmailKind, type EmailTemplate } from './templates.js';
export type { EmailTransport, MessageKind, OutgoingMessage, Outbox, SmsTransport } from './types.js';

export interface MessagingOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** `SMTP_URL`; null sends email to the dev inbox. */
  smtpUrl: string | null;
  smtpFrom: string;
  /** An SMS transport, `'dev'`, or null (phone codes answer 503 sms_not_configured). */
  sms: SmsTransport | 'dev' | null;
  project: () => { name: string; templates: Partial<Record<string, Partial<EmailTemplate>>> };
  /** Tests: a transport of their own instead of SMTP. */
  emailTransport?: EmailTransport;
  pollMs?: number;
  /** How long a claimed message is held before another instance may send it (OUTBOX_LEASE_SECONDS). */
  leaseMs?: number;
}

export type { DevMessage, LogEntry } from '@plinth/shared';

export interface ListQuery {
  limit: number;
  offset: number;
  to?: string;
  status?: string;
  channel?: string;
}

export interface Messaging {
  outbox: MessagingWorker;
  /** Where email goes: `smtp` or `dev_inbox`. */
  emailMode: 'smtp' | 'dev_inbox';
  smsConfigured: boolean;
  /** Newest first. */
  log(q: ListQuery): Promise<LogEntry[]>;
  devInbox(q: ListQuery): Promise<DevMessage[]>;
  /** Sends a test email now (not through the queue) and answers with the server's reply. */
  sendTestEmail(to: string): Promise<{ transport: string; response: string }>;
  close(): Promise<void>;
}

/**
 * Builds the outbox worker and the transports from config.
 * @example const messaging = createMessaging({ db, clock, log, smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom, sms: null, project });
 */
export function createMessaging(o: MessagingOptions): Messaging {
  const smtp = o.emailTransport ?? (o.smtpUrl ? createSmtpTransport(o.smtpUrl) : null);
  const outbox = createOutbox({
    db: o.db,
    clock: o.clock,
    log: o.log,
    email: smtp ?? 'dev',
    sms: o.sms,
    from: o.smtpFrom,
    project: o.project,
    pollMs: o.pollMs,
    leaseMs: o.leaseMs,
  });

  // The lists select `id::text as id` (ids are bigints, JSON wants strings), and ORDER BY picks
  // an output column over a table column of the same name: ordering by the qualified `o.id` /
  // `d.id` keeps "newest first" numeric (by text, 9 came after 10).
  function where(q: ListQuery, recipientCol: string): { sql: string; params: unknown[] } {
    const params: unknown[] = [q.limit, q.offset];
    const conds: string[] = [];
    if (q.to) conds.push(`${recipientCol} = $${params.push(q.to)}`);
    if (q.status) conds.push(`status = $${params.push(q.status)}`);
    if (q.channel) conds.push(`channel = $${params.push(q.channel)}`);
    return { sql: conds.length ? `where ${conds.join(' and ')}` : '', params };
  }

  return {
    outbox,
    emailMode: smtp ? 'smtp' : 'dev_inbox',
    smsConfigured: o.sms !== null,
    async log(q) {
      const w = where(q, 'recipient');
      const { rows } = await o.db.query<LogEntry>(
        `select id::text as id, channel, kind, recipient as "to", status, attempts, transport, last_response,
           ${isoSql('created_at')} as created_at, ${isoSql('updated_at')} as updated_at, ${isoSql('sent_at')} as sent_at,
           case when status = 'queued' then ${isoSql('next_attempt_at')} end as next_attempt_at
         from plinth.outbox o ${w.sql} order by o.id desc limit $1 offset $2`,
        w.params,
      );
      return rows;
    },
    async devInbox(q) {
      const w = where({ ...q, status: undefined }, 'recipient');
      const { rows } = await o.db.query<DevMessage>(
        `select id::text as id, channel, kind, recipient as "to", subject, text_body as text, html_body as html, ${isoSql('created_at')} as created_at
         from plinth.dev_inbox d ${w.sql} order by d.id desc limit $1 offset $2`,
        w.params,
      );
      return rows;
    },
    async sendTestEmail(to) {
      const mail = renderEmail('test', { project: o.project().name, email: to });
      const now = iso(o.clock.now());
      const record = (status: 'sent' | 'failed', transport: string, response: string) =>
        o.db.query(
          `insert into plinth.outbox (channel, kind, recipient, status, attempts, transport, last_response, created_at, updated_at, sent_at)
           values ('email', 'test', $1, $2, 1, $3, $4, $5::timestamptz, $5::timestamptz, case when $2 = 'sent' then $5::timestamptz end)`,
          [to, status, transport, response.slice(0, 1000), now],
        );
      if (!smtp) {
        await o.db.query(
          `insert into plinth.dev_inbox (channel, kind, recipient, subject, text_body, html_body, created_at) values ('email', 'test', $1, $2, $3, $4, $5::timestamptz)`,
          [to, mail.subject, mail.text, mail.html, now],
        );
        await record('sent', 'dev_inbox', 'stored in the dev inbox');
        return { transport: 'dev_inbox', response: 'stored in the dev inbox (no SMTP_URL is configured)' };
      }
      try {
        const { response } = await smtp.send({ ...mail, to, from: o.smtpFrom, headers: { 'X-Plinth-Kind': 'test' } });
        await record('sent', 'smtp', response);
        return { transport: 'smtp', response };
      } catch (err) {
        const response = err instanceof SendError ? err.response : String((err as Error).message);
        await record('failed', 'smtp', response);
        throw new SendError(response, response, false);
      }
    },
    async close() {
      await outbox.close();
      if (smtp && 'close' in smtp && typeof smtp.close === 'function') smtp.close();
    },
  };
}
