-- Account integrity (src/auth/accounts). Idempotent like the others.
--
-- banned_until: a banned user cannot sign in or refresh (403 user_banned), and the access
-- tokens of their open sessions stop working within seconds (the session gate).
alter table auth.users add column if not exists banned_until timestamptz;

-- Reauthentication codes: a signed-in user without a recent sign-in proves it is still them
-- (a 6-digit code by email or SMS) before changing their password or email. One live code per
-- user, only its SHA-256 kept, five wrong tries void it. RLS on, no grants.
create table if not exists auth.reauth_codes (
  user_id uuid primary key references auth.users (id) on delete cascade,
  code_hash text not null,
  attempts int not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
alter table auth.reauth_codes enable row level security;

-- Session lookups by the gate (id) already use the primary key; revocation by user uses
-- sessions_user_id. One-time tokens are voided by user when an address is proven or changed.
create index if not exists one_time_tokens_user on auth.one_time_tokens (user_id) where consumed_at is null;
