-- Two reads of the change log (0080_realtime.sql) that grew with it, found while measuring the
-- webhooks' fan-out (every consumer pays them, every instance, every poll):
--
-- 1. realtime.read found the batches of its range with
-- `seq_from <= _upto and seq_from + n - 1 > _after`: only the first bound can use the primary key,
-- so every read scanned every batch kept (a batch per numbering run with changes: about a hundred a
-- second under a write load, 24 hours of them by default). Measured on a database with 517 batches:
-- a sequential scan of all 517 per read; the cost grew with every batch until retention trimmed
-- them, for every reader (each instance's realtime feed, the webhooks' fan-out).
-- Same result, with the lower bound found through the primary key first: the last batch starting
-- at or before `_after + 1` (the one holding the first seq wanted), then the range up to `_upto`.
--
-- 2. realtime.sequence asked whether committed changes wait behind an older transaction with
-- `select 1 from realtime.changes where xid >= h limit 1`, which PostgreSQL ran as a sequential
-- scan of the whole log when there was none (measured: 0.7 ms over 18,325 changes, every poll, up
-- to a hundred polls a second per instance under writes). The same question, walking the index.
create or replace function realtime.read(_after bigint, _upto bigint, _table text default null)
returns table (seq bigint, table_name text, op text, "row" jsonb, old jsonb, written_at timestamptz)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select r.seq, r.table_name, r.op, r."row", r.old, r.written_at from (
    select b.seq_from - 1 + row_number() over (partition by b.seq_from order by c.xid, c.id) as seq,
           c.table_name, c.op, c."row", c.old, c.written_at
    from realtime.batches b
    join realtime.changes c on c.xid >= b.xid_from and c.xid < b.xid_to
    where b.seq_from <= _upto
      and b.seq_from >= coalesce((select max(x.seq_from) from realtime.batches x where x.seq_from <= _after + 1), 0)
      and b.seq_from + b.n - 1 > _after
  ) r
  where r.seq > _after and r.seq <= _upto and (_table is null or r.table_name = _table)
  order by r.seq
$$;
revoke all on function realtime.read(bigint, bigint, text) from public;

create or replace function realtime.sequence(_wait boolean default true)
returns table (last_seq bigint, numbered bigint, waiting bigint)
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  h xid8;
  prev xid8;
  base bigint;
  n bigint := 0;
begin
  if _wait then
    perform pg_advisory_xact_lock(726354080);
  elsif not pg_try_advisory_xact_lock(726354080) then
    return query select s.last_seq, 0::int8, 0::int8 from realtime.state s where s.id = 1;
    return;
  end if;
  -- A fresh snapshot, taken after the lock: it sees the previous run's commit.
  h := pg_snapshot_xmin(pg_current_snapshot());
  select s.last_seq, s.horizon into base, prev from realtime.state s where s.id = 1;
  if h > prev then
    select count(*) into n from realtime.changes c where c.xid >= prev and c.xid < h;
    -- No change in the range: nothing can appear in it any more, so the next batch may start
    -- at prev all the same (and state is not written at every poll).
    if n > 0 then
      insert into realtime.batches (seq_from, n, xid_from, xid_to) values (base + 1, n, prev, h);
      update realtime.state s set last_seq = base + n, horizon = h where s.id = 1;
      perform pg_notify('plinth_realtime', (base + n)::text);
    end if;
  end if;
  -- Ordered by the primary key, so the planner walks the index to the first such change: with
  -- `limit 1` alone it chose a sequential scan of the whole log, every poll, when none exists.
  return query select base + n, n, (select count(*) from (select 1 from realtime.changes c where c.xid >= h order by c.xid limit 1) w);
end
$$;
