-- Database webhooks (src/webhooks, docs/webhooks.md): each matching change of the realtime change
-- log (0080_realtime.sql) POSTed, signed, to the project's endpoint, in order per webhook, at
-- least once, with retries. Internal schema, RLS on, no grants: only the server's own connection
-- reads these tables (the signing secrets and header values are here).
--
-- The path of a change: the webhooks consumer reads the log after its cursor (realtime.cursors,
-- consumer 'webhooks', so retention never trims what it has not read), and in the same transaction
-- inserts one delivery per matching webhook and moves the cursor: a change becomes its deliveries
-- once, whichever instance does it and whenever one dies. A webhook's deliveries are then sent
-- one at a time in id order (= seq order) by the instance holding the webhook's lease.

create table if not exists plinth.webhooks (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 100),
  table_name text not null,
  events text[] not null check (cardinality(events) between 1 and 3 and events <@ array['insert', 'update', 'delete']),
  url text not null check (char_length(url) between 1 and 2048),
  -- REST filters (`eq.status=paid&gt.total=100`) tested on the row as written; null: every row.
  filter text,
  -- Extra request headers {name: value}. Values are write-only in the API (they are often a
  -- receiver's credential).
  headers jsonb not null default '{}'::jsonb,
  -- The HMAC-SHA256 key of Plinth-Signature. Kept as is, not hashed: signing needs it. Shown once.
  secret text not null,
  -- After a rotation the old secret signs too (a second v1=) until this time, so a receiver can
  -- switch without losing a delivery.
  previous_secret text,
  previous_secret_until timestamptz,
  enabled boolean not null default true,
  -- Changes with a seq above this are delivered (set at creation, at re-enabling, at a table change).
  from_seq bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The send queue's lease: the instance holding it sends this webhook's deliveries, in order;
  -- one that dies loses it after OUTBOX_LEASE_SECONDS and another takes over.
  lease_until timestamptz,
  lease_token uuid
);
alter table plinth.webhooks enable row level security;

create table if not exists plinth.webhook_deliveries (
  id bigint generated always as identity primary key,
  webhook_id uuid not null references plinth.webhooks (id) on delete cascade,
  seq bigint not null,
  event text not null check (event in ('insert', 'update', 'delete')),
  table_name text not null,
  -- The exact bytes POSTed (and signed): the same at every attempt and at a redelivery.
  body text not null,
  -- The row would have made the body larger than 256 KiB: the body holds the primary key only.
  truncated boolean not null default false,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  attempts int not null default 0,
  next_attempt_at timestamptz not null default now(),
  -- The last attempt: the receiver's HTTP status (null: no answer), the start of its answer or
  -- what went wrong, and how long it took.
  response_status int,
  response text,
  duration_ms int,
  redelivery_of bigint,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  sent_at timestamptz
);
-- The queue (the head of each webhook's queued deliveries) and the log (newest first). Two
-- indexes only: each is written at every delivery made and sent (the hourly pruning of the log
-- reads the table instead).
create index if not exists webhook_deliveries_queue on plinth.webhook_deliveries (webhook_id, id) where status = 'queued';
create index if not exists webhook_deliveries_log on plinth.webhook_deliveries (webhook_id, id desc);
alter table plinth.webhook_deliveries enable row level security;

-- The consumer's position in the change log, from now on (retention keeps what it has not read).
insert into realtime.cursors (consumer, seq) select 'webhooks', s.last_seq from realtime.state s where s.id = 1
on conflict (consumer) do nothing;
