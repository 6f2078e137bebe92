-- One round trip per API request (src/rest/execute.ts). PostgREST's way — a transaction that
-- sets role and claims, then runs the statement — costs BEGIN, a set_config query, the
-- statement and COMMIT: four statements and three round trips through the driver. This
-- function does the same in one statement: it sets the role and the claims for the current
-- transaction (here the statement's own), then plans and runs the statement with EXECUTE, so
-- row-level security applies to it as the new role. `_stmt` is built by Plinth's SQL stage
-- only (identifiers resolved in the schema cache and quoted); its values arrive in `_params`
-- as `$1[1]`, `$1[2]`, … — never in the text.
--
-- The statement returns one row (body, n, total) when `_rows`; otherwise its row count is
-- returned as n (Prefer: return=minimal). `_uid` is the claims' `sub` (a uuid), '-' for no
-- user, or null when the caller did not work it out (auth.uid() then reads the claims).
create or replace function plinth.run_as(_role text, _claims text, _uid text, _stmt text, _params text[], _rows boolean)
returns table (body text, n bigint, total bigint)
language plpgsql volatile
as $$
declare
  affected bigint;
begin
  perform set_config('role', _role, true), set_config('request.jwt.claims', _claims, true),
    set_config('request.jwt.claim.sub', coalesce(_uid, ''), true);
  if _rows then
    return query execute _stmt using _params;
  else
    execute _stmt using _params;
    get diagnostics affected = row_count;
    return query select null::text, affected, null::bigint;
  end if;
end
$$;

-- Only the server's own connection may call it: a caller could name any role.
revoke all on function plinth.run_as(text, text, text, text, text[], boolean) from public;

-- auth.uid() is evaluated for every row a policy looks at, and parsing the claims' JSON each
-- time cost about 7 µs per row. run_as hands it the sub ready-made in request.jwt.claim.sub
-- ('-' for no user). Where that setting is empty — claims set by hand, as in the SQL runner
-- (`set local request.jwt.claims = '{"sub": …}'`) — it still reads the claims.
--
-- PL/pgSQL rather than SQL on purpose: a SQL function is inlined into every policy that calls
-- it, and planning the inlined expression cost PostgreSQL about 70 µs more per request than
-- planning a call (measured with EXPLAIN on the bench's owner policy). As a stable call it is
-- still used as an index key, evaluated once per scan.
create or replace function auth.uid() returns uuid
language plpgsql stable
as $$
declare
  sub text := current_setting('request.jwt.claim.sub', true);
begin
  if sub = '-' then
    return null;
  end if;
  if sub is null or sub = '' then
    sub := auth.jwt() ->> 'sub';
    if sub is null or sub !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      return null;
    end if;
  end if;
  return sub::uuid;
end
$$;
