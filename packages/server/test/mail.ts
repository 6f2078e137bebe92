import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** `X-Plinth-Kind`: verification, reset, magic_link, email_change, test. */
  kind: string;
  /** The first http(s) link of the text part. */
  link: string | null;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` for SMTP_URL. */
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Every SMTP transaction attempted (accepted or refused). */
  attempts: number;
  /** Answer every message with this SMTP error (e.g. 550 for a refused address) until cleared. */
  refuseWith: { code: number; message: string } | null;
  /** Stops listening (connections are refused) — SMTP "down". */
  stop(): Promise<void>;
  /** Listens again on the same port (no-op while listening). */
  start(): Promise<void>;
}

/**
 * A real SMTP server (the `smtp-server` package) on loopback that parses and keeps every
 * message: the email half of the tests, as real as the network allows.
 * @example const sink = await startSmtpSink(); … createTestServer({ SMTP_URL: sink.url }) … sink.received[0].link
 */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  let server: SMTPServer | null = null;
  const sink: SmtpSink = {
    url: '',
    port,
    received: [],
    attempts: 0,
    refuseWith: null,
    async stop() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async start() {
      if (server) return;
      server = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, session, callback) {
          sink.attempts++;
          simpleParser(stream)
            .then((mail: ParsedMail) => {
              if (sink.refuseWith) {
                const err = Object.assign(new Error(sink.refuseWith.message), { responseCode: sink.refuseWith.code });
                callback(err);
                return;
              }
              const text = mail.text ?? '';
              sink.received.push({
                to: session.envelope.rcptTo.map((r) => r.address),
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                subject: mail.subject ?? '',
                text,
                html: typeof mail.html === 'string' ? mail.html : '',
                kind: String(mail.headers.get('x-plinth-kind') ?? ''),
                link: /https?:\/\/\S+/.exec(text)?.[0] ?? null,
              });
              callback();
            })
            .catch((err: Error) => callback(err));
        },
      });
      const s = server;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(sink.port, '127.0.0.1', () => resolve());
      });
      const addr = s.server.address();
      if (addr && typeof addr === 'object') sink.port = addr.port;
      sink.url = `smtp://127.0.0.1:${sink.port}`;
    },
  };
  await sink.start();
  return sink;
}
