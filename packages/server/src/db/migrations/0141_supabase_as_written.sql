-- A Supabase project folder's own migrations and seed run as written (issue 33, docs/supabase.md
-- "Where Plinth differs"): Supabase's SQL was written for a database where a new table has no
-- row-level security until the file enables it, and a new function is executable by everyone.
-- While cli/supabase-apply.ts applies those files (and only then: a transaction-local setting,
-- `plinth.as_written`), a new table of public gets the API roles' privileges without RLS and a
-- new function of public keeps PostgreSQL's default EXECUTE; everything else, and everything
-- made any other way (the SQL runner, the console, `plinth migrate`, a plinth.json project), is
-- closed until opened as before. The start names each table of public left without RLS.
--
-- Setting it opens nothing its setter could not open anyway: only a role that may create
-- tables or functions in public (the project's owner, the SQL runner) reaches this, and such a
-- role may as well write `disable row level security` or `grant execute`.
--
-- The three functions below are 0001's, 0015's and 0070's with that one condition added.

create or replace function plinth.as_written() returns boolean
language sql stable
as $$
  select coalesce(current_setting('plinth.as_written', true), '') = 'on'
$$;
grant execute on function plinth.as_written() to public;

create or replace function plinth.on_ddl_end() returns event_trigger
language plpgsql
as $$
declare
  obj record;
begin
  for obj in select * from pg_event_trigger_ddl_commands() loop
    if obj.schema_name = 'public' and obj.object_type = 'table'
       and obj.command_tag in ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO') then
      if not plinth.as_written() then
        execute format('alter table %s enable row level security', obj.object_identity);
      end if;
      execute format('grant select, insert, update, delete on %s to anon, authenticated, service', obj.object_identity);
    elsif obj.schema_name = 'public' and obj.object_type = 'view' and obj.command_tag = 'CREATE VIEW' then
      execute format('alter view %s set (security_invoker = true)', obj.object_identity);
      execute format('grant select, insert, update, delete on %s to anon, authenticated, service', obj.object_identity);
    end if;
  end loop;
  perform pg_notify('plinth_schema', 'ddl');
end
$$;

create or replace function plinth.secure_new_relations_0015() returns integer
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
        if not plinth.as_written() then
          execute format('alter table %s enable row level security', r.ident);
        end if;
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
      if r.closed and not plinth.as_written() then
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
