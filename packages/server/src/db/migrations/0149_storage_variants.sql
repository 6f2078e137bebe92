-- Stored image transforms (src/storage/image-cache.ts, docs/storage.md "Image transforms"): the
-- result of a transform is kept in the storage backend under `<bucket_id>/<version>.t<hash of
-- the options>`, beside the original's `<bucket_id>/<version>`, and named here so that it goes
-- with the object: when the object's bytes are collected (storage.garbage, sweep.ts) the
-- variants of that version are deleted with them. At most 16 per version (image-cache.ts), so a
-- client asking for every size cannot fill the backend. No grants and RLS on: only the server
-- reads and writes it.
create table if not exists storage.variants (
  key text primary key,
  version uuid not null,
  content_type text not null,
  size bigint not null,
  at timestamptz not null default now()
);
create index if not exists variants_version on storage.variants (version);
alter table storage.variants enable row level security;
