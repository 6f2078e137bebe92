-- Realtime change capture (docs/realtime.md). A table opted in with `select realtime.enable('todos')`
-- gets a row trigger that appends each insert, update and delete to realtime.changes (the row
-- image, and for updates and deletes the old row: whatever a policy may need to decide who could
-- see it). realtime.sequence() numbers what committed and NOTIFYs plinth_realtime with the highest
-- seq (the number, never a row: payloads stop at 8000 bytes). The same on PGlite and PostgreSQL,
-- with or without a superuser: no logical decoding, no event trigger, no replication slot.
--
-- The writer does not NOTIFY: a transaction that notifies takes a cluster-wide lock at commit, so
-- every writer of a captured table would commit one at a time (measured: about a third fewer
-- inserts per second with a NOTIFY in the trigger than without). Each instance polls
-- realtime.sequence() instead, every 10 ms while changes come and up to every 100 ms when idle.
--
-- Numbering. The trigger cannot give the change its public number: a transaction that took
-- number 10 and commits after the one that took 11 would be skipped by a reader that already
-- moved past 11 (`seq > cursor`). So a change is written with its transaction's id (xid8) and a
-- write-order id, and realtime.sequence() numbers changes only once they are below the xmin
-- horizon of its snapshot: every transaction older than the oldest one still running has ended,
-- so nothing can appear below that line any more. Each run makes one batch: the changes with
-- xid in [previous horizon, this horizon), numbered in (xid, id) order from the last seq on. A
-- batch is a row of realtime.batches, not an update of each change: the writer pays for one
-- insert, the numbering for one row per batch. Runs go one at a time (an advisory lock, across
-- instances) and commit before the next starts, so seqs are dense and a reader of `seq > cursor`
-- (realtime.read) sees a gapless prefix: it can never skip a change. The seq is the same on every
-- instance, which is what lets a client resume on another one.
--
-- Consumers. `realtime.captured` says which consumers want a table's changes (`realtime` for the
-- WebSocket API; database webhooks add their own); the trigger stays while any does. A consumer
-- that must not lose changes keeps its position in `realtime.cursors`; retention never trims
-- past the lowest of them.

create schema if not exists realtime;

create table if not exists realtime.changes (
  xid xid8 not null default pg_current_xact_id(),
  -- Write order within a transaction; internal (the public number is the seq of realtime.read).
  id bigint generated always as identity,
  table_name text not null,
  op text not null check (op in ('insert', 'update', 'delete')),
  -- The row as written (insert, update); null for a delete.
  "row" jsonb,
  -- The row before (update, delete): the old primary key, and every column a policy may read.
  old jsonb,
  written_at timestamptz not null default clock_timestamp(),
  primary key (xid, id)
);
alter table realtime.changes enable row level security;

-- One row per numbering run: the changes with xid_from <= xid < xid_to are seqs
-- seq_from .. seq_from + n - 1, in (xid, id) order. Contiguous: a batch starts where the last ended.
create table if not exists realtime.batches (
  seq_from bigint primary key,
  n bigint not null check (n > 0),
  xid_from xid8 not null,
  xid_to xid8 not null,
  created_at timestamptz not null default now()
);
alter table realtime.batches enable row level security;

create table if not exists realtime.state (
  id int primary key default 1 check (id = 1),
  -- The highest seq given out.
  last_seq bigint not null default 0,
  -- Where the last batch ended: the next one starts here.
  horizon xid8 not null default '0',
  -- Every change up to this seq was trimmed: a `since` below it is a resume gap.
  trimmed_upto bigint not null default 0
);
insert into realtime.state (id) values (1) on conflict do nothing;
alter table realtime.state enable row level security;

create table if not exists realtime.captured (
  relid oid not null,
  consumer text not null check (consumer ~ '^[a-z][a-z0-9_]{0,31}$'),
  created_at timestamptz not null default now(),
  primary key (relid, consumer)
);
alter table realtime.captured enable row level security;

create table if not exists realtime.cursors (
  consumer text primary key check (consumer ~ '^[a-z][a-z0-9_]{0,31}$'),
  seq bigint not null default 0,
  updated_at timestamptz not null default now()
);
alter table realtime.cursors enable row level security;

-- The trigger. SECURITY DEFINER: the writer (anon, authenticated through the API, any role
-- through psql) has no privilege on realtime.changes.
create or replace function realtime.capture() returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'INSERT' then
    insert into realtime.changes (table_name, op, "row") values (tg_table_name, 'insert', to_jsonb(new));
  elsif tg_op = 'UPDATE' then
    insert into realtime.changes (table_name, op, "row", old) values (tg_table_name, 'update', to_jsonb(new), to_jsonb(old));
  else
    insert into realtime.changes (table_name, op, old) values (tg_table_name, 'delete', to_jsonb(old));
  end if;
  return null;
end
$$;

-- A plain table of public, by name; one line naming the fix otherwise.
create or replace function realtime.table_oid(_table text) returns oid
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  r record;
begin
  select c.oid, c.relkind into r from pg_class c where c.relnamespace = 'public'::regnamespace and c.relname = _table;
  if r.oid is null then
    raise exception 'There is no table "%" in the public schema.', _table using errcode = '42P01';
  end if;
  if r.relkind <> 'r' then
    raise exception '"%" is not a plain table: realtime captures the changes of tables only (not views or partitioned tables).', _table
      using errcode = '42809';
  end if;
  if not exists (select 1 from pg_constraint where conrelid = r.oid and contype = 'p') then
    raise exception 'The table "%" has no primary key: realtime names a changed row by its primary key. Add one first.', _table
      using errcode = '55000';
  end if;
  return r.oid;
end
$$;

-- Starts capturing a table's changes for `consumer`; the trigger is made when the first consumer
-- comes. Runs as its owner (the database owner), who may add triggers to the project's tables.
create or replace function realtime.capture_for(_table text, _consumer text) returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  rel oid := realtime.table_oid(_table);
begin
  insert into realtime.captured (relid, consumer) values (rel, _consumer) on conflict do nothing;
  if not exists (select 1 from pg_trigger where tgrelid = rel and tgname = 'plinth_realtime') then
    execute format('create trigger plinth_realtime after insert or update or delete on public.%I for each row execute function realtime.capture()', _table);
  end if;
  perform pg_notify('plinth_realtime_tables', _table);
end
$$;

-- Stops capturing for `consumer`; the trigger goes with the last consumer.
create or replace function realtime.release_for(_table text, _consumer text) returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  rel oid;
begin
  select c.oid into rel from pg_class c where c.relnamespace = 'public'::regnamespace and c.relname = _table;
  if rel is null then
    raise exception 'There is no table "%" in the public schema.', _table using errcode = '42P01';
  end if;
  delete from realtime.captured where relid = rel and consumer = _consumer;
  if not exists (select 1 from realtime.captured where relid = rel) then
    execute format('drop trigger if exists plinth_realtime on public.%I', _table);
  end if;
  perform pg_notify('plinth_realtime_tables', _table);
end
$$;

-- What the API and the SQL runner call (docs/realtime.md).
create or replace function realtime.enable(_table text) returns void
language sql security definer
set search_path = pg_catalog, pg_temp
as $$ select realtime.capture_for(_table, 'realtime') $$;

create or replace function realtime.disable(_table text) returns void
language sql security definer
set search_path = pg_catalog, pg_temp
as $$ select realtime.release_for(_table, 'realtime') $$;

-- Tables of public with their consumers. A dropped table's rows are left out (and cleaned by
-- realtime.sequence's housekeeping in realtime.trim).
create or replace function realtime.tables() returns table (table_name text, consumers text[], enabled boolean)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
  select c.relname::text, array_agg(k.consumer order by k.consumer), bool_or(k.consumer = 'realtime')
  from realtime.captured k join pg_class c on c.oid = k.relid
  where c.relnamespace = 'public'::regnamespace
    and exists (select 1 from pg_trigger t where t.tgrelid = c.oid and t.tgname = 'plinth_realtime')
  group by c.relname
  order by c.relname
$$;

-- Numbers the changes that are now below the xmin horizon as one batch, one run at a time across
-- instances (`_wait` false: return at once when another run holds the lock, as the polls do; it
-- numbers what this one would have). Returns the highest seq, how many it numbered, and whether
-- committed changes still wait for an older transaction to end (the caller tries again shortly).
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
  return query select base + n, n, (select count(*) from (select 1 from realtime.changes c where c.xid >= h limit 1) w);
end
$$;

-- The changes with _after < seq <= _upto (of one table, or all), oldest first: what every consumer
-- reads with its own cursor (the realtime instances; database webhooks). Keep _upto - _after
-- modest (a few thousand): a batch is ranked whole to number its changes.
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
    where b.seq_from <= _upto and b.seq_from + b.n - 1 > _after
  ) r
  where r.seq > _after and r.seq <= _upto and (_table is null or r.table_name = _table)
  order by r.seq
$$;

-- Trims the batches older than the retention, never past a consumer's cursor; some per call.
create or replace function realtime.trim(_retention interval, _batches int default 100) returns bigint
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  upto bigint;
  xid_end xid8;
  deleted bigint;
begin
  if not pg_try_advisory_xact_lock(726354081) then
    return 0;
  end if;
  select b.seq_from + b.n - 1, b.xid_to into upto, xid_end from (
    select seq_from, n, xid_to from realtime.batches
    where seq_from + n - 1 <= coalesce((select min(k.seq) from realtime.cursors k), 9223372036854775807)
      and created_at < now() - _retention
    order by seq_from limit _batches
  ) b order by b.seq_from desc limit 1;
  if upto is null then
    return 0;
  end if;
  delete from realtime.changes where xid < xid_end;
  get diagnostics deleted = row_count;
  delete from realtime.batches where seq_from <= upto;
  update realtime.state set trimmed_upto = greatest(trimmed_upto, upto) where id = 1;
  delete from realtime.captured k where not exists (select 1 from pg_class c where c.oid = k.relid);
  return deleted;
end
$$;

-- Row-level security for the policies Plinth cannot decide in memory (src/realtime/policies.ts):
-- one statement per batch of changes, for all their subscribers. `_exprs` are statements built by
-- the server from the catalog (each policy's USING expression, deparsed, and the subscription's
-- filter), evaluated on the row image with `$1` (jsonb) and the filter's values as `$2` (text[]);
-- `_subs` holds each subscriber's role, claims and uid; `_checks` is a flat list of
-- (statement, row, subscriber) triples, 1-based, grouped by subscriber. For each subscriber the
-- role and claims are set as plinth.run_as sets them, so a policy's subqueries and functions run
-- as they would in that subscriber's own read; an error counts as "not visible".
create or replace function realtime.authorize(_exprs jsonb, _rows jsonb, _subs jsonb, _checks int[]) returns boolean[]
language plpgsql volatile
as $$
declare
  entry_role text := current_user;
  entry_claims text := coalesce(current_setting('request.jwt.claims', true), '');
  entry_sub text := coalesce(current_setting('request.jwt.claim.sub', true), '');
  answers boolean[] := '{}';
  n int := coalesce(array_length(_checks, 1), 0) / 3;
  e int;
  r int;
  s int;
  current_s int := 0;
  sub jsonb;
  vals text[];
  ok boolean;
begin
  for i in 1 .. n loop
    e := _checks[3 * i - 2];
    r := _checks[3 * i - 1];
    s := _checks[3 * i];
    if s <> current_s then
      sub := _subs -> (s - 1);
      vals := array(select jsonb_array_elements_text(coalesce(sub -> 'values', '[]')));
      perform set_config('role', sub ->> 'role', true), set_config('request.jwt.claims', sub ->> 'claims', true),
        set_config('request.jwt.claim.sub', coalesce(sub ->> 'uid', '-'), true);
      current_s := s;
    end if;
    begin
      execute _exprs ->> (e - 1) into ok using _rows -> (r - 1), vals;
    exception when others then
      ok := false;
    end;
    answers := answers || coalesce(ok, false);
  end loop;
  perform set_config('role', entry_role, true), set_config('request.jwt.claims', entry_claims, true),
    set_config('request.jwt.claim.sub', entry_sub, true);
  return answers;
end
$$;

-- Nobody but the owner reads the log; the SQL runner may switch capture on and off and list it.
revoke all on all functions in schema realtime from public;
grant usage on schema realtime to plinth_sql;
grant execute on function realtime.enable(text), realtime.disable(text), realtime.tables() to plinth_sql;
-- Called through plinth.run_as as `service` (the API login's connection), never by a client.
grant usage on schema realtime to service;
grant execute on function realtime.authorize(jsonb, jsonb, jsonb, int[]) to service;
