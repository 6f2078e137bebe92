import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** One POST a webhook receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed (docs/webhooks.md's payload). */
  json: {
    type: string;
    table: string;
    seq: number;
    record: Record<string, unknown> | null;
    old_record: Record<string, unknown> | null;
    commit_time: string;
    truncated?: true;
  };
  /** What the receiver answered. */
  status: number;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  /** Every request, in the order they arrived (answered ones and refused ones). */
  received: Received[];
  /** The requests answered 2xx. */
  accepted(): Received[];
  /**
   * How to answer the next request: a status (default 200), optionally headers; the function is
   * called per request with its index.
   */
  answer: (
    n: number,
    r: Omit<Received, 'status' | 'at'>,
  ) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';
  /** Stops listening (and drops open connections): the endpoint is down. */
  close(): Promise<void>;
}

/**
 * A webhook endpoint on a free loopback port that records what it gets, the way a project's own
 * server would, and answers what `answer` says (200 by default).
 * @example const r = await startReceiver(); … expect(r.accepted().map((x) => x.json.seq)).toEqual([1, 2, 3]);
 */
export async function startReceiver(port = 0): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const r: Receiver = {
    url: '',
    port: 0,
    received: [],
    accepted: () => r.received.filter((x) => x.status >= 200 && x.status < 300),
    answer: () => ({ status: 200 }),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      let json: Received['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: 'not json', table: '', seq: -1, record: null, old_record: null, commit_time: '' };
      }
      const got = { headers: req.headers, body, json };
      const a = r.answer(r.received.length, got);
      if (a === 'hang') {
        r.received.push({ ...got, status: 0, at: Date.now() });
        return;
      }
      const reply = () => {
        r.received.push({ ...got, status: a.status, at: Date.now() });
        res.writeHead(a.status, a.headers ?? { 'content-type': 'text/plain' });
        res.end(a.body ?? (a.status < 300 ? 'ok' : 'no'));
      };
      if (a.delayMs) setTimeout(reply, a.delayMs);
      else reply();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const addr = server.address();
  r.port = addr && typeof addr === 'object' ? addr.port : 0;
  r.url = `http://127.0.0.1:${r.port}`;
  r.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return r;
}
