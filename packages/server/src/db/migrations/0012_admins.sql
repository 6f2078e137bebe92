-- Console admins (src/admin, docs/api.md §4.1): the project's operators, separate from end-users.
-- Own table, own sessions, the one-time setup link of a first start. Internal schema, RLS
-- on, no grants: neither the API roles nor the SQL runner's role can read them.

create table if not exists plinth.admins (
  id uuid primary key default gen_random_uuid(),
  email text not null unique check (email = lower(btrim(email))),
  password_hash text not null, -- argon2id PHC string
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_sign_in_at timestamptz
);
alter table plinth.admins enable row level security;

-- One row per console sign-in. The cookie holds 32 random bytes; only their SHA-256 is here.
-- Valid while last_seen_at is within 12 hours and expires_at (sign-in + 7 days) is ahead.
create table if not exists plinth.admin_sessions (
  hash text primary key,
  admin_id uuid not null references plinth.admins (id) on delete cascade,
  user_agent text,
  ip text,
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null
);
create index if not exists admin_sessions_admin_id on plinth.admin_sessions (admin_id);
alter table plinth.admin_sessions enable row level security;

-- The setup link printed at a start with no admin: SHA-256 of 32 random bytes, 1 hour,
-- single use (consumed by one conditional UPDATE in the transaction that makes the admin).
create table if not exists plinth.admin_setup_tokens (
  hash text primary key,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
alter table plinth.admin_setup_tokens enable row level security;

-- End-user administration: a user banned until this time cannot sign in or refresh
-- (403 user_banned, enforced by the auth area).
alter table auth.users add column if not exists banned_until timestamptz;
