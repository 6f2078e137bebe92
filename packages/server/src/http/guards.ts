import { type Admin, ROLE_RIGHTS, type RoleRights } from '@plinth/shared';
import type { FastifyRequest } from 'fastify';
import { CONSOLE_COOKIE, type ConsoleSessionLookup, cookieProblem } from './console.js';
import { ApiError } from './errors.js';
import { mfaRequired, type Principal, type PrincipalResolver, type ResolveOptions, SERVICE } from './principal.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console admin of the `plinth_admin` cookie, when that is how the request came in. */
    admin: Admin | null;
  }
  interface FastifyContextConfig {
    /**
     * The audit log's name for what this route does (`sql.run`, `bucket.create`…), set on the
     * route line of any area: every answer below 400 is recorded with who made it (the admin
     * area's audit.ts reads it).
     */
    audit?: string;
    /** Record only when the console's cookie made the request (storage objects: apps use them too). */
    auditConsoleOnly?: boolean;
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Who is calling, worked out in one place for every area (docs/api.md §1, keys and roles): the REST API, storage,
 * the OpenAPI document, the auth routes and the management routes all resolve the caller here,
 * once per request, and keep it on `req.principal` (and the console admin of the cookie on
 * `req.admin`). Areas compose their own guards on top (auth's `user`: an open session; admin's
 * `manage`: the secret key or a console admin whose role allows it).
 */
export interface CallerGuards {
  /**
   * The principal of the `apikey` and `Authorization` headers, resolved once per request. An
   * `aal1` token of a user with a verified second factor is refused (403 `mfa_required`) unless
   * `{ aal1: true }` (the auth routes that let it step up).
   * @example const who = await guards.callerOf(req); if (who.role === 'anon') …
   */
  callerOf(req: FastifyRequest, options?: ResolveOptions): Promise<Principal>;
  /**
   * Guard: any key of the project. When `apikey` is sent, `Authorization` is not looked at:
   * a client still holding an expired access token must be able to sign in or refresh.
   */
  key(req: FastifyRequest): Promise<void>;
  /** Guard: the secret key (`Authorization: Bearer sk_…` or `apikey: sk_…`). */
  service(req: FastifyRequest): Promise<void>;
  /**
   * The console admin of the request's `plinth_admin` cookie while its session is live, else
   * null; 403 `csrf_rejected` when the request breaks the cookie's rule (http/console.ts).
   * Resolved once per request, kept on `req.admin`.
   * @example const admin = await guards.consoleOf(req); if (admin?.role === 'viewer') …
   */
  consoleOf(req: FastifyRequest): Promise<Admin | null>;
  /**
   * Who calls a route open to apps and to the console (storage objects): the principal of the
   * key headers, as everywhere; a request that carries no key at all (no Authorization, no or
   * an empty apikey) and a console cookie is the console's and acts as the secret key, under
   * the cookie's rule, changes only for a role that may make them. A key always decides over
   * the cookie, so an app page of the same origin keeps its user's row-level security while its
   * browser holds a console session. Without a key or a live session: the key's 401.
   * @example const who = await guards.appOrConsole(req); // SERVICE for the console
   */
  appOrConsole(req: FastifyRequest): Promise<Principal>;
  /**
   * Guard of a management route: the secret key, or a console admin whose role may make the
   * request (a `viewer` reads only) and has `right` when one is named (`ROLE_RIGHTS` in
   * packages/shared); else 401, or 403 `forbidden` with what the role lacks.
   * @example app.post('/api/v1/sql', { onRequest: guards.operator('sql') }, h)
   */
  operator(right?: keyof RoleRights): (req: FastifyRequest) => Promise<void>;
}

const LACKS: Record<keyof RoleRights, string> = {
  change: 'may read but not change anything',
  sql: 'may not run SQL (the SQL runner can change anything)',
  secretKey: 'may not read the secret key',
  manageAdmins: 'may not manage admins, read the audit log or rotate signing keys',
  manageOwners: 'may not manage owners',
};

export interface ConsoleOptions {
  /** The admin area's lookup of live console sessions. */
  sessions: ConsoleSessionLookup;
  /** PUBLIC_URL's origin: a cookie's changes must come from it (or from a loopback name of this server). */
  publicOrigin: string;
}

/**
 * @example const guards = createCallerGuards(createPrincipalResolver(keys, verify), { sessions, publicOrigin }); app.post('/v1/auth/signin', { preHandler: guards.key }, h)
 */
export function createCallerGuards(resolve: PrincipalResolver, cookies?: ConsoleOptions): CallerGuards {
  const callerOf = async (req: FastifyRequest, options?: ResolveOptions): Promise<Principal> => {
    req.principal ??= await resolve(req.headers.apikey, req.headers.authorization, { aal1: true });
    if (req.principal.role === 'authenticated' && req.principal.stepUp && !options?.aal1) throw mfaRequired();
    return req.principal;
  };
  const looked = new WeakSet<FastifyRequest>();
  const consoleOf = async (req: FastifyRequest): Promise<Admin | null> => {
    if (looked.has(req)) return req.admin;
    looked.add(req);
    const raw = readCookie(req.headers.cookie, CONSOLE_COOKIE);
    const admin = raw && cookies ? await cookies.sessions(raw) : null;
    if (!admin || !cookies) return null;
    const problem = cookieProblem(req, cookies.publicOrigin);
    if (problem) throw new ApiError('csrf_rejected', `Refused: ${problem}. The console sends these; other pages cannot.`);
    req.admin = admin;
    return admin;
  };
  return {
    consoleOf,
    async appOrConsole(req) {
      if (req.principal) return req.principal;
      const apikey = req.headers.apikey;
      if ((apikey === undefined || apikey === '') && req.headers.authorization === undefined) {
        const admin = await consoleOf(req);
        if (admin) {
          if (!SAFE.has(req.method) && !ROLE_RIGHTS[admin.role].change) throw readOnly(admin);
          req.principal = SERVICE;
          return SERVICE;
        }
      }
      return callerOf(req);
    },
    operator(right) {
      return async (req) => {
        let keyError: unknown = null;
        try {
          if ((await callerOf(req)).role === 'service') return;
        } catch (err) {
          keyError = err;
        }
        const admin = await consoleOf(req);
        if (admin) {
          if (right && !ROLE_RIGHTS[admin.role][right])
            throw new ApiError('forbidden', `Your console role (${admin.role}) ${LACKS[right]}.`);
          if (!SAFE.has(req.method) && !ROLE_RIGHTS[admin.role].change) throw readOnly(admin);
          return;
        }
        if (keyError) throw keyError;
        if (req.principal)
          throw new ApiError('forbidden', 'This endpoint needs the secret key (Authorization: Bearer sk_…) or a console admin session.');
        throw new ApiError('unauthorized', 'Sign in to the console, or send the secret key (Authorization: Bearer sk_…).');
      };
    },
    callerOf,
    async key(req) {
      // Any key: a token's second factor is not this guard's question (sign-in, refresh).
      req.principal = await resolve(req.headers.apikey, req.headers.apikey === undefined ? req.headers.authorization : undefined, {
        aal1: true,
      });
    },
    async service(req) {
      if ((await callerOf(req)).role !== 'service') {
        throw new ApiError('forbidden', 'This endpoint needs the secret key (Authorization: Bearer sk_…).');
      }
    },
  };
}

/** 403 for a console role that may only read. */
export function readOnly(admin: Admin): ApiError {
  return new ApiError('forbidden', `Your console role (${admin.role}) ${LACKS.change}.`);
}

/**
 * One cookie's value from a Cookie header, or null (no cookie library for the two names Plinth reads).
 * @example readCookie('a=1; plinth_admin=xyz', 'plinth_admin') // 'xyz'
 */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
