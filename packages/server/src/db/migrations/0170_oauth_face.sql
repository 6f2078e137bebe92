-- GoTrue's social sign-in on /auth/v1 (src/auth/oauth, docs/supabase.md): a flow started on
-- /auth/v1/authorize or /auth/v1/user/identities/authorize comes back to /auth/v1/callback and
-- may carry the app's PKCE challenge; a link flow names the user and session that started it.
alter table auth.oauth_flows add column if not exists face text;
alter table auth.oauth_flows add column if not exists code_challenge text;
alter table auth.oauth_flows add column if not exists code_challenge_method text;
alter table auth.oauth_flows add column if not exists link_user_id uuid;
alter table auth.oauth_flows add column if not exists link_session_id uuid;

-- The `?code=` of a PKCE flow: only its SHA-256 is kept, with what the provider said of its
-- user; nothing about any account is decided until the code is exchanged with the app's
-- verifier (POST /auth/v1/token?grant_type=pkce). Single use: the exchange deletes the row
-- whatever the verifier, so a code tried with a wrong verifier is gone. Five minutes.
-- RLS on, no grants: the SQL runner's role cannot read it.
create table if not exists auth.oauth_codes (
  hash text primary key,
  provider text not null,
  profile jsonb not null,
  provider_token text,
  provider_refresh_token text,
  code_challenge text not null,
  code_challenge_method text not null,
  link_user_id uuid references auth.users (id) on delete cascade,
  link_session_id uuid,
  expires_at timestamptz not null
);
create index if not exists oauth_codes_expires_at on auth.oauth_codes (expires_at);
alter table auth.oauth_codes enable row level security;
