/**
 * One attempt of a delivery: a POST over node:http(s) with keep-alive, the whole answer within
 * WEBHOOK_TIMEOUT (10 s), redirects not followed (a 3xx is a failed attempt: following one would
 * send the signed body to an address nobody checked), and, unless WEBHOOK_ALLOW_PRIVATE, every
 * connection resolved through `guardedLookup` and checked once connected (address.ts, lib/address.ts), so what is
 * checked is what is connected to.
 */
import { type Agent as HttpAgent, Agent, type IncomingMessage, type RequestOptions, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { guardedLookup, isBlockedAddress, type LookupFunction, RefusedAddressError, refused } from './address.js';

export interface Attempt {
  ok: boolean;
  /** The receiver's HTTP status, or null when no answer came. */
  status: number | null;
  /** The start of the answer (1,000 characters), or what went wrong. */
  response: string;
  durationMs: number;
}

export interface PostOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Tests: the resolver under the guard (default: the system's, dns.lookup). */
  lookup?: LookupFunction;
}

export interface Poster {
  /** One POST; `headers` is the caller's to hand over (content-length is added to it). */
  post(url: string, headers: Record<string, string>, body: string): Promise<Attempt>;
  close(): void;
}

/** Answers are read up to this much (the rest is dropped with the connection); 1,000 characters are kept. */
const READ_LIMIT = 64 * 1024;
const KEEP = 1000;

/**
 * Makes the poster all deliveries of an instance go through (its keep-alive pools are shared by
 * every webhook: connections are per host and port).
 * @example const poster = createPoster({ allowPrivate: false, timeoutMs: 10_000 }); await poster.post(url, headers, body);
 */
export function createPoster(o: PostOptions): Poster {
  const lookup = o.allowPrivate ? undefined : guardedLookup(o.lookup);
  // A few sockets per receiver: a webhook sends one request at a time, and several webhooks may
  // share a host.
  const http: HttpAgent = new Agent({ keepAlive: true, maxSockets: 8, maxFreeSockets: 8 });
  const https = new HttpsAgent({ keepAlive: true, maxSockets: 8, maxFreeSockets: 8 });
  // A webhook's URL parsed once, not at every attempt (a few webhooks, thousands of attempts).
  const targets = new Map<string, { host: string; secure: boolean; options: RequestOptions } | string>();
  const parsed = (target: string) => {
    let t = targets.get(target);
    if (t !== undefined) return t;
    if (targets.size > 1000) targets.clear();
    t = prepare(target);
    targets.set(target, t);
    return t;
  };
  function prepare(target: string): { host: string; secure: boolean; options: RequestOptions } | string {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return 'the URL cannot be parsed';
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!o.allowPrivate && isIP(host) && isBlockedAddress(host)) return refused(host, host).message;
    const secure = url.protocol === 'https:';
    return {
      host,
      secure,
      options: {
        method: 'POST',
        protocol: url.protocol,
        hostname: host,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        agent: secure ? https : http,
        ...(secure ? { servername: isIP(host) ? undefined : host } : {}),
        ...(lookup ? { lookup } : {}),
      },
    };
  }

  return {
    post(target, headers, body) {
      const started = performance.now();
      const done = (ok: boolean, status: number | null, response: string): Attempt => ({
        ok,
        status,
        response: response.slice(0, KEEP),
        durationMs: Math.round(performance.now() - started),
      });
      const t = parsed(target);
      if (typeof t === 'string') return Promise.resolve(done(false, null, t));
      const { host, secure, options } = t;
      return new Promise<Attempt>((resolve) => {
        let settled = false;
        const finish = (a: Attempt) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(a);
        };
        headers['content-length'] = String(Buffer.byteLength(body));
        const req = (secure ? httpsRequest : httpRequest)({ ...options, headers });
        const timer = setTimeout(() => {
          req.destroy(Object.assign(new Error(`no complete answer within ${o.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
        }, o.timeoutMs);
        if (!o.allowPrivate) {
          // The address connected to, checked again: covers anything a lookup did not see.
          req.on('socket', (socket: Socket) => {
            if (!socket.connecting) return;
            socket.once('connect', () => {
              const remote = socket.remoteAddress;
              if (remote && isBlockedAddress(remote)) socket.destroy(refused(host, remote));
            });
          });
        }
        req.on('error', (err: NodeJS.ErrnoException) => {
          const why =
            err instanceof RefusedAddressError
              ? err.message
              : `${err.message}${err.code && !err.message.includes(err.code) ? ` (${err.code})` : ''}`;
          finish(done(false, null, why));
        });
        req.on('response', (res: IncomingMessage) => {
          const status = res.statusCode ?? 0;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (size < READ_LIMIT) chunks.push(c);
            size += c.length;
            if (size > READ_LIMIT) res.destroy();
          });
          const answer = () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (status >= 300 && status < 400) {
              const location = String(res.headers.location ?? '').slice(0, 300);
              return done(false, status, `redirect${location ? ` to ${location}` : ''} not followed${text ? `: ${text}` : ''}`);
            }
            return done(status >= 200 && status < 300, status, text);
          };
          res.on('end', () => finish(answer()));
          res.on('close', () => finish(answer()));
          res.on('error', () => finish(answer()));
        });
        req.end(body);
      });
    },
    close() {
      http.destroy();
      https.destroy();
    },
  };
}
