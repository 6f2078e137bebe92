-- Phone sign-in codes (src/auth/phone). One live code per number: a new code replaces the
-- old one. Only a SHA-256 of the code is kept; wrong tries are counted and void the code.
-- RLS on, no grants: the SQL runner's role cannot read it.

create table if not exists auth.phone_codes (
  phone text primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  code_hash text not null,
  attempts int not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
alter table auth.phone_codes enable row level security;
