-- Test sign-ins of OpenID Connect providers (src/auth/oauth/test-signin.ts): a console admin
-- starts one (POST /api/v1/settings/auth/oidc/{id}/test), signs in at the provider, and the
-- callback stores here what the provider sent instead of signing anyone in; the console reads
-- it back (GET …/tests/{test_id}). Claims of the admin's own account at the provider, kept one
-- hour. RLS on, no grants: neither the API roles nor the SQL runner's role can read them.

create table if not exists auth.oidc_tests (
  id text primary key,          -- 16 random bytes, base64url; read only with the secret key or an admin session
  provider text not null,
  issuer text not null,
  status text not null default 'pending' check (status in ('pending', 'done', 'failed')),
  result jsonb,
  created_at timestamptz not null,
  completed_at timestamptz,
  expires_at timestamptz not null
);
create index if not exists oidc_tests_expires_at on auth.oidc_tests (expires_at);
alter table auth.oidc_tests enable row level security;
