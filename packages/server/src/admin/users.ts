import type { EndUser, EndUserDetail, EndUserFactors, EndUserSession } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Accounts, checkPassword, normalizeEmail, normalizePhone, USER_COLUMNS } from '../auth/index.js';
import type { Db, Queryable } from '../db/index.js';
import { ApiError, fromDbError } from '../http/index.js';
import { type Clock, iso, isoSql, isUuid } from '../lib/index.js';
import type { Hasher } from './admins.js';

// End-user administration (docs/api.md §4.2). It reads auth.* by full name (an app's own
// public.users never shadows it); every write goes through the auth area's accounts module,
// the one home of the rules about users, identities, passwords and sessions.

/** What only the auth area can do. */
export interface AccountHooks {
  /** Every write to users, passwords, identities and sessions. */
  accounts: Accounts;
  /** Queues a verification mail to `email` as POST /v1/auth/resend-verification would (429 when over the limit). */
  resendVerification(email: string): Promise<void>;
  /** The user's second factors and passkeys: listed, reset (factors and recovery codes), one passkey removed. */
  secondFactors: {
    list(userId: string): Promise<EndUserFactors>;
    reset(userId: string): Promise<number>;
    removePasskey(userId: string, passkeyId: string): Promise<boolean>;
  };
}

export interface UserAdminDeps {
  db: Db;
  clock: Clock;
  hasher: Pick<Hasher, 'hash'>;
  hooks: AccountHooks;
  /** The project's current minimum password length (auth settings). */
  minPasswordLength: () => number;
  /** Whether email_verification_url is set (a verification mail needs the app page). */
  verificationUrlSet: () => boolean;
}

/** The user of the auth API, its ban, and whether it has a second factor and passkeys. */
const USER = `${USER_COLUMNS}, ${isoSql('u.banned_until')} as banned_until,
  exists (select 1 from auth.mfa_factors f where f.user_id = u.id and f.status = 'verified') as mfa_enabled,
  (select count(*)::int from auth.passkeys k where k.user_id = u.id) as passkeys`;

export const UserListParams = Type.Object(
  { search: Type.Optional(Type.String({ maxLength: 320 })), limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
export const UserCreateBody = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 320 })),
    phone: Type.Optional(Type.String({ maxLength: 32 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    email_confirmed: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const UserPatchBody = Type.Object(
  {
    email: Type.Optional(Nullable(Type.String({ maxLength: 320 }))),
    phone: Type.Optional(Nullable(Type.String({ maxLength: 32 }))),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    email_confirmed: Type.Optional(Type.Boolean()),
    banned_until: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  },
  { additionalProperties: false },
);

export const UserIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const PasskeyParams = Type.Object({ id: Type.String({ maxLength: 64 }), passkey: Type.String({ maxLength: 64 }) });

const toUser = (r: EndUser): EndUser => ({ ...r, passkeys: Number(r.passkeys) });

function int(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value)) throw new ApiError('invalid_parameter', `${name} must be a non-negative integer.`);
  return Math.min(Number(value), max);
}

function bannedUntil(value: string | null): string | null {
  if (value === null) return null;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) {
    throw new ApiError('invalid_value', 'banned_until must be an ISO 8601 time (2030-01-01T00:00:00Z) or null.', [
      { field: 'banned_until', message: 'must be an ISO 8601 time or null' },
    ]);
  }
  return iso(ms);
}

/** A taken email or phone as the client's error; any other database error as everywhere (db/errors.ts). */
function conflict(err: unknown): never {
  throw fromDbError(err, {
    constraints: {
      users_email_key: ['email_exists', 'Another user has this email address.'],
      users_phone_key: ['phone_exists', 'Another user has this phone number.'],
    },
  });
}

const notFound = () => new ApiError('user_not_found', 'No user with this id.');

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * The handlers of `/api/v1/users…` (docs/api.md §4.2), mounted by routes.ts behind the management guard.
 * @example const users = createUserAdmin(deps); app.get('/api/v1/users', { onRequest: guards.manage }, users.list)
 */
export function createUserAdmin(deps: UserAdminDeps) {
  const { db, clock } = deps;
  const { accounts } = deps.hooks;

  async function find(q: Queryable, id: string) {
    if (!isUuid(id)) throw notFound();
    const { rows } = await q.query<EndUser>(`select ${USER} from auth.users u where u.id = $1`, [id]);
    if (!rows[0]) throw notFound();
    return toUser(rows[0]);
  }

  return {
    /** Newest first; `search` matches inside the email or the phone; `Content-Range` carries the total. */
    async list(req: FastifyRequest<{ Querystring: { search?: string; limit?: string; offset?: string } }>, reply: FastifyReply) {
      const limit = int(req.query.limit, 'limit', 50, 1000);
      const offset = int(req.query.offset, 'offset', 0, 1_000_000_000);
      const search = req.query.search?.trim().toLowerCase() ?? '';
      const params: unknown[] = [limit, offset];
      let where = '';
      if (search) {
        params.push(`%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
        where = `where u.email like $3 or u.phone like $3`;
      }
      const [page, count] = await Promise.all([
        db.query<EndUser>(`select ${USER} from auth.users u ${where} order by u.created_at desc, u.id desc limit $1 offset $2`, params),
        db.query<{ n: number }>(`select count(*)::int as n from auth.users u ${where.replace(/\$3/g, '$1')}`, params.slice(2)),
      ]);
      const total = Number(count.rows[0].n);
      const rows = page.rows.map(toUser);
      reply.header('content-range', rows.length ? `${offset}-${offset + rows.length - 1}/${total}` : `*/${total}`);
      return rows;
    },

    /** The user with identities and open sessions (agent, IP, times). */
    async get(req: IdRequest): Promise<EndUserDetail> {
      const user = await find(db, req.params.id);
      const { rows } = await db.query<EndUserSession>(
        `select id, user_agent, ip, ${isoSql('created_at')} as created_at, ${isoSql('refreshed_at')} as refreshed_at
         from auth.sessions where user_id = $1 and revoked_at is null order by refreshed_at desc limit 100`,
        [user.id],
      );
      return { ...user, sessions: rows };
    },

    async create(
      req: FastifyRequest<{ Body: { email?: string; phone?: string; password?: string; email_confirmed?: boolean } }>,
      reply: FastifyReply,
    ) {
      const b = req.body;
      if (b.email === undefined && b.phone === undefined) throw new ApiError('invalid_request', 'Give an email or a phone number.');
      const e = b.email === undefined ? null : normalizeEmail(b.email);
      const p = b.phone === undefined ? null : normalizePhone(b.phone);
      const hash = b.password === undefined ? null : await deps.hasher.hash(checkPassword(b.password, deps.minPasswordLength()));
      const now = clock.now();
      const id = await db
        .transaction(async (tx) => {
          const userId = await accounts.createUser(tx, { email: e, emailConfirmed: b.email_confirmed === true }, now);
          if (!userId) throw new ApiError(e ? 'email_exists' : 'phone_exists', 'Another user has this email address or phone number.');
          if (p) await accounts.setPhone(tx, userId, p, now);
          if (hash) await accounts.setPassword(tx, userId, hash, now);
          if (e) await accounts.linkEmail(tx, userId, e, now);
          return userId;
        })
        .catch(conflict);
      reply.code(201);
      return find(db, id);
    },

    /** Changes email, phone, password, confirmation or ban. A new password ends the user's sessions. */
    async update(
      req: FastifyRequest<{
        Params: { id: string };
        Body: { email?: string | null; phone?: string | null; password?: string; email_confirmed?: boolean; banned_until?: string | null };
      }>,
    ) {
      const b = req.body;
      const current = await find(db, req.params.id);
      const now = clock.now();
      const nextEmail = b.email === undefined ? undefined : b.email === null ? null : normalizeEmail(b.email);
      const nextPhone = b.phone === undefined ? undefined : b.phone === null ? null : normalizePhone(b.phone);
      const ban = b.banned_until === undefined ? undefined : bannedUntil(b.banned_until);
      const hash = b.password === undefined ? null : await deps.hasher.hash(checkPassword(b.password, deps.minPasswordLength()));
      await db
        .transaction(async (tx) => {
          if (nextEmail !== undefined && nextEmail !== current.email) {
            await accounts.setEmail(tx, current.id, nextEmail, b.email_confirmed === true, now);
          } else if (b.email_confirmed !== undefined) {
            await accounts.setEmailConfirmed(tx, current.id, b.email_confirmed, now);
          }
          if (nextPhone !== undefined) await accounts.setPhone(tx, current.id, nextPhone, now);
          if (ban !== undefined) await accounts.setBan(tx, current.id, ban, now);
          if (hash) {
            await accounts.setPassword(tx, current.id, hash, now);
            await accounts.revokeSessions(tx, current.id, {}, now);
          }
        })
        .catch(conflict);
      return find(db, current.id);
    },

    /** Deletes the user; sessions, refresh tokens, identities, passwords and links go with it (cascade). */
    async remove(req: IdRequest) {
      const user = await find(db, req.params.id);
      await db.transaction((tx) => accounts.deleteUser(tx, user.id, clock.now()));
      return user;
    },

    /** Ends every session of the user: its refresh tokens stop working at once. */
    async signOut(req: IdRequest) {
      const user = await find(db, req.params.id);
      const revoked = await db.transaction((tx) => accounts.revokeSessions(tx, user.id, {}, clock.now()));
      return { revoked };
    },

    /** The user's second factors and passkeys (never their secrets). */
    async factors(req: IdRequest): Promise<EndUserFactors> {
      const user = await find(db, req.params.id);
      return deps.hooks.secondFactors.list(user.id);
    },

    /** An admin reset: every factor and recovery code goes; the user's sessions drop to aal1 at once. */
    async resetFactors(req: IdRequest) {
      const user = await find(db, req.params.id);
      return { removed: await deps.hooks.secondFactors.reset(user.id) };
    },

    /** Removes one passkey of the user. */
    async removePasskey(req: FastifyRequest<{ Params: { id: string; passkey: string } }>) {
      const user = await find(db, req.params.id);
      if (!isUuid(req.params.passkey) || !(await deps.hooks.secondFactors.removePasskey(user.id, req.params.passkey)))
        throw new ApiError('passkey_not_found', 'No passkey with this id belongs to the user.');
      return { id: req.params.passkey };
    },

    async resendVerification(req: IdRequest) {
      const user = await find(db, req.params.id);
      if (!user.email || user.email_confirmed_at) {
        throw new ApiError(
          'email_already_confirmed',
          user.email ? 'This email address is already confirmed.' : 'This user has no email address.',
        );
      }
      if (!deps.verificationUrlSet()) {
        throw new ApiError('flow_url_missing', 'Set email_verification_url in the auth settings first: the mail links to that page.');
      }
      await deps.hooks.resendVerification(user.email);
      return { sent: true, to: user.email };
    },
  };
}
