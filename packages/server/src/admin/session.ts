import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ROLE_RIGHTS } from '@plinth/shared';
import { ApiError, CONSOLE_COOKIE, type ProjectKeys, readCookie } from '../http/index.js';
import { adminEmail, type AdminService } from './admins.js';
import { clearedCookie, sessionCookie } from './guard.js';

export const LoginBody = Type.Object(
  { email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export const SetupCheckBody = Type.Object({ token: Type.String({ maxLength: 256 }) }, { additionalProperties: false });
export const SetupBody = Type.Object(
  { token: Type.String({ maxLength: 256 }), email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);

/**
 * Failed console sign-ins, counted and refused like end-user sign-in (the auth area's limits,
 * counts of their own): per (email, IP), a higher ceiling per email from all IPs, per IP; in
 * Redis when REDIS_URL is set, so every instance counts together.
 */
export interface SigninLimits {
  /** Throws 429 `rate_limited` with Retry-After while a count is full. */
  assert(email: string, ip: string): Promise<void>;
  failed(email: string, ip: string): Promise<void>;
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
  limits: SigninLimits;
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

    /** `POST /api/v1/admin/setup/check {token}` → `{usable}`: the link is not used by asking. */
    async setupCheck(req: FastifyRequest<{ Body: { token: string } }>, reply: FastifyReply) {
      reply.header('cache-control', 'no-store');
      return { usable: await admins.setupUsable(req.body.token) };
    },

    /** 400 invalid_credentials alike for an unknown email and a wrong password, after one argon2 run either way. */
    async login(req: FastifyRequest<{ Body: { email: string; password: string } }>, reply: FastifyReply) {
      let email: string;
      try {
        email = adminEmail(req.body.email);
      } catch {
        email = req.body.email.trim().toLowerCase().slice(0, 320);
      }
      await limits.assert(email, req.ip);
      const found = await admins.login(email, req.body.password, client(req));
      if (!found) {
        await limits.failed(email, req.ip);
        throw new ApiError('invalid_credentials', 'The email or password is wrong.');
      }
      reply.header('set-cookie', sessionCookie(found.cookie, secure)).header('cache-control', 'no-store');
      return { admin: found.admin };
    },

    async logout(req: FastifyRequest, reply: FastifyReply) {
      const raw = readCookie(req.headers.cookie, CONSOLE_COOKIE);
      if (raw) await admins.endSession(raw);
      reply.header('set-cookie', clearedCookie(secure)).code(204);
    },

    me: async (req: FastifyRequest) => ({ admin: req.admin }),

    /**
     * The project keys for the console's overview and try-it; never cached by the browser. A
     * role without the secret key (developer, viewer) gets `secret_key: null`.
     */
    keys: async (req: FastifyRequest, reply: FastifyReply) => {
      reply.header('cache-control', 'no-store');
      const secret = req.admin && ROLE_RIGHTS[req.admin.role].secretKey ? deps.keys.secretKey : null;
      return { public_key: deps.keys.publicKey, secret_key: secret };
    },
  };
}
