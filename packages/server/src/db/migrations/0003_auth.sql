-- End-user auth: users and what proves who they are. Owned by the auth area (src/auth).
-- Every table: RLS on, no grants to anon/authenticated/service (the API roles never touch
-- them; the auth service runs as the connecting role). Idempotent like 0001.
--
-- Secrets (password hashes, token hashes, the encrypted successor of a rotated refresh
-- token) live in tables of their own, so the SQL runner's role can be given `users`,
-- `identities` and `sessions` and nothing else (docs/security.md).

create table if not exists auth.users (
  id uuid primary key default gen_random_uuid(),
  -- Stored trimmed and lowercased (citext-like without the extension, which PGlite lacks).
  email text unique check (email = lower(btrim(email))),
  email_confirmed_at timestamptz,
  phone text unique,
  phone_confirmed_at timestamptz,
  name text,
  avatar text,
  data jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_sign_in_at timestamptz
);
alter table auth.users enable row level security;

create table if not exists auth.passwords (
  user_id uuid primary key references auth.users (id) on delete cascade,
  hash text not null, -- argon2id PHC string
  updated_at timestamptz not null default now()
);
alter table auth.passwords enable row level security;

create table if not exists auth.identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  provider text not null,
  provider_user_id text not null,
  email text,
  created_at timestamptz not null default now(),
  unique (provider, provider_user_id)
);
create index if not exists identities_user_id on auth.identities (user_id);
alter table auth.identities enable row level security;

create table if not exists auth.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  user_agent text,
  ip text,
  created_at timestamptz not null default now(),
  refreshed_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index if not exists sessions_user_id on auth.sessions (user_id);
alter table auth.sessions enable row level security;

create table if not exists auth.refresh_tokens (
  id bigint generated always as identity primary key,
  hash text not null unique, -- SHA-256 hex of the 32 random bytes
  session_id uuid not null references auth.sessions (id) on delete cascade,
  parent text, -- hash of the token this one replaced
  -- The successor's raw value, AES-256-GCM under a key derived from THIS token's raw value
  -- (not from its hash): only a holder of this token can read it, for the 10 s grace.
  successor_enc text,
  rotated_at timestamptz,
  revoked boolean not null default false,
  created_at timestamptz not null default now()
);
create index if not exists refresh_tokens_session_id on auth.refresh_tokens (session_id);
alter table auth.refresh_tokens enable row level security;

create table if not exists auth.one_time_tokens (
  hash text primary key, -- SHA-256 hex of the 32 random bytes
  user_id uuid references auth.users (id) on delete cascade,
  email text,
  kind text not null check (kind in ('verification', 'reset', 'magic_link', 'email_change')),
  payload jsonb not null default '{}'::jsonb, -- e.g. {"email": new address} for email_change
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index if not exists one_time_tokens_user_kind on auth.one_time_tokens (user_id, kind);
create index if not exists one_time_tokens_email_kind on auth.one_time_tokens (email, kind);
alter table auth.one_time_tokens enable row level security;

-- The SQL runner's role (admin/sql.ts runs every script as it, search_path public, auth):
-- everything in public, the user list, no secrets. BYPASSRLS so the project owner sees every
-- row of their tables, as before; privileges, not RLS, keep the hash tables out of reach.
-- Roles and memberships are the cluster's: another database's project may make the same ones
-- at the same moment (see 0001).
do $$
declare
  r text;
begin
  if not exists (select 1 from pg_roles where rolname = 'plinth_sql') then
    begin
      create role plinth_sql nologin noinherit bypassrls;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
  begin
    execute format('grant plinth_sql to %I', current_user);
  exception when unique_violation then
    null;
  end;
  execute format('grant create on database %I to plinth_sql', current_database());
  -- So the owner can try policies in the runner: `set local role authenticated`.
  foreach r in array array['anon', 'authenticated', 'service'] loop
    begin
      execute format('grant %I to plinth_sql', r);
    exception when unique_violation then
      null;
    end;
  end loop;
end
$$;

grant usage, create on schema public to plinth_sql;
grant all on all tables in schema public to plinth_sql;
grant all on all sequences in schema public to plinth_sql;
grant execute on all functions in schema public to plinth_sql;
grant usage on schema auth to plinth_sql;
grant select, update, delete on auth.users to plinth_sql;
grant select on auth.identities, auth.sessions to plinth_sql;
grant execute on function auth.jwt(), auth.uid(), auth.role() to plinth_sql;

-- What the runner creates must be usable by the API roles like what migrations create
-- (0001's default privileges only cover objects the migrating role creates).
alter default privileges for role plinth_sql in schema public grant select, insert, update, delete on tables to anon, authenticated, service;
alter default privileges for role plinth_sql in schema public grant usage, select on sequences to anon, authenticated, service;
alter default privileges for role plinth_sql in schema public grant execute on functions to anon, authenticated, service;

-- Objects made in public by anyone else (`plinth migrate`, a direct client) are handed to
-- plinth_sql, so the owner can still alter or drop them from the runner. Skipped when the
-- creating role may not do so (another login on a shared cluster).
create or replace function plinth.give_public_to_runner() returns event_trigger
language plpgsql
as $$
declare
  obj record;
begin
  if current_user = 'plinth_sql' or not pg_has_role(current_user, 'plinth_sql', 'MEMBER') then
    return;
  end if;
  for obj in select * from pg_event_trigger_ddl_commands() loop
    if obj.schema_name = 'public' and obj.command_tag like 'CREATE %' and obj.object_type in ('table', 'view', 'materialized view', 'function', 'sequence') then
      begin
        execute format('alter %s %s owner to plinth_sql', case obj.object_type when 'table' then 'table' else obj.object_type end, obj.object_identity);
      exception when others then
        null; -- e.g. a serial's sequence, which follows its table's owner
      end;
    end if;
  end loop;
end
$$;
-- Superuser only, like 0001's triggers; without it, plinth.secure_new_relations() (0015) hands
-- new relations over instead.
do $$
begin
  drop event trigger if exists plinth_public_owner;
  create event trigger plinth_public_owner on ddl_command_end execute function plinth.give_public_to_runner();
exception when insufficient_privilege then
  null;
end
$$;

-- Objects already in public when this migration runs (an upgraded project).
do $$
declare
  r record;
begin
  for r in
    select c.oid, format('%I.%I', n.nspname, c.relname) as ident,
           case c.relkind when 'v' then 'view' when 'm' then 'materialized view' else 'table' end as kind
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'm')
      and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')
  loop
    begin
      execute format('alter %s %s owner to plinth_sql', r.kind, r.ident);
    exception when insufficient_privilege then
      null; -- owned by a role the connecting one is not a member of (not a superuser)
    end;
  end loop;
end
$$;
