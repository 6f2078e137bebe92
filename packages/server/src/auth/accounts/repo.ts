import type { User } from '@plinth/shared';
import type { Queryable } from '../../db/index.js';
import { isoSql } from '../../lib/index.js';
import { USER_CLAIMS_SQL, type UserClaims, userClaims } from '../sessions/claims.js';

/**
 * The columns of the user (docs/api.md §5.1) with its identities, for one statement; `u` is
 * auth.users. The management API selects the same, and the ban (admin/users.ts).
 */
export const USER_COLUMNS = `u.id, u.email, ${isoSql('u.email_confirmed_at')} as email_confirmed_at, u.phone,
  ${isoSql('u.phone_confirmed_at')} as phone_confirmed_at, u.name, u.avatar, ${isoSql('u.created_at')} as created_at,
  ${isoSql('u.updated_at')} as updated_at, ${isoSql('u.last_sign_in_at')} as last_sign_in_at,
  coalesce((select json_agg(json_build_object('provider', i.provider, 'email', i.email, 'created_at', ${isoSql('i.created_at')}) order by i.created_at)
    from auth.identities i where i.user_id = u.id), '[]'::json) as identities`;

type Row = Omit<User, 'identities'> & { identities: unknown };

function toUser(row: Row): User {
  const { identities } = row;
  return {
    id: row.id,
    email: row.email,
    email_confirmed_at: row.email_confirmed_at,
    phone: row.phone,
    phone_confirmed_at: row.phone_confirmed_at,
    name: row.name,
    avatar: row.avatar,
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_sign_in_at: row.last_sign_in_at,
    identities: identities as User['identities'],
  };
}

/**
 * Reads a user by id (in the caller's transaction when given one).
 * @example const user = await findUser(db, id); // User | null
 */
export async function findUser(q: Queryable, id: string): Promise<User | null> {
  const { rows } = await q.query<Row>(`select ${USER_COLUMNS} from auth.users u where u.id = $1`, [id]);
  return rows[0] ? toUser(rows[0]) : null;
}

/** What sign-in needs: the id, the confirmation and the password hash (never leaves the service). */
export interface Credentials {
  id: string;
  confirmed: boolean;
  hash: string | null;
}

/**
 * The credentials of the user with this (normalised) email, or null.
 * @example const c = await findCredentials(db, 'ann@example.com');
 */
export async function findCredentials(q: Queryable, email: string): Promise<Credentials | null> {
  const { rows } = await q.query<{ id: string; confirmed: boolean; hash: string | null }>(
    `select u.id, u.email_confirmed_at is not null as confirmed, p.hash
     from auth.users u left join auth.passwords p on p.user_id = u.id where u.email = $1`,
    [email],
  );
  return rows[0] ?? null;
}

/** A user-shaped answer for an email that is already taken, so sign-up cannot be used to probe for accounts. */
export function decoyUser(email: string, nowIso: string): User {
  return {
    id: crypto.randomUUID(),
    email,
    email_confirmed_at: null,
    phone: null,
    phone_confirmed_at: null,
    name: null,
    avatar: null,
    created_at: nowIso,
    updated_at: nowIso,
    last_sign_in_at: null,
    identities: [{ provider: 'email', email, created_at: nowIso }],
  };
}

/**
 * The claims of a user (userClaims), or null when there is no such user.
 * @example const claims = await findUserClaims(db, id); // { user_metadata, app_metadata, is_anonymous }
 */
export async function findUserClaims(q: Queryable, id: string): Promise<UserClaims | null> {
  const { rows } = await q.query<{ user_data: unknown; is_anonymous: boolean; providers: unknown }>(
    `select ${USER_CLAIMS_SQL} from auth.users u where u.id = $1`,
    [id],
  );
  return rows[0] ? userClaims(rows[0]) : null;
}
