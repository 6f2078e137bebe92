-- Social sign-in flows in progress (src/auth/oauth). A row is made when the browser leaves for
-- the provider and deleted when it comes back (single use: DELETE … RETURNING), so a state can
-- be redeemed once, by one instance, in the browser that started it. The PKCE verifier and the
-- nonce never leave the server. RLS on, no grants: the SQL runner's role cannot read it.

create table if not exists auth.oauth_flows (
  id text primary key,          -- SHA-256 hex of the signed state's jti
  provider text not null,
  redirect_url text not null,
  code_verifier text,           -- null for providers without PKCE
  nonce text not null,
  binding text not null,        -- SHA-256 hex of the browser's binding cookie
  expires_at timestamptz not null
);
create index if not exists oauth_flows_expires_at on auth.oauth_flows (expires_at);
alter table auth.oauth_flows enable row level security;
