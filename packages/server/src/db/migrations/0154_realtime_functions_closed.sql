-- 0080 closed realtime's functions to public ("nobody but the owner reads the log"). Without event
-- triggers (a database owner without superuser) they were not in 0070's plinth.known_functions,
-- so the first securing run afterwards (plinth.secure_new_relations(), called by the catalog poll)
-- took them for new functions outside public and gave them PostgreSQL's default, execute for
-- public: anon could call realtime.enable, realtime.read, realtime.trim… there. Recorded as known
-- and closed again here; what 0080 granted by name (the SQL runner, service) stays.
insert into plinth.known_functions (oid)
select p.oid from pg_proc p where p.pronamespace = 'realtime'::regnamespace
on conflict do nothing;
do $$
declare
  r record;
begin
  for r in
    select p.oid::regprocedure as ident from pg_proc p
    where p.pronamespace = 'realtime'::regnamespace
      and p.proname in ('trim', 'authorize', 'capture', 'capture_for', 'disable', 'enable', 'read', 'release_for',
                        'sequence', 'table_oid', 'tables')
  loop
    execute format('revoke all on function %s from public', r.ident);
  end loop;
end
$$;
