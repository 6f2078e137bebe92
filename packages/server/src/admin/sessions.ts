import type { Admin } from '@plinth/shared';
import type { Db, Queryable } from '../db/index.js';
import { type Clock, iso, isoSql, randomToken, sha256 } from '../lib/index.js';

/** A console sign-in: 12 hours idle, 7 days at most (docs/api.md §4.1). */
export const ADMIN_IDLE_MS = 12 * 3600_000;
export const ADMIN_MAX_MS = 7 * 24 * 3600_000;
const TOUCH_EVERY_MS = 60_000; // last_seen_at is written at most once a minute per session

/** An admin as the API shows it, from `plinth.admins` aliased `a`. */
export const ADMIN_COLUMNS = `a.id, a.email, a.role, ${isoSql('a.created_at')} as created_at, ${isoSql('a.last_sign_in_at')} as last_sign_in_at`;

export interface Client {
  ip: string;
  userAgent: string | null;
}

/**
 * The console's sessions (`plinth.admin_sessions`): the cookie holds 32 random bytes, the table
 * their SHA-256. Built before the HTTP guards, which look cookies up through `resolve` (the one
 * place a request's caller is worked out is http/guards.ts).
 * @example const sessions = createAdminSessions({ db, clock }); const admin = await sessions.resolve(cookieValue);
 */
export function createAdminSessions(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** The admin of a cookie value while its session is live (idle < 12 h, age < 7 days); touches it. */
    async resolve(raw: string): Promise<Admin | null> {
      if (raw.length < 20 || raw.length > 256) return null;
      const hash = sha256(raw);
      const now = clock.now();
      const { rows } = await db.query<Admin & { seen: number }>(
        `select ${ADMIN_COLUMNS}, (extract(epoch from s.last_seen_at) * 1000)::float8 as seen
         from plinth.admin_sessions s join plinth.admins a on a.id = s.admin_id
         where s.hash = $1 and s.expires_at > $2::timestamptz and s.last_seen_at > $3::timestamptz`,
        [hash, iso(now), iso(now - ADMIN_IDLE_MS)],
      );
      if (!rows[0]) return null;
      const { seen, ...admin } = rows[0];
      if (now - Number(seen) > TOUCH_EVERY_MS) {
        await db.query('update plinth.admin_sessions set last_seen_at = $2::timestamptz where hash = $1', [hash, iso(now)]);
      }
      return admin;
    },

    /** Opens a session for an admin whose password (or link) was just proven; the cookie's value. */
    async open(q: Queryable, adminId: string, client: Client): Promise<string> {
      const raw = randomToken(32);
      const now = clock.now();
      await q.query(
        `insert into plinth.admin_sessions (hash, admin_id, user_agent, ip, created_at, last_seen_at, expires_at)
         values ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, $6::timestamptz)`,
        [sha256(raw), adminId, client.userAgent?.slice(0, 512) ?? null, client.ip, iso(now), iso(now + ADMIN_MAX_MS)],
      );
      await q.query('update plinth.admins set last_sign_in_at = $2::timestamptz where id = $1', [adminId, iso(now)]);
      return raw;
    },

    /** Ends one session (logout). */
    async end(raw: string): Promise<void> {
      await db.query('delete from plinth.admin_sessions where hash = $1', [sha256(raw)]);
    },

    /** Ends every session of an admin (a new password, a removal). */
    async endAll(q: Queryable, adminId: string): Promise<void> {
      await q.query('delete from plinth.admin_sessions where admin_id = $1', [adminId]);
    },
  };
}

export type AdminSessions = ReturnType<typeof createAdminSessions>;
