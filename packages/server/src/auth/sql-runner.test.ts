import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, createAuthServer, email, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// What the SQL runner and the REST API can see of auth (docs/security.md): the users, yes;
// any hash of a password or token, no. And auth.uid() works for a real signed-in user.
let t: TestServer;
let user: { id: string; email: string };
let access: string;
beforeAll(async () => {
  t = await createAuthServer();
  const addr = email('visible');
  const res = await signUp(t, addr);
  user = res.user;
  access = res.session.access_token;
});
afterAll(() => t?.stop());

describe('SQL runner', () => {
  it('reads the users as the spec shows', async () => {
    const res = await t.sql(`select id, email, created_at, email_confirmed_at from users where email = '${user.email}'`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results[0].rows).toEqual([
      { id: user.id, email: user.email, created_at: expect.any(String), email_confirmed_at: null },
    ]);
  });

  it('users carry no secret column', async () => {
    const cols = (await t.sql('select * from auth.users limit 1')).json().results[0].columns.map((c: { name: string }) => c.name);
    expect(cols).not.toContain('hash');
    expect(cols.some((c: string) => /pass|hash|token/.test(c))).toBe(false);
  });

  it.each([
    'auth.passwords',
    'passwords',
    'auth.refresh_tokens',
    'refresh_tokens',
    'auth.one_time_tokens',
    'auth.signing_keys',
    'plinth.project_keys',
  ])('cannot read %s (42501 permission denied)', async (table) => {
    const res = await t.sql(`select * from ${table}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'sql_error', details: { sqlstate: '42501' } });
  });

  it('cannot read hashes through a function or view it creates either', async () => {
    const res = await t.sql('create view peek as select hash from auth.passwords');
    if (res.statusCode === 200) {
      // The view is owned by the runner's role, so reading it checks that role's privileges.
      expect((await t.sql('select * from peek')).json()).toMatchObject({ code: 'sql_error', details: { sqlstate: '42501' } });
    } else {
      expect(res.json().details.sqlstate).toBe('42501');
    }
  });

  it('leaves no role behind: the next statement of the server runs as before', async () => {
    await t.sql('select 1/0');
    await t.sql('select 1');
    const { rows } = await t.db.query<{ ok: boolean }>("select current_user <> 'plinth_sql' as ok");
    expect(rows[0].ok).toBe(true);
    expect((await t.db.query('select count(*) from auth.passwords')).rows).toHaveLength(1);
  });

  it('auth.uid() is null for the runner and the claims user under a set role', async () => {
    const res = await t.sql(
      `select auth.uid() as none; set local role authenticated; select set_config('request.jwt.claims', '{"sub":"${user.id}"}', true); select auth.uid() as uid`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json().results;
    expect(r[0].rows).toEqual([{ none: null }]);
    expect(r.at(-1).rows).toEqual([{ uid: user.id }]);
  });
});

describe('REST', () => {
  it.each(['users', 'passwords', 'refresh_tokens', 'one_time_tokens', 'sessions'])(
    'does not expose %s, even to the secret key',
    async (table) => {
      const res = await t.app.inject({ url: `/api/v1/db/${table}`, headers: t.as.service });
      expect([res.statusCode, res.json().code]).toEqual([404, 'table_not_found']);
    },
  );

  it("a real sign-in's access token is the authenticated role with auth.uid() = its user", async () => {
    const setup = await t.sql(`create table notes (id serial primary key, body text, user_id uuid default auth.uid());
      create policy own on notes using (user_id = auth.uid()) with check (user_id = auth.uid());`);
    expect(setup.statusCode, setup.body).toBe(200);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/db/notes', headers: asUser(t, access), payload: { body: 'mine' } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().user_id).toBe(user.id);
    const other = await signUp(t, email('other'));
    const theirs = await t.app.inject({ url: '/api/v1/db/notes', headers: asUser(t, other.session.access_token) });
    expect(theirs.json()).toEqual([]);
    const mine = await t.app.inject({ url: '/api/v1/db/notes', headers: asUser(t, access) });
    expect(mine.json()).toEqual([expect.objectContaining({ body: 'mine', user_id: user.id })]);
  });
});
