import type { Admin } from '@plinth/shared';
import type { Db, Queryable } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, iso, isoSql, randomToken, sha256 } from '../lib/index.js';

/** What an admin password is checked and stored with: the auth area's argon2id hasher. */
export interface Hasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  dummyHash(): Promise<string>;
}

/** A console admin as the API answers (packages/shared). */
export type { Admin };

/** A console sign-in: 12 hours idle, 7 days at most (docs/api.md §4.1). */
export const ADMIN_IDLE_MS = 12 * 3600_000;
export const ADMIN_MAX_MS = 7 * 24 * 3600_000;
export const SETUP_TTL_MS = 3600_000;
const TOUCH_EVERY_MS = 60_000; // last_seen_at is written at most once a minute per session

const EMAIL = /^[^\s@\p{Cc}]+@[^\s@.\p{Cc}]+(\.[^\s@.\p{Cc}]+)+$/u;

/** Trims and lowercases an admin email, or throws 400 `invalid_email`. */
export function adminEmail(input: unknown): string {
  const email = typeof input === 'string' ? input.trim().toLowerCase() : '';
  if (email.length > 254 || !EMAIL.test(email)) throw new ApiError('invalid_email', 'The email address is not valid.');
  return email;
}

/** Admin passwords are 12 to 128 characters (counted as characters, not bytes). */
export function adminPassword(input: unknown): string {
  const n = typeof input === 'string' ? [...input].length : 0;
  if (typeof input !== 'string' || n < 12 || n > 128) {
    throw new ApiError('weak_password', 'An admin password must be 12 to 128 characters long.', { min_length: 12, max_length: 128 });
  }
  return input;
}

const ADMIN_COLUMNS = `id, email, ${isoSql('created_at')} as created_at, ${isoSql('last_sign_in_at')} as last_sign_in_at`;
// Only one first admin, whichever setup link or start gets there first.
const SETUP_LOCK = 726_354_012;

/**
 * Admins, their sessions and the setup link. Every secret (password, cookie, setup token) is
 * stored as a hash; the clock is injected so idle and maximum ages can be tested.
 * @example const admins = createAdminService({ db, clock, hasher }); const { admin, cookie } = await admins.login(email, pw, client);
 */
export function createAdminService(deps: { db: Db; clock: Clock; hasher: Hasher }) {
  const { db, clock, hasher } = deps;

  async function openSession(q: Queryable, adminId: string, client: { ip: string; userAgent: string | null }): Promise<string> {
    const raw = randomToken(32);
    const now = clock.now();
    await q.query(
      `insert into plinth.admin_sessions (hash, admin_id, user_agent, ip, created_at, last_seen_at, expires_at)
       values ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, $6::timestamptz)`,
      [sha256(raw), adminId, client.userAgent?.slice(0, 512) ?? null, client.ip, iso(now), iso(now + ADMIN_MAX_MS)],
    );
    await q.query('update plinth.admins set last_sign_in_at = $2::timestamptz where id = $1', [adminId, iso(now)]);
    return raw;
  }

  return {
    /** Whether any admin exists (a start without one prints a setup link). */
    async any(): Promise<boolean> {
      return (await db.query('select 1 from plinth.admins limit 1')).rows.length > 0;
    },

    /** Creates the admin, or sets its password when it exists (ADMIN_EMAIL/ADMIN_PASSWORD, `plinth admin create`). */
    async upsert(email: unknown, password: unknown): Promise<{ admin: Admin; created: boolean }> {
      const e = adminEmail(email);
      const hash = await hasher.hash(adminPassword(password));
      const { rows } = await db.query<Admin & { created: boolean }>(
        `insert into plinth.admins (email, password_hash, created_at, updated_at) values ($1, $2, $3::timestamptz, $3::timestamptz)
         on conflict (email) do update set password_hash = excluded.password_hash, updated_at = excluded.updated_at
         returning ${ADMIN_COLUMNS}, (xmax = 0) as created`,
        [e, hash, iso(clock.now())],
      );
      const { created, ...admin } = rows[0];
      return { admin, created: Boolean(created) };
    },

    /** Sets an existing admin's password and ends its console sessions; false when there is no such admin. */
    async setPassword(email: unknown, password: unknown): Promise<boolean> {
      const e = adminEmail(email);
      const hash = await hasher.hash(adminPassword(password));
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>(
          'update plinth.admins set password_hash = $2, updated_at = $3::timestamptz where email = $1 returning id',
          [e, hash, iso(clock.now())],
        );
        if (!rows[0]) return false;
        await tx.query('delete from plinth.admin_sessions where admin_id = $1', [rows[0].id]);
        return true;
      });
    },

    /** A fresh one-time setup token (1 hour); only its hash is stored. */
    async issueSetupToken(): Promise<string> {
      const raw = randomToken(32);
      const now = clock.now();
      await db.query('delete from plinth.admin_setup_tokens where expires_at < $1::timestamptz or used_at is not null', [iso(now)]);
      await db.query('insert into plinth.admin_setup_tokens (hash, created_at, expires_at) values ($1, $2::timestamptz, $3::timestamptz)', [
        sha256(raw),
        iso(now),
        iso(now + SETUP_TTL_MS),
      ]);
      return raw;
    },

    /**
     * The first admin from a setup link, in one transaction: the token is consumed by a
     * conditional UPDATE (two browsers racing on one link: one wins), and an advisory lock
     * makes "no admin yet" hold until the insert commits (two links racing: one admin).
     */
    async setup(input: { token: unknown; email: unknown; password: unknown }, client: { ip: string; userAgent: string | null }) {
      const email = adminEmail(input.email);
      const hash = await hasher.hash(adminPassword(input.password));
      const token = typeof input.token === 'string' && input.token.length <= 256 ? input.token : '';
      const now = iso(clock.now());
      const result = await db.transaction(async (tx) => {
        await tx.query('select pg_advisory_xact_lock($1)', [SETUP_LOCK]);
        const used = await tx.query(
          `update plinth.admin_setup_tokens set used_at = $2::timestamptz
           where hash = $1 and used_at is null and expires_at > $2::timestamptz returning hash`,
          [sha256(token), now],
        );
        if (!used.rows.length) return null;
        if ((await tx.query('select 1 from plinth.admins limit 1')).rows.length) return null;
        const { rows } = await tx.query<Admin>(
          `insert into plinth.admins (email, password_hash, created_at, updated_at) values ($1, $2, $3::timestamptz, $3::timestamptz) returning ${ADMIN_COLUMNS}`,
          [email, hash, now],
        );
        // Every other setup link dies with the first admin.
        await tx.query('delete from plinth.admin_setup_tokens');
        return { admin: rows[0], cookie: await openSession(tx, rows[0].id, client) };
      });
      if (!result) {
        throw new ApiError(
          'setup_link_invalid',
          'This setup link is invalid, expired or already used, or an admin exists already: sign in, or restart the server for a new link.',
        );
      }
      return result;
    },

    /** Checks the password (one argon2 run whether or not the email is known); null when wrong. */
    async login(email: string, password: string, client: { ip: string; userAgent: string | null }) {
      const { rows } = await db.query<{ id: string; password_hash: string }>(
        'select id, password_hash from plinth.admins where email = $1',
        [email],
      );
      const ok = await hasher.verify(rows[0]?.password_hash ?? (await hasher.dummyHash()), password);
      if (!rows[0] || !ok) return null;
      const cookie = await db.transaction((tx) => openSession(tx, rows[0].id, client));
      return { admin: (await this.byId(rows[0].id)) as Admin, cookie };
    },

    async byId(id: string): Promise<Admin | null> {
      return (await db.query<Admin>(`select ${ADMIN_COLUMNS} from plinth.admins where id = $1`, [id])).rows[0] ?? null;
    },

    /** The admin of a cookie value while its session is live (idle < 12 h, age < 7 days); touches it. */
    async resolve(raw: string): Promise<Admin | null> {
      if (raw.length < 20 || raw.length > 256) return null;
      const hash = sha256(raw);
      const now = clock.now();
      const { rows } = await db.query<Admin & { seen: number }>(
        `select a.id, a.email, ${isoSql('a.created_at')} as created_at, ${isoSql('a.last_sign_in_at')} as last_sign_in_at,
           (extract(epoch from s.last_seen_at) * 1000)::float8 as seen
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

    /** Ends one console session (logout). */
    async endSession(raw: string): Promise<void> {
      await db.query('delete from plinth.admin_sessions where hash = $1', [sha256(raw)]);
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
