import { startLocalServer } from './local-server.js';

export interface SmsSink {
  /** `http://127.0.0.1:<port>/sms` for SMS_WEBHOOK_URL. */
  url: string;
  received: Array<{ to: string; body: string }>;
  /** Answer every request with this status until cleared (the provider is down or refuses). */
  failWith: number | null;
  close(): Promise<void>;
}

/**
 * A local HTTP server that takes the webhook SMS provider's request (`POST {to, body}` JSON)
 * and keeps each message: the SMS half of the end-to-end tests.
 * @example const sms = await startSmsSink(); … SMS_PROVIDER=webhook SMS_WEBHOOK_URL=sms.url … sms.received.at(-1)
 */
export async function startSmsSink(): Promise<SmsSink> {
  const sink: SmsSink = { url: '', received: [], failWith: null, close: async () => undefined };
  const server = await startLocalServer((req, res, raw) => {
    if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/json')) {
      res.writeHead(400).end('expected a JSON POST');
      return;
    }
    if (sink.failWith) {
      res.writeHead(sink.failWith).end('sink told to fail');
      return;
    }
    const body = JSON.parse(raw) as { to: string; body: string };
    sink.received.push({ to: body.to, body: body.body });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `sms-${sink.received.length}` }));
  });
  sink.url = `${server.origin}/sms`;
  sink.close = server.close;
  return sink;
}
