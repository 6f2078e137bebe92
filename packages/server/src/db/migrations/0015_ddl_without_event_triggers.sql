-- Secure-by-default DDL without event triggers.
--
-- Only a superuser may create event triggers, and hosted PostgreSQL gives the database owner
-- none. Without 0001's triggers a table made in public would get the API roles' privileges from
-- the default privileges of 0001/0003 and no row-level security: open to anon. So when
-- `plinth_ddl_end` is missing (plinth.ddl_mode() = 'poll'), src/db/ddl-watch.ts instead:
--   1. revokes those default privileges on tables from anon and authenticated, so a new
--      relation is closed to them whoever creates it and however (CREATE TABLE, AS, SELECT
--      INTO, a partition, SET SCHEMA, a view, a materialized view);
--   2. calls plinth.secure_new_relations() after every statement of the SQL runner and of
--      `plinth migrate` (in the statement's own transaction, as the trigger would), and
--      whenever a poll of plinth.ddl_fingerprint() sees the catalog change (other clients):
--      it enables row-level security on each relation of public it has not seen yet and only
--      then grants the API roles on it — closed, then still closed until a policy opens it.
-- With the triggers (a superuser), secure_new_relations() does nothing and DDL is served as
-- before, through NOTIFY.

create table if not exists plinth.known_relations (oid oid primary key);
alter table plinth.known_relations enable row level security;

-- Relations of public when this runs are the project's as they are: only later ones are
-- secured (as the triggers only act on CREATE).
insert into plinth.known_relations (oid)
select c.oid from pg_class c
where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
on conflict do nothing;

create or replace function plinth.ddl_mode() returns text
language sql stable
as $$
  select case when exists (select 1 from pg_event_trigger where evtname = 'plinth_ddl_end' and evtenabled <> 'D')
    then 'event_trigger' else 'poll' end
$$;

-- What the REST API's schema cache and the OpenAPI document read about public: relations
-- (with their privileges and RLS flag), columns (with column privileges), keys, types, enum
-- labels, comments. xmin changes whenever a catalog row is rewritten and never otherwise
-- (VACUUM and ANALYZE update pg_class in place), so count and sum of xmin per catalog change
-- with any DDL and stay put without it.
create or replace function plinth.ddl_fingerprint() returns text
language sql stable
as $$
  select concat_ws('/',
    (select count(*) || ':' || coalesce(sum(xmin::text::int8), 0) from pg_class
      where relnamespace = 'public'::regnamespace),
    (select count(*) || ':' || coalesce(sum(a.xmin::text::int8), 0) from pg_attribute a
      join pg_class c on c.oid = a.attrelid where c.relnamespace = 'public'::regnamespace),
    (select count(*) || ':' || coalesce(sum(xmin::text::int8), 0) from pg_constraint
      where connamespace = 'public'::regnamespace),
    (select count(*) || ':' || coalesce(sum(xmin::text::int8), 0) from pg_type
      where typnamespace = 'public'::regnamespace),
    (select count(*) || ':' || coalesce(sum(e.xmin::text::int8), 0) from pg_enum e
      join pg_type t on t.oid = e.enumtypid where t.typnamespace = 'public'::regnamespace),
    (select count(*) || ':' || coalesce(sum(d.xmin::text::int8), 0) from pg_description d
      join pg_class c on c.oid = d.objoid and d.classoid = 'pg_class'::regclass
      where c.relnamespace = 'public'::regnamespace))
$$;

-- Runs as its owner (the database owner), whoever calls it: the SQL runner calls it after each
-- statement, in whatever role the script switched to. It can only make new relations of public
-- safe and usable, never open anything else, so every role may call it.
create or replace function plinth.secure_new_relations() returns integer
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  r record;
  n integer := 0;
begin
  if plinth.ddl_mode() = 'event_trigger' then
    return 0;
  end if;
  delete from plinth.known_relations k
  where not exists (select 1 from pg_class c where c.oid = k.oid and c.relnamespace = 'public'::regnamespace);
  -- The insert claims each relation: of two instances (or a runner and a poll) at once, the one
  -- whose row goes in secures it; the other waits for it and skips.
  for r in
    with fresh as (
      insert into plinth.known_relations (oid)
      select c.oid from pg_class c
      where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
        and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
      on conflict do nothing
      returning oid
    )
    select c.oid, c.relkind, format('public.%I', c.relname) as ident, c.relowner
    from fresh join pg_class c on c.oid = fresh.oid
    order by c.oid
  loop
    begin
      if r.relkind in ('r', 'p') then
        -- Row-level security first, privileges after: never a moment open.
        execute format('alter table %s enable row level security', r.ident);
        execute format('grant select, insert, update, delete on %s to anon, authenticated, service', r.ident);
      elsif r.relkind = 'v' then
        execute format('alter view %s set (security_invoker = true)', r.ident);
        execute format('grant select, insert, update, delete on %s to anon, authenticated, service', r.ident);
      else
        -- Materialized views (0006) and foreign tables cannot have row-level security: the
        -- secret key only, until the project grants them on purpose.
        execute format('revoke all on %s from anon, authenticated', r.ident);
        execute format('grant select on %s to service', r.ident);
      end if;
      n := n + 1;
    exception when insufficient_privilege then
      -- Owned by a role the owner is not a member of: it cannot be secured, and it is closed to
      -- the API roles (no default privileges of that role give them anything). Tried again
      -- next time, in case it changes hands.
      delete from plinth.known_relations where oid = r.oid;
      continue;
    end;
    -- As 0003's trigger does: the SQL runner's role owns what is in public, so the project can
    -- alter it from the runner.
    if r.relowner <> 'plinth_sql'::regrole::oid then
      begin
        execute format('alter %s %s owner to plinth_sql',
          case r.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end,
          r.ident);
      exception when insufficient_privilege then
        null;
      end;
    end if;
  end loop;
  return n;
end
$$;

-- Callable from any role the runner's script may have switched to. The schema shows names
-- only: its tables have RLS and no grants, and run_as stays revoked from public.
-- (Functions are executable by public by default.)
grant usage on schema plinth to public;
