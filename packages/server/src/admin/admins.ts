import type { Admin, AdminRole } from '@plinth/shared';
import type { Db } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { type Clock, iso, randomToken, sha256 } from '../lib/index.js';
import { ADMIN_COLUMNS, type AdminSessions, type Client } from './sessions.js';

/** What an admin password is checked and stored with: the auth area's argon2id hasher. */
export interface Hasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  dummyHash(): Promise<string>;
}

/** A console admin as the API answers (packages/shared). */
export type { Admin };

/** The setup link of a first start lives an hour. */
export const SETUP_TTL_MS = 3600_000;

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

// Only one first admin, whichever setup link or start gets there first.
const SETUP_LOCK = 726_354_012;

/**
 * Admins, their passwords and the setup link. Every secret (password, cookie, setup token) is
 * stored as a hash; the clock is injected so idle and maximum ages can be tested.
 * @example const admins = createAdminService({ db, clock, hasher, sessions }); const { admin, cookie } = await admins.login(email, pw, client);
 */
export function createAdminService(deps: { db: Db; clock: Clock; hasher: Hasher; sessions: AdminSessions }) {
  const { db, clock, hasher, sessions } = deps;
  const byId = async (id: string): Promise<Admin | null> =>
    (await db.query<Admin>(`select ${ADMIN_COLUMNS} from plinth.admins a where a.id = $1`, [id])).rows[0] ?? null;

  return {
    /** Whether any admin exists (a start without one prints a setup link). */
    async any(): Promise<boolean> {
      return (await db.query('select 1 from plinth.admins limit 1')).rows.length > 0;
    },

    /**
     * Creates the admin (an owner unless `role` says otherwise), or sets its password when it
     * exists (ADMIN_EMAIL/ADMIN_PASSWORD at start, `plinth admin create`). A password that
     * changes ends the admin's console sessions, as `set-password` does; the same password
     * again (every start with ADMIN_PASSWORD) changes nothing.
     */
    async upsert(email: unknown, password: unknown, role: AdminRole = 'owner'): Promise<{ admin: Admin; created: boolean }> {
      const e = adminEmail(email);
      const pw = adminPassword(password);
      const { rows: found } = await db.query<{ id: string; password_hash: string }>(
        'select id, password_hash from plinth.admins where email = $1',
        [e],
      );
      if (found[0] && (await hasher.verify(found[0].password_hash, pw))) {
        return { admin: (await byId(found[0].id)) as Admin, created: false };
      }
      const hash = await hasher.hash(pw);
      const id = await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string; created: boolean }>(
          `insert into plinth.admins (email, password_hash, role, created_at, updated_at) values ($1, $2, $4, $3::timestamptz, $3::timestamptz)
           on conflict (email) do update set password_hash = excluded.password_hash, updated_at = excluded.updated_at
           returning id, (xmax = 0) as created`,
          [e, hash, iso(clock.now()), role],
        );
        if (!rows[0].created) await sessions.endAll(tx, rows[0].id);
        return rows[0];
      });
      return { admin: (await byId(id.id)) as Admin, created: Boolean(id.created) };
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
        await sessions.endAll(tx, rows[0].id);
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
     * Whether a setup link would make the first admin now (unused, unexpired, no admin yet),
     * without using it: the setup page says a used link is used as it opens. It tells no more
     * than a setup attempt does (the same answer for an unknown, used or expired token and for
     * "an admin exists"), and a token is 32 random bytes: nothing to guess.
     */
    async setupUsable(input: unknown): Promise<boolean> {
      const token = typeof input === 'string' && input.length <= 256 ? input : '';
      const { rows } = await db.query(
        `select 1 from plinth.admin_setup_tokens where hash = $1 and used_at is null and expires_at > $2::timestamptz
         and not exists (select 1 from plinth.admins)`,
        [sha256(token), iso(clock.now())],
      );
      return rows.length > 0;
    },

    /**
     * The first admin from a setup link, in one transaction: the token is consumed by a
     * conditional UPDATE (two browsers racing on one link: one wins), and an advisory lock
     * makes "no admin yet" hold until the insert commits (two links racing: one admin).
     */
    async setup(input: { token: unknown; email: unknown; password: unknown }, client: Client) {
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
        const { rows } = await tx.query<{ id: string }>(
          `insert into plinth.admins (email, password_hash, role, created_at, updated_at) values ($1, $2, 'owner', $3::timestamptz, $3::timestamptz) returning id`,
          [email, hash, now],
        );
        // Every other setup link dies with the first admin.
        await tx.query('delete from plinth.admin_setup_tokens');
        return { id: rows[0].id, cookie: await sessions.open(tx, rows[0].id, client) };
      });
      if (!result) {
        throw new ApiError(
          'setup_link_invalid',
          'This setup link is invalid, expired or already used, or an admin exists already: sign in, or restart the server for a new link.',
        );
      }
      return { admin: (await byId(result.id)) as Admin, cookie: result.cookie };
    },

    /** Checks the password (one argon2 run whether or not the email is known); null when wrong. */
    async login(email: string, password: string, client: Client) {
      const { rows } = await db.query<{ id: string; password_hash: string }>(
        'select id, password_hash from plinth.admins where email = $1',
        [email],
      );
      const ok = await hasher.verify(rows[0]?.password_hash ?? (await hasher.dummyHash()), password);
      if (!rows[0] || !ok) return null;
      const cookie = await db.transaction((tx) => sessions.open(tx, rows[0].id, client));
      return { admin: (await byId(rows[0].id)) as Admin, cookie };
    },

    byId,

    /** The admin of a cookie value while its session is live (see sessions.ts). */
    resolve: sessions.resolve,

    /** Ends one console session (logout). */
    endSession: sessions.end,
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
