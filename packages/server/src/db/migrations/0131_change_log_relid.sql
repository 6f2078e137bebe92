-- The change log names a table by its oid, not its name (security review round 3, R8). With the
-- name alone, `alter table diary rename to diary_2025` or `drop table diary`, then a new `diary`
-- with a looser policy, let `since: 0` replay the old table's rows (kept for the retention) to
-- whoever the new table's policy admits.
--
-- Each change now stores the trigger's tg_relid. realtime.read of one table takes only the changes
-- whose relid is that table's current oid; read of every table (the live feeds, the webhooks'
-- fan-out) names each change by its table's current name and leaves out a dropped table's. Changes
-- written before this migration have no relid: they are never replayed for a table (a `since`
-- resume can lose at most those, within the retention) and keep their stored name in the feeds.

alter table realtime.changes add column if not exists relid oid;

create or replace function realtime.capture() returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'INSERT' then
    insert into realtime.changes (relid, table_name, op, "row") values (tg_relid, tg_table_name, 'insert', to_jsonb(new));
  elsif tg_op = 'UPDATE' then
    insert into realtime.changes (relid, table_name, op, "row", old) values (tg_relid, tg_table_name, 'update', to_jsonb(new), to_jsonb(old));
  else
    insert into realtime.changes (relid, table_name, op, old) values (tg_relid, tg_table_name, 'delete', to_jsonb(old));
  end if;
  return null;
end
$$;

create or replace function realtime.read(_after bigint, _upto bigint, _table text default null)
returns table (seq bigint, table_name text, op text, "row" jsonb, old jsonb, written_at timestamptz)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select r.seq, r.current_name, r.op, r."row", r.old, r.written_at from (
    select n.*,
           case when n.relid is null then n.table_name
                else (select c.relname::text from pg_class c where c.oid = n.relid and c.relnamespace = 'public'::regnamespace) end
             as current_name
    from (
      select b.seq_from - 1 + row_number() over (partition by b.seq_from order by c.xid, c.id) as seq,
             c.relid, c.table_name, c.op, c."row", c.old, c.written_at
      from realtime.batches b
      join realtime.changes c on c.xid >= b.xid_from and c.xid < b.xid_to
      where b.seq_from <= _upto
        and b.seq_from >= coalesce((select max(x.seq_from) from realtime.batches x where x.seq_from <= _after + 1), 0)
        and b.seq_from + b.n - 1 > _after
    ) n
    where n.seq > _after and n.seq <= _upto
  ) r
  where r.current_name is not null
    and (_table is null
      or r.relid = (select c.oid from pg_class c where c.relnamespace = 'public'::regnamespace and c.relname = _table))
  order by r.seq
$$;
revoke all on function realtime.read(bigint, bigint, text) from public;
