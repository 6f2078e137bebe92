-- API traffic on PostgreSQL logs in as a role of its own (src/db/api-login.ts), as PostgREST's
-- authenticator does: LOGIN, NOINHERIT, member of anon, authenticated and service and of
-- nothing else, owner of nothing. `plinth.run_as` switches it to the request's role; SQL that a
-- request runs (a view over a function, a policy, a trigger) can `RESET ROLE` only back to that
-- login, which can read no table and cannot become the database owner. Before, the API switched
-- role on a connection of the owner (often a superuser), and `reset role` inside a function
-- read `auth.passwords` as anon.
--
-- The login Plinth makes for itself: one row, its password (random, from the CSPRNG) kept here
-- so that every instance can log in with it. RLS on, no grants: only the owner reads it. When
-- the operator names a login of their own (DATABASE_AUTHENTICATOR_URL) nothing is stored.
create table if not exists plinth.api_login (
  id int primary key default 1 check (id = 1),
  role_name text not null,
  password text not null,
  created_at timestamptz not null default now()
);
alter table plinth.api_login enable row level security;

-- run_as (0008) also refuses a statement after which the role is no longer the request's: SQL
-- that switched role and did not switch back (`reset role`, `set role …`, `set session
-- authorization …`) gets an error instead of its rows. On PostgreSQL the API login already
-- stops such SQL from reaching anything; on PGlite, whose one session is a superuser's, this
-- check is what stops it (docs/security.md says what it cannot stop).
create or replace function plinth.run_as(_role text, _claims text, _uid text, _stmt text, _params text[], _rows boolean)
returns table (body text, n bigint, total bigint)
language plpgsql volatile
as $$
declare
  affected bigint;
  login text := session_user;
begin
  perform set_config('role', _role, true), set_config('request.jwt.claims', _claims, true),
    set_config('request.jwt.claim.sub', coalesce(_uid, ''), true);
  if _rows then
    return query execute _stmt using _params;
  else
    execute _stmt using _params;
    get diagnostics affected = row_count;
    return query select null::text, affected, null::bigint;
  end if;
  if current_user::text <> _role or session_user::text <> login then
    raise exception 'The request ran SQL that changed the role from % to %.', _role, current_user
      using errcode = '42501', hint = 'A function, view or trigger must not SET ROLE, RESET ROLE or SET SESSION AUTHORIZATION.';
  end if;
end
$$;
revoke all on function plinth.run_as(text, text, text, text, text[], boolean) from public;
