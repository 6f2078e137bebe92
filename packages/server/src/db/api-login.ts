/**
 * The login API traffic uses on PostgreSQL (migration 0014), PostgREST's "authenticator": LOGIN,
 * NOINHERIT, member of anon, authenticated and service only, no privilege of its own. SQL a
 * request runs can `RESET ROLE` back to it and no further: it cannot read `auth.*` or
 * `plinth.*`, and cannot become the database owner.
 *
 * Either the operator names one (`DATABASE_AUTHENTICATOR_URL`), or Plinth makes
 * `plinth_api_<database>` itself with a random password kept in `plinth.api_login`, which every
 * instance reads through the owner's connection.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { dbErrorKind } from './errors.js';
import { type Db, DbSetupError, type Queryable } from './types.js';

/** A name in SQL text: these names come from the catalog or the operator's URL, quoted all the same. */
const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

const API_ROLES = ['anon', 'authenticated', 'service'];
const RUN_AS = 'plinth.run_as(text, text, text, text, text[], boolean)';
const LOCK_KEY = 726_354_003; // arbitrary, constant: one instance provisions at a time

/**
 * The name of the login Plinth makes for a database: readable when the name allows,
 * else a digest (role names are at most 63 bytes; several databases may share a cluster).
 * @example apiLoginName('app') // 'plinth_api_app'
 */
export function apiLoginName(database: string): string {
  if (/^[a-z0-9_]{1,52}$/.test(database)) return `plinth_api_${database}`;
  return `plinth_api_${createHash('sha256').update(database).digest('hex').slice(0, 24)}`;
}

/**
 * A SCRAM-SHA-256 verifier (RFC 5802, PostgreSQL's format) of a password: the server stores
 * it as given, so the password itself never appears in a statement (or in a server log).
 */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

interface LoginRole {
  rolsuper: boolean;
  rolbypassrls: boolean;
  rolinherit: boolean;
  rolcanlogin: boolean;
  member_of: string[] | string | null;
}

const asList = (v: string[] | string | null): string[] =>
  v === null
    ? []
    : Array.isArray(v)
      ? v
      : v
          .replace(/^\{|\}$/g, '')
          .split(',')
          .filter(Boolean);

async function readRole(q: Queryable, name: string): Promise<LoginRole | null> {
  const { rows } = await q.query<LoginRole>(
    `select r.rolsuper, r.rolbypassrls, r.rolinherit, r.rolcanlogin,
            array(select g.rolname::text from pg_auth_members m join pg_roles g on g.oid = m.roleid where m.member = r.oid order by 1) as member_of
     from pg_roles r where r.rolname = $1`,
    [name],
  );
  return rows[0] ?? null;
}

/**
 * What the login may do: become the API roles, connect, call run_as (the previous version's
 * path, for a rolling restart; this one's role check, plinth.end_request, is everyone's). Idempotent.
 */
async function grantApi(q: Queryable, name: string): Promise<void> {
  const role = quoteIdent(name);
  await q.query(`grant ${API_ROLES.join(', ')} to ${role}`);
  await q.query(`grant connect on database ${quoteIdent((await currentDatabase(q)) ?? '')} to ${role}`);
  await q.query(`grant usage on schema plinth to ${role}`);
  await q.query(`grant execute on function ${RUN_AS} to ${role}`);
}

async function currentDatabase(q: Queryable): Promise<string | null> {
  return (await q.query<{ db: string }>('select current_database() as db')).rows[0]?.db ?? null;
}

function withLogin(databaseUrl: string, user: string, password: string): string {
  const url = new URL(databaseUrl);
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/** Checks an operator's login: a login role that can only become the API roles. */
async function checkOwnLogin(db: Db, url: string): Promise<void> {
  let name: string;
  try {
    name = decodeURIComponent(new URL(url).username);
  } catch {
    throw new DbSetupError('DATABASE_AUTHENTICATOR_URL is not a valid postgres:// URL.');
  }
  const role = await readRole(db, name);
  if (!role) throw new DbSetupError(`DATABASE_AUTHENTICATOR_URL names the role "${name}", which does not exist.`);
  const extra = asList(role.member_of).filter((r) => !API_ROLES.includes(r));
  const problems = [
    role.rolsuper ? 'is a superuser' : '',
    role.rolbypassrls ? 'has BYPASSRLS' : '',
    role.rolinherit ? 'has INHERIT (make it NOINHERIT)' : '',
    role.rolcanlogin ? '' : 'cannot log in',
    extra.length ? `is also a member of ${extra.join(', ')}` : '',
  ].filter(Boolean);
  if (problems.length) {
    throw new DbSetupError(
      `DATABASE_AUTHENTICATOR_URL's role "${name}" ${problems.join(', ')}: the API login must be a NOINHERIT login that can only ` +
        `become anon, authenticated and service (create role ${name} login noinherit password '…').`,
    );
  }
  try {
    await db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [LOCK_KEY]);
      await grantApi(tx, name);
    });
  } catch (err) {
    throw new DbSetupError(
      `Could not let the role "${name}" of DATABASE_AUTHENTICATOR_URL become anon, authenticated and service (${(err as Error).message}); ` +
        'grant them to it as a role that holds them with ADMIN OPTION.',
      { cause: err },
    );
  }
}

/** Makes (or repairs) Plinth's own login and returns its URL. */
async function ensureOwnLogin(db: Db, databaseUrl: string, resetPassword: boolean): Promise<string> {
  const { name, password } = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [LOCK_KEY]);
    const database = (await currentDatabase(tx)) ?? '';
    const wanted = apiLoginName(database);
    const stored = (await tx.query<{ role_name: string; password: string }>('select role_name, password from plinth.api_login')).rows[0];
    let password = stored?.role_name === wanted ? stored.password : null;
    let setPassword = resetPassword;
    if (password === null) {
      password = randomBytes(32).toString('base64url');
      setPassword = true;
      await tx.query(
        `insert into plinth.api_login (id, role_name, password) values (1, $1, $2)
         on conflict (id) do update set role_name = excluded.role_name, password = excluded.password, created_at = now()`,
        [wanted, password],
      );
    }
    const role = quoteIdent(wanted);
    const existing = await readRole(tx, wanted);
    const verifier = scramVerifier(password);
    if (!existing) {
      await tx.query(`create role ${role} login noinherit nosuperuser nocreatedb nocreaterole nobypassrls password '${verifier}'`);
    } else {
      const extra = asList(existing.member_of).filter((r) => !API_ROLES.includes(r));
      if (existing.rolsuper || existing.rolbypassrls || extra.length) {
        throw new DbSetupError(
          `The role "${wanted}" exists but is not a plain API login (superuser, BYPASSRLS or member of ${extra.join(', ') || 'other roles'}); ` +
            'drop it, or set DATABASE_AUTHENTICATOR_URL to a login of your own.',
        );
      }
      await tx.query(`alter role ${role} login noinherit${setPassword ? ` password '${verifier}'` : ''}`);
    }
    await grantApi(tx, wanted);
    return { name: wanted, password };
  });
  return withLogin(databaseUrl, name, password);
}

const isAuthFailure = (err: unknown) => dbErrorKind(err) === 'login_refused';

/**
 * Sets up the API login and switches `db.runAs` onto it (PostgreSQL only); resolves to its
 * name. A database owner without CREATEROLE, or a server that refuses password logins for it,
 * gets a one-line `DbSetupError` naming the fix.
 * @example await connectApiLogin(db, config.databaseUrl, env.DATABASE_AUTHENTICATOR_URL);
 */
export async function connectApiLogin(db: Db, databaseUrl: string, authenticatorUrl?: string): Promise<string> {
  if (!db.useApiLogin) return '';
  const attach = db.useApiLogin.bind(db);
  if (authenticatorUrl) {
    await checkOwnLogin(db, authenticatorUrl);
    try {
      await attach(authenticatorUrl);
    } catch (err) {
      throw new DbSetupError(`DATABASE_AUTHENTICATOR_URL cannot log in: ${(err as Error).message}.`, { cause: err });
    }
    return decodeURIComponent(new URL(authenticatorUrl).username);
  }
  let url: string;
  try {
    url = await ensureOwnLogin(db, databaseUrl, false);
  } catch (err) {
    if (err instanceof DbSetupError) throw err;
    throw new DbSetupError(
      `Could not create the API login role (${(err as Error).message}): give the DATABASE_URL role CREATEROLE ` +
        '(alter role … createrole), or create a login yourself and set DATABASE_AUTHENTICATOR_URL (README "Running on PostgreSQL").',
      { cause: err },
    );
  }
  try {
    await attach(url);
  } catch (err) {
    if (!isAuthFailure(err)) throw loginFailed(url, err);
    // The stored password and the role's disagree (a restored database, a role made by hand):
    // set it again, once.
    url = await ensureOwnLogin(db, databaseUrl, true);
    await attach(url).catch((again) => {
      throw loginFailed(url, again);
    });
  }
  return decodeURIComponent(new URL(url).username);
}

function loginFailed(url: string, err: unknown): DbSetupError {
  const user = decodeURIComponent(new URL(url).username);
  return new DbSetupError(
    `The API login "${user}" that Plinth made cannot connect (${(err as Error).message}): allow password (scram-sha-256) ` +
      `logins for it in pg_hba.conf, or set DATABASE_AUTHENTICATOR_URL to a login of your own (README "Running on PostgreSQL").`,
    { cause: err },
  );
}
