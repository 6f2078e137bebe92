-- Resumable (TUS) uploads under way (src/storage/resumable.ts, docs/storage.md "Resumable
-- uploads"): an upload's state lives here, not on one instance's disk, so any instance behind a
-- load balancer continues it. The bytes are where every instance reaches them: on the disk
-- backend a file under the shared storage directory (`uploads/<id>.part`), on S3 a multipart
-- upload (`handle`, its parts' ETags in `parts`, the bytes past the last whole part in `tail`).
-- `writer` is the PATCH appending now and `writer_until` its lease (ms on the server's clock): a
-- PATCH claims the row only at the offset it states and while no other holds it, so two PATCHes
-- at one offset on two instances cannot both append (the loser is TUS's 409). `expires_at` (ms)
-- is when an abandoned upload is swept (its file deleted, its multipart aborted).
-- No grants and RLS on: only the server reads and writes it.
create table if not exists storage.uploads (
  id uuid primary key,
  bucket_id text not null,
  name text not null,
  length bigint not null,
  content_type text not null,
  metadata jsonb,
  upsert boolean not null,
  creator text not null,
  expires_at bigint not null,
  received bigint not null default 0,
  handle text not null default '',
  parts jsonb not null default '[]',
  tail bytea not null default ''::bytea,
  writer uuid,
  writer_until bigint
);
create index if not exists uploads_expires on storage.uploads (expires_at);
alter table storage.uploads enable row level security;
revoke all on storage.uploads from public;
