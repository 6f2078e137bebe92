import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ProjectKeys, readCookie } from '../http/index.js';
import { type Clock, sha256 } from '../lib/index.js';
import { adminEmail, type AdminService } from './admins.js';
import { COOKIE, clearedCookie, sessionCookie } from './guard.js';

export const LoginBody = Type.Object(
  { email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export const SetupBody = Type.Object(
  { token: Type.String({ maxLength: 256 }), email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);

export interface Rule {
  max: number;
  windowSeconds: number;
}

/**
 * Failed console sign-ins per email and per IP in fixed windows, counted for unknown emails
 * exactly like known ones (the same rules as end-user sign-in, AUTH_RATE_SIGNIN_*). Admins
 * are few and sign in rarely: counters are per instance.
 */
export function createFailureCounter(clock: Clock, rules: { perEmail: Rule; perIp: Rule }) {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const peek = (key: string) => {
    const w = windows.get(key);
    return w && w.resetAt > clock.now() ? w : null;
  };
  return {
    /** Throws 429 with Retry-After while either counter is full. */
    assert(email: string, ip: string) {
      for (const [key, rule] of [
        [`e:${sha256(email)}`, rules.perEmail],
        [`i:${ip}`, rules.perIp],
      ] as const) {
        const w = peek(key);
        if (w && w.count >= rule.max) {
          const seconds = Math.max(1, Math.ceil((w.resetAt - clock.now()) / 1000));
          throw new ApiError('rate_limited', `Too many failed sign-ins; try again in ${seconds} s.`, undefined, {
            headers: { 'retry-after': String(seconds) },
          });
        }
      }
    },
    failed(email: string, ip: string) {
      if (windows.size > 100_000) windows.clear(); // a flood of distinct keys must not grow memory forever
      for (const [key, rule] of [
        [`e:${sha256(email)}`, rules.perEmail],
        [`i:${ip}`, rules.perIp],
      ] as const) {
        const w = peek(key) ?? { count: 0, resetAt: clock.now() + rule.windowSeconds * 1000 };
        w.count++;
        windows.set(key, w);
      }
    },
  };
}

const client = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] ?? null });

/**
 * Console sign-in: setup (first admin from the link), login, logout, me, keys (docs/api.md §4.1).
 * Mounted by routes.ts.
 * @example const h = createAdminSessionHandlers({ admins, keys, limits, secure: false }); app.post('/api/v1/admin/login', h.login)
 */
export function createAdminSessionHandlers(deps: {
  admins: AdminService;
  keys: ProjectKeys;
  limits: ReturnType<typeof createFailureCounter>;
  /** Whether the public URL is https (the cookie is then Secure). */
  secure: boolean;
}) {
  const { admins, limits, secure } = deps;
  return {
    async setup(req: FastifyRequest<{ Body: { token: string; email: string; password: string } }>, reply: FastifyReply) {
      const { admin, cookie } = await admins.setup(req.body, client(req));
      reply.header('set-cookie', sessionCookie(cookie, secure)).header('cache-control', 'no-store');
      return { admin };
    },

    /** 400 invalid_credentials alike for an unknown email and a wrong password, after one argon2 run either way. */
    async login(req: FastifyRequest<{ Body: { email: string; password: string } }>, reply: FastifyReply) {
      let email: string;
      try {
        email = adminEmail(req.body.email);
      } catch {
        email = req.body.email.trim().toLowerCase().slice(0, 320);
      }
      limits.assert(email, req.ip);
      const found = await admins.login(email, req.body.password, client(req));
      if (!found) {
        limits.failed(email, req.ip);
        throw new ApiError('invalid_credentials', 'The email or password is wrong.');
      }
      reply.header('set-cookie', sessionCookie(found.cookie, secure)).header('cache-control', 'no-store');
      return { admin: found.admin };
    },

    async logout(req: FastifyRequest, reply: FastifyReply) {
      const raw = readCookie(req.headers.cookie, COOKIE);
      if (raw) await admins.endSession(raw);
      reply.header('set-cookie', clearedCookie(secure)).code(204);
    },

    me: async (req: FastifyRequest) => ({ admin: req.admin }),

    /** The project keys for the console's overview and try-it; never cached by the browser. */
    keys: async (_req: FastifyRequest, reply: FastifyReply) => {
      reply.header('cache-control', 'no-store');
      return { public_key: deps.keys.publicKey, secret_key: deps.keys.secretKey };
    },
  };
}
