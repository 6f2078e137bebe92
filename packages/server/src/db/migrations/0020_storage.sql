-- File storage (docs/storage.md, src/storage/). Buckets and object metadata live here; the bytes live
-- in the storage backend (disk or S3) under the key `<bucket_id>/<version>`, never under a name
-- a client chose, so no object name can reach outside the storage root. Access to objects is
-- decided by the project's row-level security policies on storage.objects, exactly as for its
-- tables: the server runs each object operation as the caller's role with its claims
-- (plinth.run_as), and the SQL of the operation is the policy's command: upload = INSERT,
-- download, list and sign = SELECT, upsert and move = UPDATE, delete = DELETE.

create schema if not exists storage;
grant usage on schema storage to anon, authenticated, service, plinth_sql;
-- The project may add its own tables here from the SQL runner (closed: see the end of this file).
grant create on schema storage to plinth_sql;

create table if not exists storage.buckets (
  id text primary key check (id ~ '^[a-z0-9][a-z0-9_.-]{0,62}$'),
  public boolean not null default false,
  file_size_limit bigint check (file_size_limit > 0),
  allowed_mime_types text[],
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Buckets are managed with the secret key (or from the SQL runner); the API roles see none.
alter table storage.buckets enable row level security;
grant select, insert, update, delete on storage.buckets to service, plinth_sql;

create table if not exists storage.objects (
  id uuid primary key default gen_random_uuid(),
  -- No cascade: a bucket with objects cannot be deleted (409 bucket_not_empty).
  bucket_id text not null references storage.buckets (id),
  name text not null check (octet_length(name) between 1 and 1024),
  owner uuid,
  size bigint not null check (size >= 0),
  mime_type text not null,
  etag text not null,
  metadata jsonb not null default '{}',
  -- The bytes' key in the backend is `<bucket_id>/<version>`: a new version for every upload,
  -- so an upload never overwrites the bytes a committed row points to.
  version uuid not null unique,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (bucket_id, name)
);
-- Listing a folder is a prefix scan of the names of one bucket.
create index if not exists objects_bucket_name_prefix on storage.objects (bucket_id, name text_pattern_ops);

-- Closed until the project writes a policy, like every table of public.
alter table storage.objects enable row level security;
grant select, insert, update, delete on storage.objects to anon, authenticated, service;
-- The SQL runner's role owns it so the project can write policies on it from the runner
-- (`create policy` needs the owner); plinth_sql bypasses RLS, as the runner does everywhere.
alter table storage.objects owner to plinth_sql;

-- Bytes to delete once the row that pointed to them is gone (a delete, an upsert that replaced
-- them, a bucket emptied from SQL). Written by the trigger below in the same transaction as the
-- change, so a rolled-back change keeps its bytes and a committed one cannot forget them; the
-- server deletes the keys after the commit and the periodic sweep picks up what a crash left.
create table if not exists storage.garbage (
  key text primary key,
  at timestamptz not null default now()
);
alter table storage.garbage enable row level security;

create or replace function storage.collect_garbage() returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'DELETE' or old.version is distinct from new.version then
    insert into storage.garbage (key) values (old.bucket_id || '/' || old.version) on conflict do nothing;
  end if;
  return null;
end
$$;
revoke all on function storage.collect_garbage() from public;
drop trigger if exists objects_garbage on storage.objects;
create trigger objects_garbage after update or delete on storage.objects
  for each row execute function storage.collect_garbage();

-- One sweep of orphans at a time across instances: the instance whose update moves `last_at`
-- runs it (src/storage/sweep.ts).
create table if not exists storage.sweeps (
  id int primary key check (id = 1),
  last_at timestamptz not null default '-infinity'
);
insert into storage.sweeps (id) values (1) on conflict do nothing;
alter table storage.sweeps enable row level security;

-- Runs a write as the caller and undoes it: an upload asks the policies before it reads the
-- body, so a refused upload is refused at once rather than after its bytes (src/storage/
-- service.ts). The statement runs with the caller's rights (security invoker) inside a block
-- whose raise rolls it back; any other error (42501 from a policy, 23505 for an existing name)
-- goes out as it is.
create or replace function storage.dry_run(_stmt text, _params text[])
returns table (body text, n bigint, total bigint)
language plpgsql volatile
as $$
begin
  begin
    execute _stmt using _params;
    raise exception 'dry run' using errcode = 'PLDRY';
  exception when sqlstate 'PLDRY' then
    null;
  end;
  return query select null::text, 0::bigint, null::bigint;
end
$$;
revoke all on function storage.dry_run(text, text[]) from public;
grant execute on function storage.dry_run(text, text[]) to anon, authenticated, service;

-- Helpers for policies, as other platforms name them:
-- `(storage.foldername(name))[1] = auth.uid()::text` keeps each user in a folder of their own.
create or replace function storage.foldername(name text) returns text[]
language sql immutable
as $$
  select (string_to_array(name, '/'))[1:cardinality(string_to_array(name, '/')) - 1]
$$;
create or replace function storage.filename(name text) returns text
language sql immutable
as $$
  select (string_to_array(name, '/'))[cardinality(string_to_array(name, '/'))]
$$;
create or replace function storage.extension(name text) returns text
language sql immutable
as $$
  select case when storage.filename(name) like '%.%' then lower(regexp_replace(storage.filename(name), '^.*\.', '')) else '' end
$$;
grant execute on function storage.foldername(text), storage.filename(text), storage.extension(text)
  to anon, authenticated, service, plinth_sql;

-- A table the project adds to the storage schema is closed like one of public: no default
-- privileges give the API roles anything there, and this trigger turns on row-level security.
-- Event triggers need a superuser; without one (hosted PostgreSQL) the missing privileges
-- alone keep such a table closed.
create or replace function storage.on_ddl_end() returns event_trigger
language plpgsql
as $$
declare
  obj record;
begin
  for obj in select * from pg_event_trigger_ddl_commands() loop
    if obj.schema_name = 'storage' and obj.object_type = 'table'
       and obj.command_tag in ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO') then
      execute format('alter table %s enable row level security', obj.object_identity);
    end if;
  end loop;
end
$$;
do $$
begin
  drop event trigger if exists plinth_storage_ddl_end;
  create event trigger plinth_storage_ddl_end on ddl_command_end execute function storage.on_ddl_end();
exception when insufficient_privilege then
  raise notice 'storage: no event trigger (not a superuser); new storage tables stay closed by their missing grants';
end
$$;
