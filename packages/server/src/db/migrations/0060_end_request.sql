-- The role check of Db.runAs (src/db/run-as.ts). A request is now one batch of prepared
-- statements and one Sync, sent by the server itself, as a hand-written server would: role
-- and claims set for the batch's transaction, the request's statement, then this check, in
-- that transaction. plinth.run_as (0008, 0014, 0030) did the same inside PL/pgSQL, with a
-- statement parsed by EXECUTE on every call: about twice the PostgreSQL CPU per request
-- (npm run bench, issue 21).
--
-- Refused (42501), inside the transaction, so its writes are rolled back: a statement after
-- which the role is not the request's, or the session user not the connection's login (SQL
-- that switched role and did not switch back: RESET ROLE, SET ROLE, SET SESSION
-- AUTHORIZATION, set_config('role', …)). Deferred constraint triggers would fire at commit,
-- after the check: SET CONSTRAINTS ALL IMMEDIATE fires them here first, so a role they change
-- is refused too (a deferred constraint they fail fails here, with its own SQLSTATE, as it
-- would at commit).
--
-- Operators and types written with their schema: SQL a request ran may have changed the
-- search_path before this runs.
create or replace function plinth.end_request(_role text, _login text) returns void
language plpgsql volatile
as $$
begin
  set constraints all immediate;
  if current_user::pg_catalog.text operator(pg_catalog.<>) _role
     or session_user::pg_catalog.text operator(pg_catalog.<>) _login then
    raise exception 'The request ran SQL that changed the role from % to %.', _role, current_user
      using errcode = '42501', hint = 'A function, view or trigger must not SET ROLE, RESET ROLE or SET SESSION AUTHORIZATION.';
  end if;
end
$$;

-- It runs as the request's role, whichever that is (and whatever a statement switched to):
-- callable by all. It only ever refuses.
grant execute on function plinth.end_request(text, text) to public;

-- plinth.run_as stays as it was, unused by this version, for instances of the previous one
-- that share the database during a rolling restart; still callable by the server's logins only.
