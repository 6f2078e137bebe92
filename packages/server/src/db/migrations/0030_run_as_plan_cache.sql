-- plinth.run_as (0008, 0014) with a plan cache. `EXECUTE _stmt` parsed, analysed, rewritten
-- and planned the request's statement on every call: most of the PostgreSQL CPU of an API
-- request. The REST API sends few distinct statements (values are parameters, never text), so
-- each connection now PREPAREs a statement once, per role (row-level security is applied when
-- a statement is rewritten, for the role it is rewritten as), and EXECUTEs it by name after that.
-- Measured with the bench's insert: about 0.17 → 0.12 ms of PostgreSQL CPU per call.
--
-- Which statements this connection prepared is kept in the session setting `plinth.prepared`
-- (a list of names), set only here and only after the PREPARE succeeded. A transaction that
-- aborts takes its change of that setting back while the prepared statement (not
-- transactional) stays: the next call prepares again, meets the old one, and replaces it. So
-- the setting never names a statement that is not ours: a statement prepared under our name by
-- anyone else (SQL run through the runner on PGlite's one connection; its cleanup resets every
-- setting) is replaced before it is used. At most 200 statements per connection: then ours are
-- deallocated and the list starts again, so no request pattern grows a backend's memory.
--
-- Statements without rows to return (Prefer: return=minimal) are planned each time, as before:
-- PL/pgSQL is not told the row count of an EXECUTE of a prepared statement.
--
-- The statement's values go to EXECUTE as one quoted text[] literal (quote_literal of the
-- array): PostgreSQL's own quoting, never text of ours. Everything else is as before: role and
-- claims set for the call's own transaction, and a statement that leaves the role changed is
-- refused (42501), inside the transaction, so its writes are rolled back.
create or replace function plinth.run_as(_role text, _claims text, _uid text, _stmt text, _params text[], _rows boolean)
returns table (body text, n bigint, total bigint)
language plpgsql volatile
as $$
declare
  affected bigint;
  login text := session_user;
  ps text := 'plinth_' || md5(_role || ' ' || _stmt);
  known text := coalesce(current_setting('plinth.prepared', true), '');
  stmt_name text;
begin
  perform set_config('role', _role, true), set_config('request.jwt.claims', _claims, true),
    set_config('request.jwt.claim.sub', coalesce(_uid, ''), true);
  if not _rows then
    -- Prefer: return=minimal needs the row count, which EXECUTE of a prepared statement does
    -- not report to PL/pgSQL: planned each time, as before.
    execute _stmt using _params;
    get diagnostics affected = row_count;
    return query select null::text, affected, null::bigint;
  else
    if position(ps in known) = 0 then
      if length(known) > 200 * 41 then
        for stmt_name in select name from pg_prepared_statements where name like 'plinth\_%' loop
          execute format('deallocate %I', stmt_name);
        end loop;
        known := '';
      end if;
      begin
        execute format('prepare %I(text[]) as %s', ps, _stmt);
      exception when duplicate_prepared_statement then
        execute format('deallocate %I', ps);
        execute format('prepare %I(text[]) as %s', ps, _stmt);
      end;
      perform set_config('plinth.prepared', known || ps || ',', false);
    end if;
    return query execute format('execute %I(%L)', ps, _params);
  end if;
  if current_user::text <> _role or session_user::text <> login then
    raise exception 'The request ran SQL that changed the role from % to %.', _role, current_user
      using errcode = '42501', hint = 'A function, view or trigger must not SET ROLE, RESET ROLE or SET SESSION AUTHORIZATION.';
  end if;
end
$$;
revoke all on function plinth.run_as(text, text, text, text, text[], boolean) from public;
