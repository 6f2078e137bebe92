-- Console admin roles, invitations and the audit log (src/admin, docs/api.md §4.1,
-- docs/security.md). Internal schema, RLS on, no grants, like 0012.

-- owner (everything; the first admin), admin (everything but owners), developer (no secret
-- key, no admin management), viewer (reads only). Admins made before roles had every right:
-- they become owners. New rows name their role; the default is the least one.
alter table plinth.admins add column if not exists role text not null default 'owner'
  check (role in ('owner', 'admin', 'developer', 'viewer'));
alter table plinth.admins alter column role set default 'viewer';

-- An invitation: a one-time link (32 random bytes, only the SHA-256 kept, 7 days) that makes
-- an admin with this email and role when its holder chooses a password.
create table if not exists plinth.admin_invites (
  id uuid primary key default gen_random_uuid(),
  hash text not null unique,
  email text not null check (email = lower(btrim(email))),
  role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  invited_by uuid references plinth.admins (id) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
alter table plinth.admin_invites enable row level security;

-- Every admin action, newest first by id. admin_email is kept as it was when the action was
-- made (the admin may be removed later); null when the secret key acted.
create table if not exists plinth.admin_audit (
  id bigserial primary key,
  at timestamptz not null,
  admin_id uuid,
  admin_email text,
  action text not null,
  target text,
  details jsonb not null default '{}'::jsonb
);
alter table plinth.admin_audit enable row level security;

-- Signing keys (auth.signing_keys, 0001): a rotated key stays in the JWKS until retire_at, the
-- end of the longest life a token signed with it can have; then it is left out.
alter table auth.signing_keys add column if not exists retire_at timestamptz;
