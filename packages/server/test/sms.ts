import { createServer, type Server } from 'node:http';

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
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      raw += c;
    });
    req.on('end', () => {
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const addr = server.address();
  const port = addr && typeof addr === 'object' ? addr.port : 0;
  sink.url = `http://127.0.0.1:${port}/sms`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}
