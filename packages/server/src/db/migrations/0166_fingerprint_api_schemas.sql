-- The catalog poll's fingerprint (0015, 0070) also changes with the tables, columns and keys of
-- schemas other than public, so a table altered in a schema `/rest/v1` serves (`[api] schemas`,
-- docs/supabase.md) reaches every instance's schema cache where there are no event triggers
-- (hosted PostgreSQL), as public's do. PostgreSQL's schemas (pg_*, information_schema, where
-- temporary tables come and go) and Plinth's own are left out: their DDL is migrations only.
create or replace function plinth.ddl_fingerprint() returns text
language sql stable
as $$
  select concat_ws('/', plinth.ddl_fingerprint_0015(),
    (select count(*) || ':' || coalesce(sum(xmin::text::int8), 0) from pg_proc
      where pronamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)),
    (select count(*) || ':' || coalesce(sum(c.xmin::text::int8), 0) || ':' || coalesce(sum(a.xmin::text::int8), 0)
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
      where n.nspname not like 'pg\_%' and n.nspname not in ('information_schema', 'public', 'auth', 'storage', 'realtime', 'plinth', 'extensions')
        and c.relkind in ('r', 'p', 'v', 'm', 'f')),
    (select count(*) || ':' || coalesce(sum(k.xmin::text::int8), 0) from pg_constraint k join pg_namespace n on n.oid = k.connamespace
      where n.nspname not like 'pg\_%' and n.nspname not in ('information_schema', 'public', 'auth', 'storage', 'realtime', 'plinth', 'extensions')))
$$;
