import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// SQL that a request runs (a view over a function, a trigger) and that switches role back to the
// connection's login must not read auth.passwords (issue 9). On PostgreSQL the API's login can
// become nothing but the API roles; on both databases the role check of runAs
// (plinth.end_request) refuses a statement that left the role changed
// (api-login.postgres.test.ts covers SQL that switches back before it ends).
let t: TestServer;
let owner: string;

beforeAll(async () => {
  t = await createTestServer();
  const signUp = await t.app.inject({
    method: 'POST',
    url: '/v1/auth/signup',
    headers: t.as.anon,
    payload: { email: 'victim@example.com', password: 'correct horse battery' },
  });
  expect(signUp.statusCode, signUp.body).toBe(200);
  owner = (await t.db.query<{ who: string }>('select session_user as who')).rows[0].who;
  const res = await t.sql(`
    create function reset_and_read() returns table (hash text) language plpgsql as $$
    begin
      reset role;
      return query select p.hash from auth.passwords p;
    end $$;
    create view via_reset as select * from reset_and_read();

    create function set_and_read() returns table (hash text) language plpgsql as $$
    begin
      execute format('set role %I', '${owner}');
      return query select p.hash from auth.passwords p;
    end $$;
    create view via_set_role as select * from set_and_read();

    create function authorize_and_read() returns table (hash text) language plpgsql as $$
    begin
      execute format('set session authorization %I', '${owner}');
      return query select p.hash from auth.passwords p;
    end $$;
    create view via_session as select * from authorize_and_read();
    -- Functions are closed until granted (migration 0070): open these, so what is refused is the role switch.
    grant execute on function reset_and_read(), set_and_read(), authorize_and_read() to anon, authenticated;

    create table notes (id serial primary key, body text);
    create policy anyone on notes for all using (true) with check (true);
    create function steal() returns trigger language plpgsql as $$
    begin
      reset role;
      new.body := (select p.hash from auth.passwords p limit 1);
      return new;
    end $$;
    create trigger steal before insert on notes for each row execute function steal();`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

const leaked = (body: string) => body.includes('$argon2');

describe('SQL run by a request cannot switch back to the owner', () => {
  for (const view of ['via_reset', 'via_set_role', 'via_session']) {
    it(`a view over a function (${view}) read as anon and as a user`, async () => {
      const user = await t.mintToken(crypto.randomUUID());
      for (const headers of [t.as.anon, t.as.user(user)]) {
        const res = await t.app.inject({ url: `/api/v1/db/${view}`, headers });
        expect(leaked(res.body), res.body).toBe(false);
        expect(res.statusCode).toBe(403);
        expect(res.json().code).toBe('permission_denied');
      }
    });
  }

  it('a trigger run by an insert as anon', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/db/notes', headers: t.as.anon, payload: { body: 'hi' } });
    expect(leaked(res.body), res.body).toBe(false);
    expect(res.statusCode).toBe(403);
    const rows = await t.db.query<{ n: number }>(`select count(*)::int as n from public.notes where body like '$argon2%'`);
    expect(rows.rows[0].n).toBe(0);
  });

  it('requests after the refusal run as their own role again', async () => {
    await t.app.inject({ url: '/api/v1/db/via_reset', headers: t.as.anon });
    expect((await t.sql('create view whoami as select current_user::text as who')).statusCode).toBe(200);
    const res = await t.app.inject({ url: '/api/v1/db/whoami', headers: t.as.anon });
    expect(res.json()).toEqual([{ who: 'anon' }]);
  });
});
