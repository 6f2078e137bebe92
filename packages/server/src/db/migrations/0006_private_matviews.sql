-- Materialized views in public are closed to the API roles until the owner opens them.
--
-- Row-level security cannot apply to a materialized view: it stores a copy of the rows its
-- query returned to its owner at the last refresh (in Plinth usually the SQL runner's role,
-- which bypasses RLS), and every reader sees that copy whole.
-- The default privileges of 0001 and 0003 grant every new relation of public, materialized
-- views included, to anon and authenticated, so `create materialized view secrets_mv as
-- select * from secrets` published every row of an RLS-protected table through
-- `GET /api/v1/db/secrets_mv`.
--
-- Now: a new materialized view in public gets no privilege for anon and authenticated (event
-- trigger on CREATE MATERIALIZED VIEW, after the default privileges applied); the service role
-- (the secret key) keeps reading it. The ones that exist when this migration runs are closed
-- the same way, once. To publish one on purpose, grant it explicitly:
--   grant select on my_mv to anon;            -- or: to authenticated
-- Such a grant is kept by `refresh materialized view`, by renames and by restarts. Only
-- publish a materialized view whose every row every member of that role may read. Writes to a
-- materialized view answer 405 `method_not_allowed` (or 403 without the privilege).
-- Idempotent like 0001.

create or replace function plinth.close_public_matviews() returns event_trigger
language plpgsql
as $$
declare
  obj record;
begin
  for obj in select * from pg_event_trigger_ddl_commands() loop
    if obj.schema_name = 'public' and obj.object_type = 'materialized view' then
      execute format('revoke all on %s from anon, authenticated', obj.object_identity);
      execute format('grant select on %s to service', obj.object_identity);
    end if;
  end loop;
end
$$;

-- Superuser only, like 0001's triggers; without it, plinth.secure_new_relations() (0015) closes
-- new materialized views instead.
do $$
begin
  drop event trigger if exists plinth_close_matviews;
  create event trigger plinth_close_matviews on ddl_command_end
    when tag in ('CREATE MATERIALIZED VIEW')
    execute function plinth.close_public_matviews();
exception when insufficient_privilege then
  null;
end
$$;

-- Materialized views already in public when this migration runs (an upgraded project).
do $$
declare
  r record;
begin
  for r in
    select format('%I.%I', n.nspname, c.relname) as ident
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'm'
      and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')
  loop
    execute format('revoke all on %s from anon, authenticated', r.ident);
    execute format('grant select on %s to service', r.ident);
  end loop;
end
$$;
