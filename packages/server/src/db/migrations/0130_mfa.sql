-- Multi-factor authentication and passkeys (src/auth/mfa, src/auth/passkeys; docs/securing-accounts.md).
-- Every table: RLS on, no grants (neither the API roles nor the SQL runner's role read them:
-- TOTP secrets are secrets). Idempotent like the others.

-- The assurance level a session was opened at (aal1: one factor; aal2: a second factor or a
-- passkey with user verification) and how (amr: [{method, timestamp}]). Only ever lowered in
-- place (the last factor removed, an admin reset); a step up opens a new session.
alter table auth.sessions add column if not exists aal text not null default 'aal1';
alter table auth.sessions add column if not exists amr jsonb not null default '[]'::jsonb;

-- TOTP factors (RFC 6238). `last_step`: the time step of the last code accepted; a code of
-- that step or an earlier one is refused, so each code works once.
create table if not exists auth.mfa_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  factor_type text not null check (factor_type in ('totp')),
  friendly_name text,
  secret text not null, -- base32, what the authenticator app holds too
  status text not null default 'unverified' check (status in ('unverified', 'verified')),
  last_step bigint,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index if not exists mfa_factors_user on auth.mfa_factors (user_id);
alter table auth.mfa_factors enable row level security;

-- A challenge: 5 minutes, single use, void after 5 wrong codes.
create table if not exists auth.mfa_challenges (
  id uuid primary key default gen_random_uuid(),
  factor_id uuid not null references auth.mfa_factors (id) on delete cascade,
  session_id uuid not null references auth.sessions (id) on delete cascade,
  failures int not null default 0,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  done_at timestamptz
);
create index if not exists mfa_challenges_factor on auth.mfa_challenges (factor_id);
alter table auth.mfa_challenges enable row level security;

-- Recovery codes: SHA-256 of 80 random bits each, single use; a new set replaces the old.
create table if not exists auth.recovery_codes (
  id bigint generated always as identity primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  hash text not null,
  used_at timestamptz,
  created_at timestamptz not null
);
create index if not exists recovery_codes_user on auth.recovery_codes (user_id);
alter table auth.recovery_codes enable row level security;

-- Passkeys (WebAuthn credentials). `counter`: the authenticator's signature counter, which
-- must grow (0 forever for authenticators that keep none).
create table if not exists auth.passkeys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  credential_id text not null unique, -- base64url
  public_key text not null,           -- base64url of the COSE key
  counter bigint not null default 0,
  transports jsonb not null default '[]'::jsonb,
  name text not null,
  aaguid text,
  backed_up boolean not null default false,
  created_at timestamptz not null,
  last_used_at timestamptz
);
create index if not exists passkeys_user on auth.passkeys (user_id);
alter table auth.passkeys enable row level security;

-- WebAuthn ceremonies under way: the challenge the browser signs, 5 minutes, single use.
create table if not exists auth.passkey_challenges (
  id uuid primary key default gen_random_uuid(),
  kind text not null check (kind in ('register', 'signin', 'signup')),
  challenge text not null,
  user_id uuid references auth.users (id) on delete cascade,
  session_id uuid references auth.sessions (id) on delete cascade,
  email text,
  payload jsonb not null default '{}'::jsonb,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  done_at timestamptz
);
create index if not exists passkey_challenges_expires on auth.passkey_challenges (expires_at);
alter table auth.passkey_challenges enable row level security;
