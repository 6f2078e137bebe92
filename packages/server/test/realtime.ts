/**
 * Real WebSocket clients (`ws`) of the realtime endpoint for tests: each records every message
 * it receives, in order, and waits for the ones a test expects (polled, never a fixed sleep).
 */
import WebSocket from 'ws';

export interface RtMessage {
  type: string;
  id?: string;
  seq?: number;
  op?: string;
  table?: string;
  row?: Record<string, unknown> | null;
  old?: Record<string, unknown> | null;
  code?: string;
  message?: string;
  details?: Record<string, unknown>;
  commit_time?: string;
}

export interface RtClient {
  ws: WebSocket;
  messages: RtMessage[];
  send(message: unknown): void;
  /** Resolves with the first message (from `from` on) for which `pred` holds; fails after `timeoutMs`. */
  next(pred: (m: RtMessage) => boolean, timeoutMs?: number, from?: number): Promise<RtMessage>;
  /** The change messages of a subscription so far. */
  changes(id?: string): RtMessage[];
  /** Resolves once the subscription has `n` changes. */
  waitChanges(n: number, id?: string, timeoutMs?: number): Promise<RtMessage[]>;
  /** Resolves with the close code once the socket closed. */
  closed: Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Opens `ws://…/api/v1/realtime?apikey=…` and resolves once it is open.
 * @example const c = await rtConnect(base, t.keys.publicKey); c.send({ type: 'auth', access_token: token });
 */
export async function rtConnect(base: string, apikey: string, headers: Record<string, string> = {}): Promise<RtClient> {
  const url = `${base.replace(/^http/, 'ws')}/api/v1/realtime?apikey=${encodeURIComponent(apikey)}`;
  const ws = new WebSocket(url, { headers });
  const messages: RtMessage[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as RtMessage));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  ws.on('error', () => undefined);
  const client: RtClient = {
    ws,
    messages,
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    async next(pred, timeoutMs = 30_000, from = 0) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.slice(from).find(pred);
        if (found) return found;
        if (Date.now() > end) throw new Error(`no such message within ${timeoutMs} ms; got ${JSON.stringify(messages).slice(-1500)}`);
        await sleep(20);
      }
    },
    changes: (id) => messages.filter((m) => m.type === 'change' && (id === undefined || m.id === id)),
    async waitChanges(n, id, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const got = client.changes(id);
        if (got.length >= n) return got;
        if (Date.now() > end)
          throw new Error(`${got.length} of ${n} changes within ${timeoutMs} ms; last: ${JSON.stringify(messages.slice(-5))}`);
        await sleep(20);
      }
    },
    closed,
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close();
      await closed;
    },
  };
  return client;
}

/**
 * Subscribes and resolves with the `subscribed` message (or throws with the error's code).
 * @example const seq = (await rtSubscribe(c, { id: 's1', table: 'todos' })).seq;
 */
export async function rtSubscribe(c: RtClient, sub: Record<string, unknown> & { id: string }): Promise<RtMessage> {
  const from = c.messages.length;
  c.send({ type: 'subscribe', ...sub });
  const m = await c.next((x) => x.id === sub.id && (x.type === 'subscribed' || x.type === 'error'), 60_000, from);
  if (m.type === 'error') throw Object.assign(new Error(`${m.code}: ${m.message}`), { code: m.code, details: m.details });
  return m;
}
