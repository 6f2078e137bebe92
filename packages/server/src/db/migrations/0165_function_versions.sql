-- Deployed functions (src/functions/deployed.ts, docs/functions.md "Deploying"): each
-- `plinth functions deploy` (PUT /api/v1/admin/functions/<name>) stores the bundle as a new
-- version; `function_deployments` says which version is live (a rollback moves it, a delete
-- removes the function's rows). A live version overrides the project folder's file of the same
-- name on every instance. Only the server reads and writes them (RLS on, no grants).
create table if not exists plinth.function_versions (
  function text not null,
  version integer not null,
  layout text not null check (layout in ('plinth', 'supabase')),
  bundle text not null,
  sha256 text not null,
  created_at timestamptz not null default now(),
  primary key (function, version)
);
create table if not exists plinth.function_deployments (
  function text primary key,
  version integer not null,
  updated_at timestamptz not null default now(),
  foreign key (function, version) references plinth.function_versions (function, version)
);
alter table plinth.function_versions enable row level security;
alter table plinth.function_deployments enable row level security;
