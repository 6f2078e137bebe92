-- Plinth system schema: roles, the auth helpers, secure-by-default event triggers, internal tables.
-- Idempotent: creates only what is missing (several projects may share one cluster).

create schema if not exists plinth;
create schema if not exists auth;

-- Roles and memberships are the cluster's, not the database's: projects of other databases
-- starting at the same moment may make the same ones (the advisory lock is per database), so
-- "it exists already" is success.
do $$
declare
  r text[];
begin
  foreach r slice 1 in array array[['anon', 'nologin noinherit'], ['authenticated', 'nologin noinherit'],
                                   ['service', 'nologin noinherit bypassrls']] loop
    if not exists (select 1 from pg_roles where rolname = r[1]) then
      begin
        execute format('create role %I %s', r[1], r[2]);
      exception when duplicate_object or unique_violation then
        null;
      end;
    end if;
  end loop;
end
$$;

-- The connecting role switches to these per transaction (set_config('role', …, true)).
do $$
declare
  r text;
begin
  foreach r in array array['anon', 'authenticated', 'service'] loop
    begin
      execute format('grant %I to %I', r, current_user);
    exception when unique_violation then
      null;
    end;
  end loop;
end
$$;

grant usage on schema public to anon, authenticated, service;
grant usage on schema auth to anon, authenticated, service;
alter default privileges in schema public grant select, insert, update, delete on tables to anon, authenticated, service;
alter default privileges in schema public grant usage, select on sequences to anon, authenticated, service;
alter default privileges in schema public grant execute on functions to anon, authenticated, service;
grant select, insert, update, delete on all tables in schema public to service;
grant usage, select on all sequences in schema public to service;

create or replace function auth.jwt() returns jsonb
language sql stable
as $$
  select coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb
$$;

create or replace function auth.uid() returns uuid
language sql stable
as $$
  select case
    when (auth.jwt() ->> 'sub') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    then (auth.jwt() ->> 'sub')::uuid
  end
$$;

create or replace function auth.role() returns text
language sql stable
as $$
  select coalesce(nullif(auth.jwt() ->> 'role', ''), nullif(current_setting('role', true), 'none'), current_user::text)
$$;

grant execute on function auth.jwt(), auth.uid(), auth.role() to anon, authenticated, service;

-- Secure by default: a table created in public gets RLS at once (closed to anon and
-- authenticated until a policy opens it); a view gets security_invoker so it cannot be
-- used to read around RLS. Every DDL change notifies the servers to reload their schema cache.
create or replace function plinth.on_ddl_end() returns event_trigger
language plpgsql
as $$
declare
  obj record;
begin
  for obj in select * from pg_event_trigger_ddl_commands() loop
    if obj.schema_name = 'public' and obj.object_type = 'table'
       and obj.command_tag in ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO') then
      execute format('alter table %s enable row level security', obj.object_identity);
      execute format('grant select, insert, update, delete on %s to anon, authenticated, service', obj.object_identity);
    elsif obj.schema_name = 'public' and obj.object_type = 'view' and obj.command_tag = 'CREATE VIEW' then
      execute format('alter view %s set (security_invoker = true)', obj.object_identity);
      execute format('grant select, insert, update, delete on %s to anon, authenticated, service', obj.object_identity);
    end if;
  end loop;
  perform pg_notify('plinth_schema', 'ddl');
end
$$;

create or replace function plinth.on_sql_drop() returns event_trigger
language plpgsql
as $$
begin
  perform pg_notify('plinth_schema', 'drop');
end
$$;

-- Only a superuser may create event triggers (PostgreSQL 15+). A database owner without it
-- (hosted PostgreSQL) gets neither trigger: plinth.secure_new_relations() and a catalog poll
-- do their work instead (migration 0015, src/db/ddl-watch.ts). A superuser gets both, as before.
do $$
begin
  drop event trigger if exists plinth_ddl_end;
  create event trigger plinth_ddl_end on ddl_command_end execute function plinth.on_ddl_end();
  drop event trigger if exists plinth_sql_drop;
  create event trigger plinth_sql_drop on sql_drop execute function plinth.on_sql_drop();
exception when insufficient_privilege then
  null;
end
$$;

-- Internal tables: not in public, no grants to the API roles, RLS on all the same.
create table if not exists plinth.project_keys (
  id int primary key default 1 check (id = 1),
  public_key text not null,
  secret_key text not null,
  created_at timestamptz not null default now()
);
alter table plinth.project_keys enable row level security;

create table if not exists plinth.kv (
  key text primary key,
  value jsonb not null,
  updated_at timestamptz not null default now()
);
alter table plinth.kv enable row level security;

create table if not exists auth.signing_keys (
  kid text primary key,
  private_jwk jsonb not null,
  public_jwk jsonb not null,
  active boolean not null default true,
  created_at timestamptz not null default now()
);
alter table auth.signing_keys enable row level security;

create table if not exists plinth.app_migrations (
  name text primary key,
  checksum text not null,
  applied_at timestamptz not null default now()
);
alter table plinth.app_migrations enable row level security;
