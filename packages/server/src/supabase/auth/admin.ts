import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkPassword, checkUserData, findUserClaims, normalizeEmail, normalizePhone } from '../../auth/index.js';
import { ApiError, fromDbError } from '../../http/index.js';
import { isUuid } from '../../lib/index.js';
import { GoTrueError } from './errors.js';
import type { FaceDeps } from './routes.js';
import { toGoTrueFactor, toGoTrueUser } from './shapes.js';

type Body = Record<string, unknown>;

const notFound = () => new ApiError('user_not_found', 'User not found');

function conflict(err: unknown): never {
  throw fromDbError(err, {
    constraints: {
      users_email_key: ['email_exists', 'A user with this email address has already been registered'],
      users_phone_key: ['phone_exists', 'A user with this phone number has already been registered'],
    },
  });
}

/**
 * GoTrue's `app_metadata` of the admin API, checked as user data is (an object, its size and
 * depth): kept in auth.users.raw_app_meta_data beside the derived `provider` and `providers`.
 */
function appMetadataOf(v: unknown): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  try {
    return checkUserData(v);
  } catch (err) {
    if (err instanceof ApiError) throw new GoTrueError(400, 'validation_failed', err.message.replace(/^data /, 'app_metadata '));
    throw err;
  }
}

function bodyOf(req: FastifyRequest): Body {
  const b = req.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Body) : {};
}

/**
 * GoTrue's admin API (`/auth/v1/admin/users…`) with the secret key, on auth's accounts: the same
 * writes as the console's user administration (admin/users.ts), in GoTrue's fields.
 */
export function createAdminHandlers(deps: FaceDeps) {
  const { auth, db, settings, clock } = deps;
  const { accounts, services: s } = auth;

  async function userOut(id: string) {
    const user = await accounts.findUser(db, id);
    if (!user) throw notFound();
    const [claims, { factors }] = await Promise.all([findUserClaims(db, id), s.mfa.list(id)]);
    return toGoTrueUser(user, { claims, factors });
  }

  const idOf = (req: FastifyRequest) => {
    const id = (req.params as { id?: string }).id ?? '';
    if (!isUuid(id)) throw notFound();
    return id;
  };

  const hashOf = async (password: unknown) =>
    password === undefined ? null : auth.hasher.hash(checkPassword(password, settings.auth().min_password_length));

  return {
    /** GET /admin/users?page=&per_page=: newest first, `total` in X-Total-Count, pages in Link. */
    async list(req: FastifyRequest, reply: FastifyReply) {
      const q = req.query as Record<string, string | undefined>;
      // auth-js sends `page=&per_page=` when none is given: empty is the default.
      const page = Number(q.page || '1');
      const perPage = Number(q.per_page || '50');
      if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1 || perPage > 1000) {
        throw new GoTrueError(400, 'validation_failed', 'page must be a positive integer and per_page one from 1 to 1000');
      }
      const { rows } = await db.query<{ id: string }>('select id from auth.users order by created_at desc, id limit $1 offset $2', [
        perPage,
        (page - 1) * perPage,
      ]);
      const total = Number((await db.query<{ n: string }>('select count(*) as n from auth.users')).rows[0]?.n ?? 0);
      const last = Math.max(1, Math.ceil(total / perPage));
      const links: string[] = [];
      if (page < last) links.push(`</auth/v1/admin/users?page=${page + 1}&per_page=${perPage}>; rel="next"`);
      links.push(`</auth/v1/admin/users?page=${last}&per_page=${perPage}>; rel="last"`);
      reply.header('x-total-count', String(total)).header('link', links.join(', '));
      return { users: await Promise.all(rows.map((r) => userOut(r.id))), aud: 'authenticated' };
    },

    get: async (req: FastifyRequest) => userOut(idOf(req)),

    /** POST /admin/users: email and/or phone, password, email_confirm, phone (confirmed by the admin), user_metadata. */
    async create(req: FastifyRequest) {
      const b = bodyOf(req);
      const app = appMetadataOf(b.app_metadata);
      if (b.email === undefined && b.phone === undefined)
        throw new GoTrueError(400, 'validation_failed', 'Unable to validate email address: invalid format');
      const email = b.email === undefined ? null : normalizeEmail(b.email);
      const phone = b.phone === undefined ? null : normalizePhone(b.phone);
      const data = b.user_metadata && typeof b.user_metadata === 'object' ? (b.user_metadata as Record<string, unknown>) : undefined;
      const hash = await hashOf(b.password);
      const now = clock.now();
      const id = await db
        .transaction(async (tx) => {
          const userId = await accounts.createUser(tx, { email, emailConfirmed: b.email_confirm === true, data }, now);
          if (!userId)
            throw new ApiError(email ? 'email_exists' : 'phone_exists', 'A user with this email address has already been registered');
          if (phone) await accounts.setPhone(tx, userId, phone, now);
          if (hash) await accounts.setPassword(tx, userId, hash, now);
          if (email) await accounts.linkEmail(tx, userId, email, now);
          if (app) await accounts.mergeAppData(tx, userId, app, now);
          return userId;
        })
        .catch(conflict);
      return userOut(id);
    },

    /** PUT /admin/users/{id}: email, phone, password (ends the user's sessions), email_confirm, user_metadata (merged), ban_duration. */
    async update(req: FastifyRequest) {
      const id = idOf(req);
      const b = bodyOf(req);
      const app = appMetadataOf(b.app_metadata);
      const current = await accounts.findUser(db, id);
      if (!current) throw notFound();
      const email = b.email === undefined ? undefined : normalizeEmail(b.email);
      const phone = b.phone === undefined ? undefined : b.phone === '' ? null : normalizePhone(b.phone);
      const hash = await hashOf(b.password);
      const ban = banUntil(b.ban_duration);
      const now = clock.now();
      await db
        .transaction(async (tx) => {
          if (email !== undefined && email !== current.email) await accounts.setEmail(tx, id, email, b.email_confirm === true, now);
          else if (typeof b.email_confirm === 'boolean') await accounts.setEmailConfirmed(tx, id, b.email_confirm, now);
          if (phone !== undefined && phone !== current.phone) await accounts.setPhone(tx, id, phone, now);
          if (b.user_metadata && typeof b.user_metadata === 'object') {
            await accounts.mergeUserData(tx, id, b.user_metadata as Record<string, unknown>, now);
          }
          if (app) await accounts.mergeAppData(tx, id, app, now);
          if (ban !== undefined) await accounts.setBan(tx, id, ban, now);
          if (hash) {
            await accounts.setPassword(tx, id, hash, now);
            await accounts.revokeSessions(tx, id, {}, now);
          }
        })
        .catch(conflict);
      return userOut(id);
    },

    /** DELETE /admin/users/{id}: the user and everything attached (sessions end at once). */
    async remove(req: FastifyRequest) {
      const id = idOf(req);
      const out = await userOut(id);
      await db.transaction((tx) => accounts.deleteUser(tx, id, clock.now()));
      return out;
    },

    /**
     * POST /admin/generate_link: a `signup`, `invite`, `magiclink`, `recovery` or email-change link made instead
     * of mailed (auth's adminLinks). `action_link` is GoTrue's: this face's GET /verify, which
     * redirects to `redirect_to` (an allowed URL; else the link setting's page) with the session;
     * `hashed_token` is what `verifyOtp({ token_hash, type })` takes, `email_otp` the same token's
     * 6-digit code (`verifyOtp({ email, token, type })`).
     */
    async generateLink(req: FastifyRequest) {
      const b = bodyOf(req);
      // GoTrue's two email-change links are one here: the link to the new address, which proves it
      // and moves the user there (as the user's own change; no second link to the current address).
      const type = b.type === 'email_change_current' || b.type === 'email_change_new' ? 'email_change' : b.type;
      if (type !== 'signup' && type !== 'invite' && type !== 'magiclink' && type !== 'recovery' && type !== 'email_change') {
        throw new GoTrueError(
          400,
          'validation_failed',
          'type must be signup, invite, magiclink, recovery, email_change_current or email_change_new',
        );
      }
      if (type === 'email_change' && (typeof b.new_email !== 'string' || !b.new_email))
        throw new GoTrueError(400, 'validation_failed', 'The new email address is required for an email change link');
      // A redirect_to the project does not allow is dropped (GoTrue falls back to its site URL):
      // the link's page, else the first allowed redirect URL (a Supabase folder's site_url).
      // auth-js sends it as `?redirect_to=` (and `redirectTo` in the body); older clients in the body.
      const query = (req.query as Record<string, unknown> | undefined)?.redirect_to;
      const raw = typeof query === 'string' && query ? query : b.redirect_to;
      const asked = typeof raw === 'string' && raw ? raw : undefined;
      const to = asked !== undefined && settings.isRedirectAllowed(asked) ? asked : undefined;
      const a = settings.auth();
      const page =
        to ??
        (type === 'magiclink' ? a.magic_link_url : type === 'recovery' ? a.password_reset_url : a.email_verification_url) ??
        a.allowed_redirect_urls[0];
      const { userId, token, code } = await auth.adminLinks.generate({
        type,
        email: b.email,
        password: b.password,
        data: b.data,
        newEmail: b.new_email,
      });
      const action = new URL('/auth/v1/verify', deps.publicUrl);
      action.searchParams.set('token', token);
      action.searchParams.set('type', type);
      if (page) action.searchParams.set('redirect_to', page);
      return {
        ...(await userOut(userId)),
        ...(type === 'email_change' ? { new_email: normalizeEmail(b.new_email) } : {}),
        action_link: action.toString(),
        email_otp: code,
        hashed_token: token,
        redirect_to: page ?? '',
        verification_type: type,
      };
    },

    /** POST /invite: the user made and mailed a link (auth's adminLinks.invite); answers the user. */
    async invite(req: FastifyRequest) {
      const b = bodyOf(req);
      const q = (req.query as Record<string, string | undefined>).redirect_to;
      // Not allowed: dropped for the project's verification page, as generate_link does.
      const to = q && settings.isRedirectAllowed(q) ? q : undefined;
      const a = settings.auth();
      // Without a verification page, GoTrue's own link: this face's GET /verify, which lands on
      // the first allowed redirect URL (a Supabase folder's site_url) with the session.
      let page = to || a.email_verification_url;
      if (!page && a.allowed_redirect_urls[0]) {
        const verify = new URL('/auth/v1/verify', deps.publicUrl);
        verify.searchParams.set('type', 'invite');
        verify.searchParams.set('redirect_to', a.allowed_redirect_urls[0]);
        page = verify.toString();
      }
      const { userId } = await auth.adminLinks.invite({ email: b.email, data: b.data, page });
      // `invited_at`: the invitation's time, in this answer (Plinth keeps no such column).
      return { ...(await userOut(userId)), invited_at: new Date(clock.now()).toISOString() };
    },

    factors: async (req: FastifyRequest) => {
      const id = idOf(req);
      if (!(await accounts.findUser(db, id))) throw notFound();
      return (await s.mfa.list(id)).factors.map(toGoTrueFactor);
    },

    /** DELETE /admin/users/{id}/factors/{factorId}: as the user's own unenroll (sessions drop to aal1 when it was the last). */
    async removeFactor(req: FastifyRequest) {
      const id = idOf(req);
      const factorId = (req.params as { factorId?: string }).factorId ?? '';
      await s.mfa.unenroll({ userId: id, sessionId: null, aal: 'aal2' }, factorId);
      return { id: factorId };
    },
  };

  /** GoTrue's `ban_duration` ("24h", "none") as the ban's end, null to lift it, undefined when not sent. */
  function banUntil(v: unknown): string | null | undefined {
    if (v === undefined) return undefined;
    if (v === 'none') return null;
    const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v) : null;
    if (!m) throw new GoTrueError(400, 'validation_failed', 'invalid format for ban duration: use a Go duration such as "24h", or "none"');
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    return new Date(clock.now() + Number(m[1]) * unit).toISOString();
  }
}

export type AdminHandlers = ReturnType<typeof createAdminHandlers>;
