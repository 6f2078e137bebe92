-- Private channels' rights decided for several topics in one statement (issue 37: private join
-- throughput; src/realtime/channel-rights.ts). The same decision as before, topic by topic, in
-- the caller's transaction (which the server rolls back: nothing stays): realtime.topic() set to
-- the topic, a probe row of it written by the server's own role, then as the caller (role and
-- claims set as plinth.run_as and Db.runAs set them) reading the probe back is joining and
-- inserting a row of the topic is sending (a refusal, 42501, is "may not send"). Before, each
-- join was a transaction of its own, five statements and their round trips: 633 joins a second in
-- bench/channels.mjs against the goal's 1,000.
--
-- A statement after which the role is not the caller's (a policy's function that switched role)
-- is refused with 42501, as run_as refuses it: for the read, the whole call fails (the server then
-- decides each topic alone, as before); for the insert, inside its own subtransaction, it is a
-- refusal to send. Not security definer: it has its caller's rights (the server's login, which may
-- become the API roles); closed to public like run_as.
create or replace function plinth.channel_rights(_role text, _claims text, _uid text, _topics text[])
returns table (topic text, can_read boolean, can_write boolean)
language plpgsql volatile
as $$
declare
  t text;
  probe uuid;
begin
  foreach t in array _topics loop
    perform pg_catalog.set_config('realtime.topic', t, true);
    probe := gen_random_uuid();
    insert into realtime.messages (id, topic, extension, private) values (probe, t, 'broadcast', true);
    perform pg_catalog.set_config('role', _role, true), pg_catalog.set_config('request.jwt.claims', _claims, true),
      pg_catalog.set_config('request.jwt.claim.sub', coalesce(_uid, ''), true);
    topic := t;
    can_read := exists (
      select 1 from realtime.messages m where m.id = probe and m.topic = t and m.extension = 'broadcast'
    );
    if current_user::text <> _role then
      raise exception 'A policy on realtime.messages changed the role from % to %.', _role, current_user
        using errcode = '42501', hint = 'A function, view or trigger must not SET ROLE, RESET ROLE or SET SESSION AUTHORIZATION.';
    end if;
    begin
      insert into realtime.messages (topic, extension, private) values (t, 'broadcast', true);
      if current_user::text <> _role then
        raise exception 'A policy on realtime.messages changed the role.' using errcode = '42501';
      end if;
      can_write := true;
    exception when insufficient_privilege then
      can_write := false;
    end;
    -- Back to the server's own role for the next probe.
    reset role;
    return next;
  end loop;
end
$$;

-- Known to 0070's bookkeeping, so that without event triggers (owner mode) no securing run gives
-- it PostgreSQL's default (execute for public) over the revoke.
insert into plinth.known_functions (oid)
select 'plinth.channel_rights(text, text, text, text[])'::regprocedure::oid
on conflict do nothing;
revoke all on function plinth.channel_rights(text, text, text, text[]) from public;
