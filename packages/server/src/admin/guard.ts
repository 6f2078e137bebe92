import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type CallerGuards, type Principal, readCookie, SERVICE } from '../http/index.js';
import { ADMIN_MAX_MS, type Admin, type AdminService } from './admins.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console admin of the `plinth_admin` cookie, when that is how the request came in. */
    admin: Admin | null;
  }
}

export const COOKIE = 'plinth_admin';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface GuardOptions {
  admins: AdminService;
  /** The server's own origin (of PUBLIC_URL): an admin's changes must come from it. */
  publicOrigin: string;
}

/**
 * The Set-Cookie value of a console session (docs/api.md §4.1): HttpOnly, SameSite=Strict, Path=/,
 * Secure when the public URL is https; it lasts as long as the session can (7 days), the
 * server ends it sooner after 12 idle hours.
 */
export function sessionCookie(value: string, secure: boolean): string {
  return `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${ADMIN_MAX_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedCookie(secure: boolean): string {
  return `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/**
 * The CSRF rule of docs/api.md §4.1 for a change made with the cookie: `X-Plinth-Admin: 1`, an
 * Origin (when sent) that is the server's own, and a Sec-Fetch-Site (when sent) of
 * `same-origin`. A SameSite=Strict cookie still comes along from another port of the same
 * host ("same-site"), so SameSite alone is not enough. The request's own origin (its Host)
 * also counts as the server's: a page on another origin cannot choose the Host its browser
 * sends, and the console then works when reached by another name than PUBLIC_URL.
 */
export function csrfProblem(req: FastifyRequest, publicOrigin: string): string | null {
  if (req.headers['x-plinth-admin'] !== '1') return 'the X-Plinth-Admin: 1 header is missing';
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== publicOrigin && origin !== `${req.protocol}://${req.host}`) {
    return `the Origin ${String(origin).slice(0, 100)} is not this server's`;
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return `the request came from a ${String(site).slice(0, 20)} page`;
  return null;
}

/**
 * Route guards, resolved once per request and run at `onRequest` (before the body is parsed,
 * so a cross-site form post is refused as such, not as a bad body).
 * - `manage`: the secret key, or the admin cookie (with the CSRF rule for changes): every
 *   management route (docs/api.md §4).
 * - `admin`: the admin cookie only (me, keys, logout).
 * - `origin`: login and setup: no credential yet, but a browser's Origin must be ours.
 * - `caller`: not a guard but a caller resolver, for routes that serve apps and the console
 *   alike (storage objects, handed to storage by app.ts): see its own comment.
 * @example app.post('/api/v1/sql', { onRequest: guards.manage }, handler)
 */
export function createGuards(callers: CallerGuards, options: GuardOptions) {
  const { admins, publicOrigin } = options;

  async function cookieAdmin(req: FastifyRequest): Promise<Admin | null> {
    const raw = readCookie(req.headers.cookie, COOKIE);
    if (!raw) return null;
    const admin = await admins.resolve(raw);
    if (admin && !SAFE.has(req.method)) {
      const problem = csrfProblem(req, publicOrigin);
      if (problem) throw new ApiError('csrf_rejected', `Refused: ${problem}. The console sends these; other pages cannot.`);
    }
    return admin;
  }

  const manage = async (req: FastifyRequest, _reply?: FastifyReply) => {
    let keyError: unknown = null;
    try {
      if ((await callers.callerOf(req)).role === 'service') return;
    } catch (err) {
      keyError = err;
    }
    req.admin = await cookieAdmin(req);
    if (req.admin) return;
    if (keyError) throw keyError;
    if (req.principal)
      throw new ApiError('forbidden', 'This endpoint needs the secret key (Authorization: Bearer sk_…) or a console admin session.');
    throw new ApiError('unauthorized', 'Sign in to the console, or send the secret key (Authorization: Bearer sk_…).');
  };

  const admin = async (req: FastifyRequest, _reply?: FastifyReply) => {
    req.admin = await cookieAdmin(req);
    if (!req.admin) throw new ApiError('unauthorized', 'No console session: sign in at /console/login.');
  };

  const origin = async (req: FastifyRequest, _reply?: FastifyReply) => {
    const o = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    if (
      (o !== undefined && o !== publicOrigin && o !== `${req.protocol}://${req.host}`) ||
      (site !== undefined && site !== 'same-origin' && site !== 'none')
    ) {
      throw new ApiError('csrf_rejected', 'Refused: console sign-in is accepted from the console page only.');
    }
  };

  /**
   * Who calls a route open to apps and to the console (storage objects): the principal of the
   * request's key headers, as everywhere; a request that carries no key at all (no
   * Authorization, no or an empty apikey) and the admin cookie is the console's and acts as the
   * secret key, under the same cookie and CSRF rule as `manage`. A key always decides over the
   * cookie, so an app page of the same origin keeps its user's row-level security even while
   * its browser holds a console session. Without a key or a valid session: the key's 401.
   * @example const who = await guards.caller(req); // SERVICE for the console, else callers.callerOf(req)
   */
  const caller = async (req: FastifyRequest): Promise<Principal> => {
    if (req.principal) return req.principal;
    const apikey = req.headers.apikey;
    if ((apikey === undefined || apikey === '') && req.headers.authorization === undefined) {
      req.admin = await cookieAdmin(req);
      if (req.admin) {
        req.principal = SERVICE;
        return SERVICE;
      }
    }
    return callers.callerOf(req);
  };

  return { manage, admin, origin, caller, service: callers.service };
}

export type Guards = ReturnType<typeof createGuards>;
