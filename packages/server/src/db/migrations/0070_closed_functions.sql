-- Functions of public are closed to anon and authenticated until granted, like tables until a
-- policy opens them: `POST /api/v1/rpc/{function}` (REST, docs/api.md §2.1) calls any function of
-- public the caller's role may execute, so a helper written for a policy or a migration must
-- not become an endpoint by being created. Open one on purpose:
--   grant execute on function add_todo(text) to authenticated;
--
-- PostgreSQL gives EXECUTE on every new function to PUBLIC, and 0001 and 0003 added default
-- grants to the API roles. `alter default privileges in schema public revoke … from public`
-- does nothing (per-schema entries only add to the global defaults), so:
--   1. the per-schema grants of 0001/0003 are taken back, and the global default is revoked from
--      PUBLIC for the owner and for plinth_sql (the SQL runner): a function they create in
--      public is closed from its first moment;
--   2. the global default reaches every schema, so plinth.secure_new_functions() gives PUBLIC
--      back to each new function outside public (and to extensions' functions, wherever they
--      are), as PostgreSQL would have; in public it closes functions made by any other role
--      (revoke from PUBLIC, anon and authenticated; grant to service and plinth_sql). It runs
--      from an event trigger (a superuser, PGlite) and, without one, with
--      plinth.secure_new_relations() (0015): after each statement of the SQL runner and of
--      `plinth migrate`, and when the catalog poll sees a change (src/db/ddl-watch.ts).
-- Functions that exist when this runs are left as they are (an upgraded project's policies may
-- call them). docs/security.md, "Functions are closed until granted".

alter default privileges in schema public revoke execute on functions from anon, authenticated;
alter default privileges for role plinth_sql in schema public revoke execute on functions from anon, authenticated;
alter default privileges revoke execute on functions from public;
alter default privileges for role plinth_sql revoke execute on functions from public;
-- Plinth's own schemas keep PostgreSQL's default at once (the API roles call auth.uid() & co.).
alter default privileges in schema plinth grant execute on functions to public;
alter default privileges in schema auth grant execute on functions to public;
do $$
begin
  if exists (select 1 from pg_namespace where nspname = 'storage') then
    execute 'alter default privileges in schema storage grant execute on functions to public';
  end if;
end
$$;

create table if not exists plinth.known_functions (oid oid primary key);
alter table plinth.known_functions enable row level security;

insert into plinth.known_functions (oid)
select p.oid from pg_proc p
where p.pronamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
on conflict do nothing;

-- Runs as its owner (the database owner) whoever calls it: an event trigger runs as the role that
-- made the function. It only closes new functions of public and gives new ones elsewhere
-- PostgreSQL's default, so every role may call it.
create or replace function plinth.secure_new_functions() returns integer
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  r record;
  n integer := 0;
begin
  delete from plinth.known_functions k where not exists (select 1 from pg_proc p where p.oid = k.oid);
  for r in
    with fresh as (
      insert into plinth.known_functions (oid)
      select p.oid from pg_proc p
      where p.pronamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
      on conflict do nothing
      returning oid
    )
    select p.oid, p.prokind,
           p.pronamespace = 'public'::regnamespace and p.prokind in ('f', 'p')
             and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
             as closed,
           format('%s %s', case p.prokind when 'p' then 'procedure' else 'function' end, p.oid::regprocedure) as ident
    from fresh join pg_proc p on p.oid = fresh.oid
    order by p.oid
  loop
    begin
      if r.closed then
        execute format('revoke execute on %s from public, anon, authenticated', r.ident);
        execute format('grant execute on %s to service, plinth_sql', r.ident);
      else
        execute format('grant execute on %s to public', r.ident);
      end if;
      n := n + 1;
    exception when insufficient_privilege then
      -- Owned by a role the owner is not a member of: it keeps what its owner gave it. Tried
      -- again next time, in case it changes hands.
      delete from plinth.known_functions where oid = r.oid;
    end;
  end loop;
  return n;
end
$$;
grant execute on function plinth.secure_new_functions() to public;

create or replace function plinth.on_function_ddl() returns event_trigger
language plpgsql
as $$
begin
  perform plinth.secure_new_functions();
end
$$;

-- Superuser only, like 0001's triggers; without it, secure_new_relations() below does the work.
do $$
begin
  drop event trigger if exists plinth_functions_ddl_end;
  create event trigger plinth_functions_ddl_end on ddl_command_end
    when tag in ('CREATE FUNCTION', 'CREATE PROCEDURE', 'CREATE EXTENSION', 'ALTER EXTENSION', 'CREATE AGGREGATE')
    execute function plinth.on_function_ddl();
exception when insufficient_privilege then
  null;
end
$$;

-- Without event triggers: 0015's function, which the SQL runner, `plinth migrate` and the
-- catalog poll call, now secures new functions too. Kept under a new name and called, so its
-- body stays where it was written.
do $$
begin
  if to_regprocedure('plinth.secure_new_relations_0015()') is null then
    alter function plinth.secure_new_relations() rename to secure_new_relations_0015;
  end if;
end
$$;

create or replace function plinth.secure_new_relations() returns integer
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
  select plinth.secure_new_relations_0015() + case when plinth.ddl_mode() = 'poll' then plinth.secure_new_functions() else 0 end
$$;
grant execute on function plinth.secure_new_relations() to public;

-- The catalog poll's fingerprint (0015) also changes with functions: created, replaced, dropped,
-- granted (the schema cache lists functions, and new ones elsewhere are secured above).
do $$
begin
  if to_regprocedure('plinth.ddl_fingerprint_0015()') is null then
    alter function plinth.ddl_fingerprint() rename to ddl_fingerprint_0015;
  end if;
end
$$;

create or replace function plinth.ddl_fingerprint() returns text
language sql stable
as $$
  select concat_ws('/', plinth.ddl_fingerprint_0015(),
    (select count(*) || ':' || coalesce(sum(xmin::text::int8), 0) from pg_proc
      where pronamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)))
$$;
