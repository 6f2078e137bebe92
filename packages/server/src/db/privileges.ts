/**
 * What the DATABASE_URL role needs on PostgreSQL, checked before the first migration so a
 * managed database's owner hears in one line what is missing instead of a failed statement.
 * README "Running on PostgreSQL" lists the same.
 */
import { type Db, DbSetupError } from './types.js';

interface Facts {
  me: string;
  database: string;
  rolsuper: boolean;
  rolcreaterole: boolean;
  rolbypassrls: boolean;
  version: number;
  owns_database: boolean;
  /** Existing roles among Plinth's: name → [bypassrls, the connecting role is a member]. */
  roles: Record<string, [boolean, boolean]>;
}

const FACTS_SQL = `
select current_user::text as me, current_database()::text as database, r.rolsuper, r.rolcreaterole, r.rolbypassrls,
       current_setting('server_version_num')::int as version,
       pg_has_role(current_user, d.datdba, 'MEMBER') as owns_database,
       (select coalesce(json_object_agg(g.rolname, json_build_array(g.rolbypassrls, pg_has_role(current_user, g.oid, 'MEMBER'))), '{}')
          from pg_roles g where g.rolname in ('anon', 'authenticated', 'service', 'plinth_sql')) as roles
from pg_roles r, pg_database d
where r.rolname = current_user and d.datname = current_database()`;

const BYPASS = ['service', 'plinth_sql'];

/**
 * The missing privileges, each with the statement that grants it; empty when all is there.
 * Event triggers are not among them: without them Plinth uses its fallback (ddl-watch.ts).
 * @example await missingPrivileges(db, { ownApiLogin: true }) // ['CREATEROLE (alter role "app" createrole)']
 */
export async function missingPrivileges(db: Db, options: { ownApiLogin: boolean }): Promise<string[]> {
  const f = (await db.query<Facts>(FACTS_SQL)).rows[0];
  if (!f || f.rolsuper) return [];
  const { roles } = f;
  const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const missing: string[] = [];
  if (!f.owns_database) missing.push(`to own the database (alter database ${q(f.database)} owner to ${q(f.me)})`);
  const absent = ['anon', 'authenticated', 'service', 'plinth_sql'].filter((r) => !roles[r]);
  const notMember = Object.entries(roles)
    .filter(([, [, member]]) => !member)
    .map(([r]) => r);
  if (!f.rolcreaterole && (options.ownApiLogin || absent.length > 0 || notMember.length > 0)) {
    missing.push(`CREATEROLE (alter role ${q(f.me)} createrole)`);
  }
  const mayMakeBypass = f.version >= 160000 && f.rolbypassrls;
  const toMake = BYPASS.filter((r) => absent.includes(r));
  if (toMake.length && !mayMakeBypass) {
    const who = f.version >= 160000 ? 'a superuser or a role with BYPASSRLS' : 'only a superuser on PostgreSQL 15';
    missing.push(
      `the role${toMake.length > 1 ? 's' : ''} ${toMake.join(' and ')} with BYPASSRLS, which ${who} can create ` +
        `(${toMake.map((r) => `create role ${r} nologin noinherit bypassrls; grant ${r} to ${q(f.me)} with admin option`).join('; ')})`,
    );
  }
  for (const r of BYPASS.filter((name) => roles[name] && !roles[name][0])) {
    missing.push(`BYPASSRLS on the role ${r} (as a superuser: alter role ${r} bypassrls)`);
  }
  return missing;
}

/**
 * Throws a one-line `DbSetupError` when the connecting role lacks what Plinth needs.
 * @example await checkPrivileges(db, { ownApiLogin: !env.DATABASE_AUTHENTICATOR_URL });
 */
export async function checkPrivileges(db: Db, options: { ownApiLogin: boolean }): Promise<void> {
  if (db.kind !== 'postgres') return;
  const missing = await missingPrivileges(db, options);
  if (missing.length === 0) return;
  const { me, database } = (await db.query<{ me: string; database: string }>('select current_user as me, current_database() as database'))
    .rows[0];
  throw new DbSetupError(
    `PostgreSQL: the role "${me}" cannot set up Plinth in the database "${database}": it needs ${missing.join('; and ')}. ` +
      'README "Running on PostgreSQL" lists the privileges.',
  );
}
