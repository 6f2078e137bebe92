/**
 * A `fetch` for requests the server makes to URLs someone else chose (an OpenID Connect
 * provider's issuer, key set, token and userinfo endpoints): node:http(s) with the address
 * guard's lookup (address.ts), so the address checked is the address connected to, and the
 * connected address checked once more. Redirects are never followed (the 3xx is the answer). A
 * refused address fails with `UnreachableError`, whose message says only that the origin could
 * not be reached: no ECONNREFUSED, TLS or HTTP detail that would turn the caller's error
 * messages into a port scanner of the private network. Why not undici's `Agent` with
 * `connect.lookup`: undici is not a dependency (Node's fetch bundles it without exporting it).
 */
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type AddressGuardOptions, guardedLookup, isRefusedAddress, type LookupFunction, RefusedAddressError } from './address.js';

/** What a guarded fetch takes of `RequestInit` (what openid-client's `customFetch` and a JSON cache send). */
export interface GuardedInit {
  method?: string;
  headers?: RequestInit['headers'];
  body?: string | URLSearchParams | Uint8Array | ArrayBuffer | null;
  redirect?: RequestInit['redirect'];
  signal?: AbortSignal | null;
}

export type GuardedFetch = (url: string | URL, init?: GuardedInit) => Promise<Response>;

/** A request refused by the address guard; the message names the origin only. */
export class UnreachableError extends Error {
  readonly code = 'EUNREACHABLE';
  constructor(origin: string) {
    super(`${origin} could not be reached`);
    this.name = 'UnreachableError';
  }
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * @example const f = createGuardedFetch({ allowLoopback: isLoopback(publicUrl) }); const res = await f('https://sso.example.com/.well-known/openid-configuration');
 */
export function createGuardedFetch(guard: AddressGuardOptions & { lookup?: LookupFunction } = {}): GuardedFetch {
  const lookup = guardedLookup(guard.lookup, guard);
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return reject(new TypeError('fetch failed', { cause: new Error(`${url.protocol} is not http or https`) }));
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && isRefusedAddress(host, guard)) return reject(new UnreachableError(url.origin));
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);

      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((v, k) => {
        headers[k] = v;
      });
      let body: Buffer | undefined;
      if (init.body instanceof URLSearchParams) {
        body = Buffer.from(init.body.toString());
        headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
      } else if (typeof init.body === 'string') body = Buffer.from(init.body);
      else if (init.body) body = Buffer.from(init.body instanceof ArrayBuffer ? new Uint8Array(init.body) : init.body);
      if (body) headers['content-length'] = String(body.length);

      const secure = url.protocol === 'https:';
      const req = (secure ? httpsRequest : httpRequest)({
        method: init.method ?? 'GET',
        hostname: host,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers,
        lookup,
        ...(secure && !isIP(host) ? { servername: host } : {}),
      });
      const refused = () => new UnreachableError(url.origin);
      const onAbort = () => req.destroy(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('socket', (socket: Socket) => {
        if (!socket.connecting) return;
        // The address connected to, checked again: covers anything a lookup did not see.
        socket.once('connect', () => {
          const remote = socket.remoteAddress;
          if (remote && isRefusedAddress(remote, guard)) socket.destroy(new RefusedAddressError(host, remote));
        });
      });
      req.on('error', (err: Error) => {
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted && err === signal.reason) return reject(err);
        reject(err instanceof RefusedAddressError ? refused() : new TypeError('fetch failed', { cause: err }));
      });
      req.on('response', (res: IncomingMessage) => {
        signal?.removeEventListener('abort', onAbort);
        const out = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) out.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
        const status = res.statusCode ?? 0;
        const empty = NULL_BODY.has(status) || req.method === 'HEAD';
        if (empty) res.resume();
        signal?.addEventListener('abort', () => res.destroy(signal.reason), { once: true });
        try {
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage,
              headers: out,
            }),
          );
        } catch (err) {
          res.destroy();
          reject(new TypeError('fetch failed', { cause: err })); // a status outside 200-599
        }
      });
      req.end(body);
    });
}
