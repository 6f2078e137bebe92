-- Saved queries of the SQL runner (src/admin/saved-queries.ts, docs/api.md): named scripts the
-- project's admins keep in the project's own database, so every admin and every browser sees
-- the same list (the runner's history stays in each browser). Internal schema, RLS on, no
-- grants: neither the API roles nor the SQL runner's role can read or change them; only the
-- management routes do, as the server's own connection.
create table if not exists plinth.saved_queries (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (char_length(name) between 1 and 200 and name = btrim(name)),
  query text not null check (char_length(query) between 1 and 1000000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
alter table plinth.saved_queries enable row level security;
