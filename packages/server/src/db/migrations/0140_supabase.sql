-- What Supabase's SQL assumes of a database (issue 33, docs/supabase.md "Project folders"), on
-- every Plinth database, embedded and PostgreSQL, with and without a superuser, so a Supabase
-- CLI project's migrations and seeds apply unchanged: the role `service_role`, an `extensions`
-- schema, Supabase's columns of auth.users, auth.identities, storage.buckets and
-- storage.objects, auth.email(), realtime.messages and realtime.topic(). Idempotent like 0001.

-- service_role: Supabase's name for the secret key's role, with the rights of Plinth's
-- `service`. BYPASSRLS needs a superuser (PostgreSQL 15); a database owner without one gets the
-- role without it (README "Running on PostgreSQL": create it beforehand as `service` is).
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'service_role') then
    begin
      create role service_role nologin noinherit bypassrls;
    exception
      when duplicate_object or unique_violation then null;
      when insufficient_privilege then
        begin
          create role service_role nologin noinherit;
          raise notice 'supabase: service_role made without BYPASSRLS (not a superuser); create it beforehand with it';
        exception when duplicate_object or unique_violation then null;
        end;
    end;
  end if;
  begin
    execute format('grant service_role to %I', current_user);
  exception when unique_violation or insufficient_privilege then
    null;
  end;
  begin
    grant service_role to plinth_sql;
  exception when unique_violation or insufficient_privilege then
    null;
  end;
end
$$;

grant usage on schema public, auth to service_role;
alter default privileges in schema public grant select, insert, update, delete on tables to service_role;
alter default privileges in schema public grant usage, select on sequences to service_role;
alter default privileges in schema public grant execute on functions to service_role;
alter default privileges for role plinth_sql in schema public grant select, insert, update, delete on tables to service_role;
alter default privileges for role plinth_sql in schema public grant usage, select on sequences to service_role;
alter default privileges for role plinth_sql in schema public grant execute on functions to service_role;
grant select, insert, update, delete on all tables in schema public to service_role;
grant usage, select on all sequences in schema public to service_role;
grant execute on function auth.jwt(), auth.uid(), auth.role() to service_role;

-- The extensions schema Supabase installs extensions into (its search path is
-- `"$user", public, extensions`), with pgcrypto and uuid-ossp (the embedded database loads both;
-- a PostgreSQL without them keeps the schema empty).
create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service, service_role, plinth_sql;
alter default privileges in schema extensions grant execute on functions to anon, authenticated, service, service_role, plinth_sql;
do $$
declare
  e text;
begin
  foreach e in array array['pgcrypto', 'uuid-ossp'] loop
    if not exists (select 1 from pg_extension where extname = e)
       and exists (select 1 from pg_available_extensions where name = e) then
      begin
        execute format('create extension if not exists %I schema extensions', e);
      exception when insufficient_privilege or undefined_file or feature_not_supported then
        raise notice 'supabase: extension % not created (%)', e, sqlerrm;
      end;
    end if;
  end loop;
end
$$;
grant execute on all functions in schema extensions to anon, authenticated, service, service_role, plinth_sql;

-- auth.email(), beside 0001's auth.uid(), auth.role() and auth.jwt().
create or replace function auth.email() returns text
language sql stable
as $$
  select nullif(auth.jwt() ->> 'email', '')
$$;
grant execute on function auth.email() to anon, authenticated, service, service_role, plinth_sql;

-- auth.users with GoTrue's columns, so Supabase's SQL (a seed inserting users, a policy joining
-- them) runs. Plinth's own columns stay what its auth reads; these are kept as written.
alter table auth.users
  add column if not exists instance_id uuid,
  add column if not exists aud varchar(255),
  add column if not exists role varchar(255),
  add column if not exists encrypted_password varchar(255),
  add column if not exists invited_at timestamptz,
  add column if not exists confirmation_token varchar(255),
  add column if not exists confirmation_sent_at timestamptz,
  add column if not exists recovery_token varchar(255),
  add column if not exists recovery_sent_at timestamptz,
  add column if not exists email_change_token_new varchar(255),
  add column if not exists email_change varchar(255),
  add column if not exists email_change_sent_at timestamptz,
  add column if not exists raw_app_meta_data jsonb,
  add column if not exists raw_user_meta_data jsonb,
  add column if not exists is_super_admin boolean,
  add column if not exists phone_change text default '',
  add column if not exists phone_change_token varchar(255) default '',
  add column if not exists phone_change_sent_at timestamptz,
  add column if not exists email_change_token_current varchar(255) default '',
  add column if not exists email_change_confirm_status smallint default 0,
  add column if not exists reauthentication_token varchar(255) default '',
  add column if not exists reauthentication_sent_at timestamptz,
  add column if not exists is_sso_user boolean not null default false,
  add column if not exists deleted_at timestamptz,
  add column if not exists is_anonymous boolean not null default false;
do $$
begin
  alter table auth.users add column confirmed_at timestamptz generated always as (least(email_confirmed_at, phone_confirmed_at)) stored;
exception when duplicate_column then
  null;
end
$$;

-- A password hash written into auth.users (a seed's `crypt('…', gen_salt('bf'))`, a user
-- exported from Supabase) goes where Plinth keeps hashes, auth.passwords, out of the readable
-- user row: the user signs in with it (bcrypt is verified and rehashed at sign-in).
create or replace function auth.take_encrypted_password() returns trigger
language plpgsql
as $$
begin
  insert into auth.passwords (user_id, hash) values (new.id, new.encrypted_password)
  on conflict (user_id) do update set hash = excluded.hash, updated_at = now();
  update auth.users set encrypted_password = null where id = new.id;
  return null;
end
$$;
drop trigger if exists take_encrypted_password on auth.users;
create trigger take_encrypted_password after insert or update of encrypted_password on auth.users
  for each row when (new.encrypted_password is not null and new.encrypted_password <> '')
  execute function auth.take_encrypted_password();

-- auth.identities with GoTrue's columns; provider_id and Plinth's provider_user_id are one.
alter table auth.identities
  add column if not exists provider_id text,
  add column if not exists identity_data jsonb not null default '{}'::jsonb,
  add column if not exists last_sign_in_at timestamptz,
  add column if not exists updated_at timestamptz not null default now();
create or replace function auth.identities_provider_id() returns trigger
language plpgsql
as $$
begin
  new.provider_user_id := coalesce(new.provider_user_id, new.provider_id);
  new.provider_id := coalesce(new.provider_id, new.provider_user_id);
  return new;
end
$$;
drop trigger if exists identities_provider_id on auth.identities;
create trigger identities_provider_id before insert or update on auth.identities
  for each row execute function auth.identities_provider_id();

-- storage with Supabase's columns and helpers (foldername, filename, extension are 0020's).
grant usage on schema storage to service_role;
grant select, insert, update, delete on storage.buckets, storage.objects to service_role;
alter table storage.buckets
  add column if not exists name text,
  add column if not exists owner uuid,
  add column if not exists owner_id text,
  add column if not exists avif_autodetection boolean default false;
alter table storage.objects
  add column if not exists owner_id text,
  add column if not exists last_accessed_at timestamptz default now(),
  add column if not exists user_metadata jsonb;
do $$
begin
  alter table storage.objects add column path_tokens text[] generated always as (string_to_array(name, '/')) stored;
exception when duplicate_column then
  null;
end
$$;
alter table storage.objects alter column version set default gen_random_uuid();

-- A row written from SQL the way Supabase's storage keeps it (`metadata` holding size and
-- mimetype, `owner` or `owner_id`) gets Plinth's columns filled from it, and the other way round.
create or replace function storage.supabase_columns() returns trigger
language plpgsql
as $$
begin
  if tg_table_name = 'buckets' then
    new.name := coalesce(new.name, new.id);
    new.owner_id := coalesce(new.owner_id, new.owner::text);
    return new;
  end if;
  new.owner_id := coalesce(new.owner_id, new.owner::text);
  if new.owner is null and new.owner_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    new.owner := new.owner_id::uuid;
  end if;
  new.size := coalesce(new.size, case when new.metadata ->> 'size' ~ '^\d+$' then (new.metadata ->> 'size')::bigint end, 0);
  new.mime_type := coalesce(new.mime_type, nullif(new.metadata ->> 'mimetype', ''), 'application/octet-stream');
  new.etag := coalesce(new.etag, nullif(new.metadata ->> 'eTag', ''), '"' || md5(new.bucket_id || '/' || new.name) || '"');
  new.version := coalesce(new.version, gen_random_uuid());
  return new;
end
$$;
drop trigger if exists supabase_columns on storage.buckets;
create trigger supabase_columns before insert or update on storage.buckets
  for each row execute function storage.supabase_columns();
drop trigger if exists supabase_columns on storage.objects;
create trigger supabase_columns before insert or update on storage.objects
  for each row execute function storage.supabase_columns();
update storage.buckets set name = id where name is null;

-- realtime.messages (Broadcast and Presence authorization: policies on it decide who may join
-- and send on a private channel) and realtime.topic(), the channel the policy is asked about.
create table if not exists realtime.messages (
  id uuid not null default gen_random_uuid() primary key,
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp not null default now(),
  inserted_at timestamp not null default now()
);
alter table realtime.messages enable row level security;
grant usage on schema realtime to anon, authenticated, service, service_role;
grant select, insert, update on realtime.messages to anon, authenticated, service, service_role;
create or replace function realtime.topic() returns text
language sql stable
as $$
  select nullif(current_setting('realtime.topic', true), '')::text
$$;
grant execute on function realtime.topic() to anon, authenticated, service, service_role, plinth_sql;
