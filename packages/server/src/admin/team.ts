import { type AdminInvite, type AdminRole, isAdminRole, ROLE_RIGHTS } from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db, Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, iso, isoSql, isUuid, randomToken, sha256 } from '../lib/index.js';
import { type Admin, adminEmail, adminPassword, type Hasher } from './admins.js';
import { sessionCookie } from './guard.js';
import { ADMIN_COLUMNS, type AdminSessions, type Client } from './sessions.js';

/** An invitation link lives 7 days (docs/api.md §4.1). */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;
// One owner check at a time: two owners demoting each other at once must leave one.
const OWNERS_LOCK = 726_354_013;

export const RoleBody = Type.Object({ role: Type.String({ maxLength: 32 }) }, { additionalProperties: false });
export const InviteBody = Type.Object(
  { email: Type.String({ maxLength: 320 }), role: Type.String({ maxLength: 32 }) },
  { additionalProperties: false },
);
export const AcceptBody = Type.Object(
  { token: Type.String({ maxLength: 256 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const INVITE_COLUMNS = `i.id, i.email, i.role, ${isoSql('i.created_at')} as created_at, ${isoSql('i.expires_at')} as expires_at,
  (select a.email from plinth.admins a where a.id = i.invited_by) as invited_by`;

/** Who manages the team: a console admin (by role), or the secret key, which may do what an owner may. */
export type Actor = { id: string; role: AdminRole } | { id: null; role: 'owner' };

function role(value: unknown): AdminRole {
  if (!isAdminRole(value)) {
    throw new ApiError('invalid_value', 'role must be owner, admin, developer or viewer.', [{ field: 'role', message: 'is not a role' }]);
  }
  return value;
}

/** Whether an admin of role `by` may invite (or keep an invitation of) `role`: the team's, owners only for owners. */
const mayInvite = (by: AdminRole, role: AdminRole) => ROLE_RIGHTS[by].manageAdmins && (role !== 'owner' || ROLE_RIGHTS[by].manageOwners);

const notFound = () => new ApiError('admin_not_found', 'No console admin with this id.');
const ownersOnly = () => new ApiError('forbidden', 'Only an owner (or the secret key) may make, change or remove owners.');

/**
 * The console's team (docs/api.md §4.1): admins with their roles, invitations by one-time
 * link, role changes and removals. The last owner always stays.
 * @example const team = createTeamService({ db, clock, hasher, sessions, publicUrl }); await team.invite(actor, 'dev@example.com', 'developer');
 */
export function createTeamService(deps: { db: Db; clock: Clock; hasher: Hasher; sessions: AdminSessions; publicUrl: string }) {
  const { db, clock, sessions } = deps;

  async function target(q: Queryable, id: string): Promise<Admin> {
    if (!isUuid(id)) throw notFound();
    const { rows } = await q.query<Admin>(`select ${ADMIN_COLUMNS} from plinth.admins a where a.id = $1 for update`, [id]);
    if (!rows[0]) throw notFound();
    return rows[0];
  }

  /** Refuses a change that would leave no owner: the owners are counted under a lock. */
  async function keepAnOwner(q: Queryable, leaving: Admin): Promise<void> {
    if (leaving.role !== 'owner') return;
    await q.query('select pg_advisory_xact_lock($1)', [OWNERS_LOCK]);
    const { rows } = await q.query<{ n: number }>(`select count(*)::int as n from plinth.admins where role = 'owner' and id <> $1`, [
      leaving.id,
    ]);
    if (Number(rows[0].n) === 0) throw new ApiError('last_owner', 'This is the last owner: make another admin an owner first.');
  }

  /**
   * Withdraws the pending invitations an admin sent that its role (`null`: removed) may no longer
   * send, so a removed or demoted admin's spare links die with its rights (review round 3, R11).
   */
  async function withdrawInvites(q: Queryable, inviter: string, now: AdminRole | null): Promise<void> {
    const roles = (['owner', 'admin', 'developer', 'viewer'] as const).filter((r) => !now || !mayInvite(now, r));
    if (roles.length === 0) return;
    await q.query('delete from plinth.admin_invites where invited_by = $1 and used_at is null and role = any($2::text[])', [
      inviter,
      roles,
    ]);
  }

  return {
    /** Every admin, oldest first. */
    async list(): Promise<Admin[]> {
      return (await db.query<Admin>(`select ${ADMIN_COLUMNS} from plinth.admins a order by a.created_at, a.id`)).rows;
    },

    /** Changes an admin's role; only an owner touches owners; the last owner stays. */
    async setRole(actor: Actor, id: string, next: unknown): Promise<Admin> {
      const wanted = role(next);
      return db.transaction(async (tx) => {
        const admin = await target(tx, id);
        const mayOwners = ROLE_RIGHTS[actor.role].manageOwners;
        if (!mayOwners && (admin.role === 'owner' || wanted === 'owner')) throw ownersOnly();
        if (wanted !== 'owner') await keepAnOwner(tx, admin);
        await tx.query('update plinth.admins set role = $2, updated_at = $3::timestamptz where id = $1', [id, wanted, iso(clock.now())]);
        await withdrawInvites(tx, id, wanted);
        return { ...admin, role: wanted };
      });
    },

    /** Removes an admin (their sessions end with them); only an owner removes owners; the last owner stays. */
    async remove(actor: Actor, id: string): Promise<Admin> {
      return db.transaction(async (tx) => {
        const admin = await target(tx, id);
        if (admin.role === 'owner' && !ROLE_RIGHTS[actor.role].manageOwners) throw ownersOnly();
        await keepAnOwner(tx, admin);
        await sessions.endAll(tx, id);
        await withdrawInvites(tx, id, null);
        await tx.query('delete from plinth.admins where id = $1', [id]);
        return admin;
      });
    },

    /**
     * An invitation for `email` with `role`: a one-time link (32 random bytes, only the SHA-256
     * kept, 7 days). A new invitation to the same email replaces the pending one.
     */
    async invite(actor: Actor, emailInput: unknown, roleInput: unknown): Promise<AdminInvite> {
      const email = adminEmail(emailInput);
      const wanted = role(roleInput);
      if (wanted === 'owner' && !ROLE_RIGHTS[actor.role].manageOwners) throw ownersOnly();
      const raw = randomToken(32);
      const now = clock.now();
      const invite = await db.transaction(async (tx) => {
        if ((await tx.query('select 1 from plinth.admins where email = $1', [email])).rows.length) {
          throw new ApiError('admin_exists', 'This email is a console admin already: change their role instead.');
        }
        await tx.query('delete from plinth.admin_invites where email = $1 and used_at is null', [email]);
        const { rows } = await tx.query<AdminInvite>(
          `insert into plinth.admin_invites as i (hash, email, role, invited_by, created_at, expires_at)
           values ($1, $2, $3, $4, $5::timestamptz, $6::timestamptz) returning ${INVITE_COLUMNS}`,
          [sha256(raw), email, wanted, actor.id, iso(now), iso(now + INVITE_TTL_MS)],
        );
        return rows[0];
      });
      return { ...invite, link: `${deps.publicUrl}/console/invite?token=${raw}` };
    },

    /** The invitations not yet used nor expired, newest first (without their links). */
    async invites(): Promise<AdminInvite[]> {
      const { rows } = await db.query<AdminInvite>(
        `select ${INVITE_COLUMNS} from plinth.admin_invites i where i.used_at is null and i.expires_at > $1::timestamptz
         order by i.created_at desc`,
        [iso(clock.now())],
      );
      return rows;
    },

    /** Withdraws a pending invitation; its link stops working. */
    async revokeInvite(actor: Actor, id: string): Promise<AdminInvite> {
      if (!isUuid(id)) throw new ApiError('not_found', 'No pending invitation with this id.');
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<AdminInvite>(
          `select ${INVITE_COLUMNS} from plinth.admin_invites i where i.id = $1 and i.used_at is null for update`,
          [id],
        );
        if (!rows[0]) throw new ApiError('not_found', 'No pending invitation with this id.');
        if (rows[0].role === 'owner' && !ROLE_RIGHTS[actor.role].manageOwners) throw ownersOnly();
        await tx.query('delete from plinth.admin_invites where id = $1', [id]);
        return rows[0];
      });
    },

    /**
     * The invited admin chooses a password: the link is used (a conditional UPDATE: of two
     * uses one wins), the admin made with the invited role, and signed in. The inviter must
     * still be an admin who may invite that role (its row read under a share lock, so a
     * demotion at the same moment is seen); else the invitation is withdrawn and refused.
     * An invitation of the secret key has no inviter.
     */
    async accept(input: { token: unknown; password: unknown }, client: Client): Promise<{ admin: Admin; cookie: string }> {
      const hash = await deps.hasher.hash(adminPassword(input.password));
      const token = typeof input.token === 'string' && input.token.length <= 256 ? input.token : '';
      const now = iso(clock.now());
      const made = await db.transaction(async (tx) => {
        const used = await tx.query<{ id: string; email: string; role: AdminRole; invited_by: string | null }>(
          `update plinth.admin_invites set used_at = $2::timestamptz
           where hash = $1 and used_at is null and expires_at > $2::timestamptz returning id, email, role, invited_by`,
          [sha256(token), now],
        );
        const invited = used.rows[0];
        if (!invited) return null;
        if (invited.invited_by) {
          const inviter = await tx.query<{ role: AdminRole }>('select role from plinth.admins where id = $1 for share', [
            invited.invited_by,
          ]);
          const still = inviter.rows[0];
          if (!still || !mayInvite(still.role, invited.role)) {
            await tx.query('delete from plinth.admin_invites where id = $1', [invited.id]);
            return 'withdrawn' as const;
          }
        }
        const { rows } = await tx.query<{ id: string }>(
          `insert into plinth.admins (email, password_hash, role, created_at, updated_at) values ($1, $2, $3, $4::timestamptz, $4::timestamptz)
           on conflict (email) do nothing returning id`,
          [invited.email, hash, invited.role, now],
        );
        if (!rows[0]) throw new ApiError('admin_exists', 'This email is a console admin already: sign in instead.');
        return { id: rows[0].id, cookie: await sessions.open(tx, rows[0].id, client) };
      });
      if (!made) throw new ApiError('invite_invalid', 'This invitation link is invalid, expired or already used; ask for a new one.');
      if (made === 'withdrawn') {
        throw new ApiError(
          'invite_invalid',
          'This invitation was withdrawn: the admin who sent it was removed or may no longer invite this role. Ask an owner or admin for a new one.',
        );
      }
      const { rows } = await db.query<Admin>(`select ${ADMIN_COLUMNS} from plinth.admins a where a.id = $1`, [made.id]);
      return { admin: rows[0], cookie: made.cookie };
    },
  };
}

export type TeamService = ReturnType<typeof createTeamService>;

/** The acting admin of a `team` route: the cookie's, or the secret key acting as an owner. */
export function actorOf(req: FastifyRequest): Actor {
  return req.admin ? { id: req.admin.id, role: req.admin.role } : { id: null, role: 'owner' };
}

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * Handlers of `/api/v1/admin/admins…` and `/api/v1/admin/invites…`, mounted by routes.ts.
 * @example const h = createTeamHandlers(team, false); app.get('/api/v1/admin/admins', { onRequest: guards.team }, h.list)
 */
export function createTeamHandlers(team: TeamService, secure: boolean) {
  return {
    list: () => team.list(),
    setRole: (req: FastifyRequest<{ Params: { id: string }; Body: { role: string } }>) =>
      team.setRole(actorOf(req), req.params.id, req.body.role),
    remove: (req: IdRequest) => team.remove(actorOf(req), req.params.id),
    invite: async (req: FastifyRequest<{ Body: { email: string; role: string } }>, reply: FastifyReply) => {
      reply.header('cache-control', 'no-store');
      return reply.code(201).send(await team.invite(actorOf(req), req.body.email, req.body.role));
    },
    invites: () => team.invites(),
    revokeInvite: (req: IdRequest) => team.revokeInvite(actorOf(req), req.params.id),
    accept: async (req: FastifyRequest<{ Body: { token: string; password: string } }>, reply: FastifyReply) => {
      const { admin, cookie } = await team.accept(req.body, { ip: req.ip, userAgent: req.headers['user-agent'] ?? null });
      reply.header('set-cookie', sessionCookie(cookie, secure)).header('cache-control', 'no-store');
      return { admin };
    },
  };
}
