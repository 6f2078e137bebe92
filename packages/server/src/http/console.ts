/**
 * The console's session cookie as a way of calling (docs/security.md, "Console admins"): the
 * rule a request carrying it must follow, decided here for every area (management routes and
 * storage alike). Which cookie values are live sessions is the admin area's table: it hands
 * its lookup in, as auth hands in the token verifier.
 */
import type { Admin } from '@plinth/shared';
import type { FastifyRequest } from 'fastify';

/** The cookie of a console session (opaque, random, only its SHA-256 stored). */
export const CONSOLE_COOKIE = 'plinth_admin';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Names a browser on this machine reaches the server by, whatever PUBLIC_URL says. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The admin of a cookie value while its session is live, else null. */
export type ConsoleSessionLookup = (cookie: string) => Promise<Admin | null>;

/**
 * Whether a browser's `Origin` is this server's: the origin of PUBLIC_URL, or the origin the
 * request was addressed to when its host is PUBLIC_URL's host or a loopback name (the console
 * reached as 127.0.0.1 while PUBLIC_URL says localhost). Any other `Host` is not trusted: a
 * DNS-rebound name points a page of another origin at this server with its own Host.
 * @example isOwnOrigin('http://127.0.0.1:8080', req, 'http://localhost:8080') // true when req came to 127.0.0.1:8080
 */
export function isOwnOrigin(origin: string, req: FastifyRequest, publicOrigin: string): boolean {
  if (origin === publicOrigin) return true;
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return false;
  }
  const publicHost = new URL(publicOrigin).hostname;
  return (LOOPBACK.has(host) || host === publicHost) && origin === `${req.protocol}://${req.host}`;
}

/**
 * The rule of a request made with the console cookie, or null when it is followed:
 * - every method, GET and HEAD included: `X-Plinth-Admin: 1`, a header no `<img>`, `<video>`,
 *   `<script>`, link, form or cross-origin fetch without a preflight can send. SameSite=Strict
 *   still sends the cookie from another port of the same host ("same-site"), and on a plain-http
 *   host that is not localhost (`http://devbox.lan:8080`) browsers send no `Sec-Fetch-Site`, so
 *   only this header tells the console's own requests from a subresource that would load private
 *   objects with the secret key's rights (review round 3, R12). The console fetches previews and
 *   downloads, with the header, into blob URLs;
 * - every method: a `Sec-Fetch-Site`, when sent, of `same-origin` or `none`;
 * - a change (any method but GET, HEAD, OPTIONS): also an `Origin`, when sent, of this server
 *   (`isOwnOrigin`), and a `Sec-Fetch-Site`, when sent, of `same-origin`.
 * @example cookieProblem(req, 'http://localhost:8080') // 'the X-Plinth-Admin: 1 header is missing'
 */
export function cookieProblem(req: FastifyRequest, publicOrigin: string): string | null {
  const site = req.headers['sec-fetch-site'];
  const from = `the request came from a ${String(site).slice(0, 20)} page`;
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return from;
  if (req.headers['x-plinth-admin'] !== '1') return 'the X-Plinth-Admin: 1 header is missing';
  if (SAFE.has(req.method)) return null;
  const origin = req.headers.origin;
  if (origin !== undefined && !isOwnOrigin(origin, req, publicOrigin))
    return `the Origin ${String(origin).slice(0, 100)} is not this server's`;
  if (site !== undefined && site !== 'same-origin') return from;
  return null;
}

/**
 * Whether a request without credentials (console sign-in, setup, an invitation) comes from a
 * page of this server: its `Origin` and `Sec-Fetch-Site`, when sent, say so.
 * @example if (!fromOwnPage(req, publicOrigin)) throw new ApiError('csrf_rejected', …)
 */
export function fromOwnPage(req: FastifyRequest, publicOrigin: string): boolean {
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  return (
    (origin === undefined || isOwnOrigin(origin, req, publicOrigin)) && (site === undefined || site === 'same-origin' || site === 'none')
  );
}
