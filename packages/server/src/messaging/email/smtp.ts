import { createRequire } from 'node:module';
import type nodemailer from 'nodemailer';
import { SendError } from '../send-error.js';
import type { EmailTransport } from '../types.js';

// 5xx answers about the server's own setup (authentication required / failed, TLS
// required) are not the message's fault: once the operator fixes SMTP, it goes out.
// Unless SMTP_URL sets them: nodemailer's own defaults wait minutes on a dead server.
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

const SETUP_CODES = new Set([530, 534, 535, 538]);

/** The bare address of a `From` like `Plinth <no-reply@example.com>` (the SMTP envelope sender). */
function envelopeFrom(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? m[1] : from).trim();
}

/**
 * An SMTP transport from `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://…:465`; query
 * options as nodemailer reads them). Short timeouts: a dead server must not hold the outbox.
 * @example const smtp = createSmtpTransport('smtp://127.0.0.1:2525'); await smtp.send({ to, from, subject, html, text });
 */
export function createSmtpTransport(url: string, headers: Record<string, string> = {}): EmailTransport & { close(): void } {
  // The URL was checked when the config was loaded (config/index.ts).
  const withTimeouts = new URL(url);
  for (const [key, ms] of Object.entries(TIMEOUTS)) {
    if (!withTimeouts.searchParams.has(key)) withTimeouts.searchParams.set(key, String(ms));
  }
  // nodemailer is loaded only when SMTP_URL is set (a start's cost otherwise; issue 32).
  const mailer = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
  const transport = mailer.createTransport(withTimeouts.toString());
  return {
    async send(mail) {
      try {
        // An address object, never a string: nodemailer parses a string as an address LIST
        // (`root,victim@x` or `bcc:x,y@x` would reach someone else); an object is one mailbox.
        const info = await transport.sendMail({
          ...mail,
          to: { name: '', address: mail.to },
          envelope: { from: envelopeFrom(mail.from), to: [mail.to] },
          headers: { ...headers, ...mail.headers },
        });
        return { response: String(info.response ?? 'accepted') };
      } catch (err) {
        const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
        // The server's answer, else the socket error (never the URL: it may carry the password).
        const response = (e.response ?? [e.code, e.message].filter(Boolean).join(': ') ?? 'SMTP error').slice(0, 500);
        const code = e.responseCode;
        const retryable = code === undefined || code < 500 || SETUP_CODES.has(code);
        throw new SendError(`SMTP: ${response}`, response, retryable);
      }
    },
    close: () => transport.close(),
  };
}
