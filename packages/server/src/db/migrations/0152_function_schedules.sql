-- Function schedules (src/functions/schedules.ts, docs/functions.md "Schedules"): one row per
-- scheduled function, written from the project file at every start. Each instance looks for
-- due rows; the one whose conditional update moves `next_at` on runs that occurrence, so a
-- schedule runs once per occurrence however many instances there are. `lease_until` marks a run
-- in progress: a run whose instance died is reported `lost` once its lease passes (not run
-- again: it may have done part of its work), and an occurrence that comes while the previous
-- run is still going is skipped and counted in `missed` (runs never pile up). Only the server
-- reads and writes it (RLS on, no grants).
create table if not exists plinth.function_schedules (
  function text primary key,
  cron text not null,
  next_at timestamptz,
  last_started_at timestamptz,
  last_finished_at timestamptz,
  last_status text check (last_status in ('running', 'ok', 'failed', 'lost')),
  last_detail text,
  runs bigint not null default 0,
  missed bigint not null default 0,
  lease_until timestamptz
);
create index if not exists function_schedules_due on plinth.function_schedules (next_at);
alter table plinth.function_schedules enable row level security;
