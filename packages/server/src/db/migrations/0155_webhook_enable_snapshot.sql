-- A webhook switched on (created, switched back on, moved to another table) receives the changes
-- committed from then on. Its from_seq alone did not say that: the log numbers a change only once
-- every older transaction has ended (0080), so while a transaction that started earlier is still
-- open, a change committed before the switch is numbered after it, above from_seq, and was sent.
-- The switch now also keeps its transaction's snapshot, and the fan-out leaves out every change
-- whose transaction that snapshot already saw committed. realtime.read returns each change's xid
-- for that (a new last column: dropped and made again, its rights as before).

alter table plinth.webhooks add column if not exists from_snapshot pg_snapshot;

drop function if exists realtime.read(bigint, bigint, text);

create function realtime.read(_after bigint, _upto bigint, _table text default null)
returns table (seq bigint, table_name text, op text, "row" jsonb, old jsonb, written_at timestamptz, xid xid8)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select r.seq, r.current_name, r.op, r."row", r.old, r.written_at, r.xid from (
    select n.*,
           case when n.relid is null then n.table_name
                else (select c.relname::text from pg_class c where c.oid = n.relid and c.relnamespace = 'public'::regnamespace) end
             as current_name
    from (
      select b.seq_from - 1 + row_number() over (partition by b.seq_from order by c.xid, c.id) as seq,
             c.relid, c.table_name, c.op, c."row", c.old, c.written_at, c.xid
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
