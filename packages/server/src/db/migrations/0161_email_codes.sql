-- Email one-time codes (auth/one-time.ts, docs/auth.md): each mailed link also carries a
-- 6-digit code, good for the same token (same lifetime, used once). Only a hash of the code is
-- kept, salted with the link token's hash; wrong codes for an address are counted on each of
-- its live tokens, and a token that has taken 5 wrong codes no longer takes a code (its link
-- still works).
alter table auth.one_time_tokens add column if not exists code_hash text;
alter table auth.one_time_tokens add column if not exists code_attempts integer not null default 0;
