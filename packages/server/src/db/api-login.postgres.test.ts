import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Plinth } from '../app.js';
import { loadConfig } from '../config/index.js';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { apiLoginName } from './api-login.js';
import { DbSetupError } from './types.js';

// API traffic logs in as a role of its own that can only become anon, authenticated and service
// (migration 0014, api-login.ts): SQL a request runs can RESET ROLE to that login and no further.
let target: TestDbTarget;
let admin: postgres.Sql;
const started: Plinth[] = [];
const extraRoles: string[] = [];
const database = () => new URL(target.databaseUrl ?? '').pathname.slice(1);

async function start(env: Record<string, string> = {}, databaseUrl = target.databaseUrl): Promise<Plinth> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env }, { databaseUrl, port: 0 });
  const plinth = await buildApp({ config, logger: pino({ level: 'silent' }) });
  started.push(plinth);
  return plinth;
}

const sql = (p: Plinth, query: string) =>
  p.app.inject({ method: 'POST', url: '/api/v1/sql', headers: { authorization: `Bearer ${p.keys.secretKey}` }, payload: { query } });
const read = (p: Plinth, table: string) => p.app.inject({ url: `/api/v1/db/${table}`, headers: { apikey: p.keys.publicKey } });

beforeAll(async () => {
  target = await freshDbTarget();
  admin = postgres(target.adminUrl ?? '', { max: 1, onnotice: () => undefined });
});
afterAll(async () => {
  await Promise.all(started.map((p) => p.close()));
  await target.cleanup();
  for (const r of extraRoles) await admin.unsafe(`drop role if exists ${r}`).catch(() => undefined);
  await admin.end();
});

describe('the API login', () => {
  it('requests run on a NOINHERIT login that is a member of the API roles only', async () => {
    const p = await start();
    expect((await sql(p, 'create view whoami as select session_user::text as login, current_user::text as who')).statusCode).toBe(200);
    const name = apiLoginName(database());
    expect((await read(p, 'whoami')).json()).toEqual([{ login: name, who: 'anon' }]);
    const [role] = await admin`select rolsuper, rolinherit, rolbypassrls, rolcreaterole, rolcreatedb,
      array(select g.rolname::text from pg_auth_members m join pg_roles g on g.oid = m.roleid where m.member = r.oid order by 1) as member_of
      from pg_roles r where rolname = ${name}`;
    expect(role).toEqual({
      rolsuper: false,
      rolinherit: false,
      rolbypassrls: false,
      rolcreaterole: false,
      rolcreatedb: false,
      member_of: ['anon', 'authenticated', 'service'],
    });
  });

  it('SQL that switches back and restores the role before it ends still reads nothing of auth', async () => {
    const [p] = started;
    const signUp = await p.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: { apikey: p.keys.publicKey },
      payload: { email: 'victim@example.com', password: 'correct horse battery' },
    });
    expect(signUp.statusCode).toBe(200);
    const res = await sql(
      p,
      `create function sneaky() returns table (hash text) language plpgsql as $$
       declare was text := current_user;
       begin
         reset role;
         return query select p.hash from auth.passwords p;
         execute format('set role %I', was);
       end $$;
       create view via_sneaky as select * from sneaky();
       create function as_service() returns table (hash text) language plpgsql as $$
       begin
         set role service;
         return query select p.hash from auth.passwords p;
         set role anon;
       end $$;
       create view via_service as select * from as_service();
       -- Functions are closed until granted (migration 0070): what must be refused is the role switch.
       grant execute on function sneaky(), as_service() to anon, authenticated;`,
    );
    expect(res.statusCode, res.body).toBe(200);
    for (const view of ['via_sneaky', 'via_service']) {
      const got = await read(p, view);
      expect(got.body).not.toContain('$argon2');
      expect(got.statusCode).toBe(403);
    }
  });

  it('every instance logs in with the stored password, and a start repairs a password changed by hand', async () => {
    const name = apiLoginName(database());
    await admin.unsafe(`alter role ${name} password 'something else'`);
    // Only connections opened after the change see it: a second instance, and a fresh start.
    const second = await start();
    expect((await read(second, 'whoami')).json()).toEqual([{ login: name, who: 'anon' }]);
    const stored = await second.db.query<{ n: number }>('select count(*)::int as n from plinth.api_login');
    expect(stored.rows[0].n).toBe(1);
  });

  it('DATABASE_AUTHENTICATOR_URL: the operator’s own login is used, after checking it can only become the API roles', async () => {
    const own = `own_login_${Math.random().toString(36).slice(2, 8)}`;
    extraRoles.push(own);
    await admin.unsafe(`create role ${own} login noinherit password 'operator-secret'`);
    const url = new URL(target.databaseUrl ?? '');
    url.username = own;
    url.password = 'operator-secret';
    const p = await start({ DATABASE_AUTHENTICATOR_URL: url.toString() });
    expect((await read(p, 'whoami')).json()).toEqual([{ login: own, who: 'anon' }]);

    const su = new URL(target.adminUrl ?? '');
    su.pathname = url.pathname;
    const refused = await start({ DATABASE_AUTHENTICATOR_URL: su.toString() }).catch((e) => e);
    expect(refused).toBeInstanceOf(DbSetupError);
    expect(refused.message).toMatch(/^DATABASE_AUTHENTICATOR_URL's role "postgres" is a superuser/);
    expect(refused.message).not.toContain('\n');
  });
});

describe('privileges checked at start', () => {
  it('an owner without CREATEROLE hears in one line what to grant', async () => {
    const weak = `weak_owner_${Math.random().toString(36).slice(2, 8)}`;
    const db = `${database()}_weak`;
    extraRoles.push(weak);
    await admin.unsafe(`create role ${weak} login password 'weak-secret'`);
    await admin.unsafe(`create database ${db} owner ${weak}`);
    try {
      const url = new URL(target.databaseUrl ?? '');
      url.username = weak;
      url.password = 'weak-secret';
      url.pathname = `/${db}`;
      const err = await start({}, url.toString()).catch((e) => e);
      expect(err).toBeInstanceOf(DbSetupError);
      expect(err.message).toBe(
        `PostgreSQL: the role "${weak}" cannot set up Plinth in the database "${db}": it needs CREATEROLE (alter role "${weak}" createrole). ` +
          'README "Running on PostgreSQL" lists the privileges.',
      );
    } finally {
      await admin.unsafe(`drop database if exists ${db} with (force)`);
    }
  });
});
