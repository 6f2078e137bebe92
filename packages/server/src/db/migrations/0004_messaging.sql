-- The durable outbox of emails and SMS (src/messaging). A flow inserts its message in the
-- same transaction as the user change it belongs to; a worker on any instance claims due
-- messages with FOR UPDATE SKIP LOCKED and a lease, sends them, and records the answer.
-- RLS on, no grants: only the connecting role (the server) reads these tables.
--
-- `payload` holds what the message needs to be rendered (a link with a one-time token, a
-- phone code) only until it is sent or given up: then it is emptied, so the delivery log
-- keeps no usable secret (docs/security.md).

create table if not exists plinth.outbox (
  id bigint generated always as identity primary key,
  channel text not null check (channel in ('email', 'sms')),
  kind text not null,
  recipient text not null,
  payload jsonb not null default '{}'::jsonb,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  attempts int not null default 0,
  -- When the next attempt is due (backoff), and until when a worker holds the message.
  next_attempt_at timestamptz not null default now(),
  lease_until timestamptz,
  transport text,
  last_response text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  sent_at timestamptz
);
create index if not exists outbox_due on plinth.outbox (next_attempt_at) where status = 'queued';
create index if not exists outbox_created on plinth.outbox (created_at desc);
alter table plinth.outbox enable row level security;

-- Messages captured while no SMTP server / SMS provider is configured, as they would have
-- been sent (docs/api.md §4, dev inbox). Kept for the console and for local development only.
create table if not exists plinth.dev_inbox (
  id bigint generated always as identity primary key,
  outbox_id bigint,
  channel text not null,
  kind text not null,
  recipient text not null,
  subject text,
  text_body text not null,
  html_body text,
  created_at timestamptz not null default now()
);
create index if not exists dev_inbox_created on plinth.dev_inbox (created_at desc);
alter table plinth.dev_inbox enable row level security;
