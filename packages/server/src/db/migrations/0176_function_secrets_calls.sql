-- Functions across instances (src/functions/secrets.ts, src/functions/calls.ts,
-- docs/functions.md): the secrets set through the admin API (/api/v1/admin/function-secrets),
-- sealed with AES-256-GCM under a key derived from the server's secret key (every instance has
-- it), so every instance gives its functions the same values; and each function's recent calls
-- (status, duration, bounded console output), the last CALLS_KEPT per function, so that every
-- instance lists the calls of all and a restart keeps them. Only the server reads and writes
-- them (RLS on, no grants).
create table if not exists plinth.function_secrets (
  name text primary key,
  sealed text not null,
  updated_at timestamptz not null
);
alter table plinth.function_secrets enable row level security;

create table if not exists plinth.function_calls (
  id bigserial primary key,
  function text not null,
  at timestamptz not null,
  version integer,
  trigger text not null,
  status integer not null,
  code text,
  duration_ms double precision not null,
  logs text not null
);
create index if not exists function_calls_recent on plinth.function_calls (function, at desc, id desc);
alter table plinth.function_calls enable row level security;
