/**
 * A test double of the *remote* Plinth API for SDK unit tests: a node:http server that
 * answers like docs/api.md §2 and §5 for the few cases the SDK tests need. It is not the server and
 * proves nothing about it; the end-to-end tests against the real server are listed in README.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Session, User } from '../src/types.js';
import { decideRefresh } from '../../server/src/auth/sessions/refresh.js';

export const PUBLIC_KEY = 'pk_test_public';
const REUSE_GRACE_MS = 10_000;

export interface Recorded {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

interface RefreshEntry {
  userId: string;
  rotatedAt: number | null;
  next: Session | null;
}

export interface FakeServer {
  url: string;
  requests: Recorded[];
  /** Access-token lifetime of new sessions, in seconds. */
  accessTtl: number;
  /** Delay before answering /v1/auth/refresh (to make refreshes overlap). */
  refreshDelayMs: number;
  users: Map<string, { password: string; user: User }>;
  rows: Array<Record<string, unknown>>;
  /** Issues a token set as a sign-in would, without a request. */
  issue(user: User, ttl?: number): Session;
  count(path: string): number;
  close(): Promise<void>;
}

export function makeUser(email: string | null, extra: Partial<User> = {}): User {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    email,
    email_confirmed_at: now,
    phone: null,
    phone_confirmed_at: null,
    name: null,
    avatar: null,
    created_at: now,
    updated_at: now,
    last_sign_in_at: now,
    identities: [],
    ...extra,
  };
}

export async function startFakeServer(): Promise<FakeServer> {
  const access = new Map<string, { userId: string; exp: number }>();
  const refresh = new Map<string, RefreshEntry>();
  const byId = new Map<string, User>();
  const fake: FakeServer = {
    url: '',
    requests: [],
    accessTtl: 3600,
    refreshDelayMs: 0,
    users: new Map(),
    rows: [
      { id: 1, title: 'one', done: false },
      { id: 2, title: 'two', done: true },
    ],
    issue(user, ttl = fake.accessTtl) {
      byId.set(user.id, user);
      const now = Math.floor(Date.now() / 1000);
      const session: Session = {
        // Starts like a JWT, as the server's do: it tells a token from a key by that.
        access_token: `eyFake.${randomUUID()}`,
        token_type: 'bearer',
        expires_in: ttl,
        expires_at: now + ttl,
        refresh_token: `rt_${randomUUID()}`,
        // A user without a second factor: nothing more to prove (the server's answer, issue 27).
        next_aal: 'aal1',
        user,
      };
      access.set(session.access_token, { userId: user.id, exp: now + ttl });
      refresh.set(session.refresh_token, { userId: user.id, rotatedAt: null, next: null });
      return session;
    },
    count: (path) => fake.requests.filter((r) => r.path === path).length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  /** The caller as the server decides it: no bearer, a bearer that is no token, or a token's user. */
  const bearerUser = (req: IncomingMessage): User | 'expired' | 'none' | null => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token?.startsWith('ey')) return 'none';
    const entry = access.get(token);
    if (!entry) return null;
    if (entry.exp <= Date.now() / 1000) return 'expired';
    return byId.get(entry.userId) ?? null;
  };

  async function handle(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, payload === undefined ? headers : { 'content-type': 'application/json', ...headers });
      res.end(payload === undefined ? undefined : JSON.stringify(payload));
    };
    const fail = (status: number, code: string, message = code) => send(status, { code, message });
    if (req.headers.apikey !== PUBLIC_KEY) return fail(401, 'unauthorized', 'The apikey is not a key of this project.');
    const user = bearerUser(req);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'POST /v1/auth/signup': {
        if (fake.users.has(String(body.email))) return fail(409, 'email_exists');
        const created = makeUser(String(body.email));
        fake.users.set(String(body.email), { password: String(body.password), user: created });
        const session = fake.issue(created);
        return send(200, { user: created, session });
      }
      case 'POST /v1/auth/signin': {
        const found = fake.users.get(String(body.email));
        if (!found || found.password !== body.password) return fail(400, 'invalid_credentials', 'Wrong email or password.');
        return send(200, fake.issue(found.user));
      }
      case 'POST /v1/auth/signout': {
        if (user === 'none') return fail(401, 'unauthorized', 'Send the user access token.');
        if (!user || user === 'expired') return fail(401, 'invalid_token');
        // The session ends: its access tokens stop working at once, as on the server.
        access.delete(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
        return send(204);
      }
      case 'POST /v1/auth/refresh': {
        if (fake.refreshDelayMs) await new Promise((r) => setTimeout(r, fake.refreshDelayMs));
        const entry = refresh.get(String(body.refresh_token));
        if (!entry) return fail(401, 'invalid_refresh_token');
        // The server's own rule (a pure function), so the fake cannot drift from it.
        const state = { revoked: false, rotatedAt: entry.rotatedAt, sessionRevokedAt: null, sessionActiveAt: Date.now() };
        const decision = decideRefresh(state, Date.now(), { graceMs: REUSE_GRACE_MS, idleMs: Number.POSITIVE_INFINITY });
        if (decision.action === 'return-active' && entry.next) return send(200, entry.next);
        if (decision.action === 'revoke-family') return fail(401, 'refresh_token_reused');
        if (decision.action !== 'rotate') return fail(401, 'invalid_refresh_token');
        const next = fake.issue(byId.get(entry.userId) as User);
        entry.rotatedAt = Date.now();
        entry.next = next;
        return send(200, next);
      }
      case 'GET /v1/auth/user':
      case 'PATCH /v1/auth/user': {
        if (user === 'none') return fail(401, 'unauthorized', 'Send the user access token.');
        if (user === 'expired') return fail(401, 'token_expired');
        if (!user) return fail(401, 'invalid_token');
        if (req.method === 'GET') return send(200, user);
        const updated = { ...user, ...(body as Partial<User>), updated_at: new Date().toISOString() };
        byId.set(user.id, updated);
        return send(200, updated);
      }
      case 'POST /v1/auth/verify-email':
      case 'POST /v1/auth/reset-password': {
        const found = [...fake.users.values()].find((u) => body.token === `good-${u.user.email}`);
        return found ? send(200, { user: byId.get(found.user.id) ?? found.user }) : fail(400, 'token_invalid');
      }
      case 'POST /v1/auth/request-magic-link':
        if (body.emailRedirectTo !== undefined && !String(body.emailRedirectTo).startsWith('https://app.example.com/')) {
          return fail(400, 'redirect_not_allowed');
        }
        return send(200, {});
      case 'POST /v1/auth/resend-verification':
      case 'POST /v1/auth/forgot-password':
        return send(200, {});
      case 'POST /v1/auth/signin-magic-link':
        return body.token === 'magic' ? send(200, fake.issue(makeUser('magic@example.com'))) : fail(401, 'magic_link_invalid');
      case 'POST /v1/auth/phone/send-otp':
        return String(body.phone).startsWith('+') ? send(200, { sent: true }) : fail(400, 'invalid_phone');
      case 'POST /v1/auth/phone/verify':
        return body.code === '123456' ? send(200, fake.issue(makeUser(null, { phone: String(body.phone) }))) : fail(400, 'invalid_code');
    }
    const table = /^\/api\/v1\/db\/([^/]+)$/.exec(url.pathname)?.[1];
    if (table !== undefined) {
      if (user === 'expired') return fail(401, 'token_expired');
      if (user === null) return fail(401, 'invalid_token');
      if (table !== 'todos') return fail(404, 'table_not_found', `No table "${table}".`);
      return rest(req, url, body, send);
    }
    return fail(404, 'route_not_found');
  }

  function rest(req: IncomingMessage, url: URL, body: unknown, send: (s: number, p?: unknown, h?: Record<string, string>) => void) {
    const prefer = String(req.headers.prefer ?? '');
    let rows = fake.rows.filter((row) => [...url.searchParams].every(([k, v]) => !k.startsWith('eq.') || String(row[k.slice(3)]) === v));
    if (req.method === 'POST') {
      const items = Array.isArray(body) ? body : [body];
      const created = items.map((item, i) => ({ id: fake.rows.length + i + 1, ...(item as object) }));
      fake.rows.push(...created);
      return prefer.includes('return=minimal') ? send(201) : send(201, Array.isArray(body) ? created : created[0]);
    }
    if (req.method === 'GET') {
      const total = rows.length;
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      rows = rows.slice(offset, offset + limit);
      const range = rows.length ? `${offset}-${offset + rows.length - 1}` : '*';
      return send(200, rows, { 'content-range': `${range}/${prefer.includes('count=exact') ? total : '*'}` });
    }
    if (req.method === 'PATCH') rows = rows.map((row) => Object.assign(row, body));
    if (req.method === 'DELETE') fake.rows = fake.rows.filter((row) => !rows.includes(row));
    return prefer.includes('return=minimal') ? send(204) : send(200, rows);
  }

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = raw ? JSON.parse(raw) : {};
      fake.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search.slice(1), headers: req.headers, body });
      handle(req, res, body).catch((error) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'internal_error', message: String(error) }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
