import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { realtimeJsServer, subscribed } from '../../../test/realtime-js.js';

// Broadcast from SQL (issue 37, migration 0153): realtime.send and realtime.broadcast_changes as a
// Supabase project calls them, heard by realtime-js subscribers, after commit only.
const ADA = '00000000-0000-4000-8000-00000000a0a1';
let adaToken: string;
const rt = realtimeJsServer(async (t) => {
  // As a Supabase folder's migration runs them: the database's owner.
  await t.db.query(`
    create policy "signed in reads room topics" on realtime.messages for select to authenticated
      using (realtime.topic() like 'room:%')`);
  await t.db.query('create table public.notes (id int primary key, room text not null, body text)');
  // Supabase's documented trigger (docs "Subscribing to Database Changes", broadcast).
  await t.db.query(`
    create or replace function public.notes_changes() returns trigger
    security definer language plpgsql as $$
    begin
      perform realtime.broadcast_changes('room:' || coalesce(new.room, old.room), TG_OP, TG_OP,
        TG_TABLE_NAME, TG_TABLE_SCHEMA, NEW, OLD);
      return null;
    end $$`);
  await t.db.query(
    'create trigger notes_changes after insert or update or delete on public.notes for each row execute function public.notes_changes()',
  );
  adaToken = await t.mintToken(ADA, { email: 'ada@example.com' });
});

/** A subscriber of `topic` that records every broadcast's event and payload. */
async function listen(topic: string, priv: boolean, token?: string) {
  const client = token ? await rt.signedIn('2.0.0', token) : rt.client('2.0.0');
  const channel = client.channel(topic, { config: { private: priv } });
  const got: Array<{ event: string; payload: Record<string, unknown> }> = [];
  channel.on('broadcast', { event: '*' }, (m) => got.push({ event: m.event, payload: m.payload }));
  expect(await subscribed(channel)).toBe('SUBSCRIBED');
  return got;
}

const send = (payload: unknown, event: string, topic: string, priv?: boolean) =>
  priv === undefined
    ? rt.t.db.query('select realtime.send($1::jsonb, $2, $3)', [JSON.stringify(payload), event, topic])
    : rt.t.db.query('select realtime.send($1::jsonb, $2, $3, $4)', [JSON.stringify(payload), event, topic, priv]);

describe('realtime.send', () => {
  it("reaches the topic's subscribers with its event and payload (and the message's id), and leaves no row", async () => {
    const got = await listen('lobby', false);
    await send({ text: 'hi' }, 'chat', 'lobby', false);
    await expect.poll(() => got).toEqual([{ event: 'chat', payload: { text: 'hi', id: expect.any(String) } }]);
    await expect
      .poll(async () => (await rt.t.db.query<{ n: number }>('select count(*)::int as n from realtime.messages')).rows[0].n)
      .toBe(0);
  });

  it("reaches a member on Plinth's own protocol (/api/v1/realtime) too: one hub", async () => {
    const ws = new WebSocket(`${rt.url.replace(/\/realtime\/v1$/, '')}/api/v1/realtime?apikey=${rt.t.keys.publicKey}`);
    const got: Array<Record<string, unknown>> = [];
    ws.on('message', (data) => got.push(JSON.parse(String(data))));
    try {
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.send(JSON.stringify({ type: 'join', channel: 'plaza' }));
      await expect.poll(() => got.some((m) => m.type === 'joined' && m.channel === 'plaza')).toBe(true);
      await send({ text: 'hello' }, 'chat', 'plaza', false);
      await expect
        .poll(() => got.filter((m) => m.type === 'broadcast'))
        .toEqual([{ type: 'broadcast', channel: 'plaza', event: 'chat', payload: { text: 'hello', id: expect.any(String) } }]);
    } finally {
      ws.close();
    }
  });

  it('sends nothing for a rolled-back transaction; a later committed send arrives alone', async () => {
    const got = await listen('lobby', false);
    await expect(
      rt.t.db.transaction(async (tx) => {
        await tx.query("select realtime.send('{\"n\":1}'::jsonb, 'chat', 'lobby', false)");
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await rt.t.db.transaction(async (tx) => {
      await tx.query("select realtime.send('{\"n\":2}'::jsonb, 'chat', 'lobby', false)");
      await tx.query("select realtime.send('{\"n\":3}'::jsonb, 'chat', 'lobby', false)");
    });
    // Had the rolled-back message gone out, it would be first.
    await expect.poll(() => got.map((m) => m.payload.n)).toEqual([2, 3]);
  });

  it('private by default: a private member hears it, a public member of the same name does not', async () => {
    const priv = await listen('room:1', true, adaToken);
    const pub = await listen('room:1', false);
    await send({ secret: true }, 'e', 'room:1');
    await send({ open: true }, 'e', 'room:1', false);
    // The public member's first message is the public one: the private one never reached it.
    await expect.poll(() => pub.map((m) => m.payload)).toEqual([{ open: true, id: expect.any(String) }]);
    await expect.poll(() => priv.map((m) => m.payload)).toEqual([{ secret: true, id: expect.any(String) }]);
  });

  it("a signed-in caller's send is its insert on realtime.messages: refused without a policy (a warning), nothing sent", async () => {
    const priv = await listen('room:2', true, adaToken);
    // As a request of Ada's runs its SQL (plinth.run_as: her role and claims), a send is her insert.
    const asAda = () =>
      rt.t.db.transaction((tx) =>
        tx.query('select n from plinth.run_as($1, $2, $3, $4, $5::text[], false)', [
          'authenticated',
          JSON.stringify({ sub: ADA, role: 'authenticated' }),
          ADA,
          `select realtime.send('{"from":"ada"}'::jsonb, 'shout', ($1)[1], true)`,
          ['room:2'],
        ]),
      );
    await asAda();
    // The owner's send after it arrives first: the refused one never went out.
    await send({ owner: true }, 'e', 'room:2');
    await expect.poll(() => priv.map((m) => m.payload)).toEqual([{ owner: true, id: expect.any(String) }]);
    await rt.t.db.query(`
      create policy "ada sends on room:2" on realtime.messages for insert to authenticated
        with check (realtime.topic() = 'room:2')`);
    await asAda();
    await expect.poll(() => priv.map((m) => m.event)).toEqual(['e', 'shout']);
    expect(priv[1].payload).toEqual({ from: 'ada', id: expect.any(String) });
  });
  it('anon may not call realtime.send or realtime.broadcast_changes', async () => {
    const asAnon = (stmt: string) =>
      rt.t.db.transaction((tx) =>
        tx.query('select n from plinth.run_as($1, $2, $3, $4, $5::text[], false)', ['anon', '{"role":"anon"}', '-', stmt, []]),
      );
    await expect(asAnon(`select realtime.send('{}'::jsonb, 'e', 'lobby', false)`)).rejects.toThrow(/permission denied for function send/);
    await expect(
      asAnon(`select realtime.broadcast_changes('lobby', 'e', 'INSERT', 't', 'public', null::record, null::record)`),
    ).rejects.toThrow(/permission denied for function broadcast_changes/);
  });

  it("after a securing run (owner mode's catalog poll), anon still may call none of realtime's functions but realtime.topic()", async () => {
    await rt.t.db.query('select plinth.secure_new_relations()');
    const { rows } = await rt.t.db.query<{ f: string }>(
      `select p.proname as f from pg_proc p
       where p.pronamespace = 'realtime'::regnamespace and has_function_privilege('anon', p.oid, 'execute') order by 1`,
    );
    expect(rows.map((r) => r.f)).toEqual(['topic']);
  });
});

describe('realtime.broadcast_changes', () => {
  it('a row trigger sends INSERT, UPDATE and DELETE with record and old_record on its private topic', async () => {
    const got = await listen('room:7', true, adaToken);
    await rt.t.db.query("insert into public.notes values (1, '7', 'draft')");
    await rt.t.db.query("update public.notes set body = 'final' where id = 1");
    await rt.t.db.query('delete from public.notes where id = 1');
    const base = { schema: 'public', table: 'notes', id: expect.any(String) };
    await expect
      .poll(() => got)
      .toEqual([
        { event: 'INSERT', payload: { ...base, operation: 'INSERT', record: { id: 1, room: '7', body: 'draft' }, old_record: null } },
        {
          event: 'UPDATE',
          payload: {
            ...base,
            operation: 'UPDATE',
            record: { id: 1, room: '7', body: 'final' },
            old_record: { id: 1, room: '7', body: 'draft' },
          },
        },
        { event: 'DELETE', payload: { ...base, operation: 'DELETE', record: null, old_record: { id: 1, room: '7', body: 'final' } } },
      ]);
  });

  it('a rolled-back write sends nothing', async () => {
    const got = await listen('room:8', true, adaToken);
    await expect(
      rt.t.db.transaction(async (tx) => {
        await tx.query("insert into public.notes values (2, '8', 'lost')");
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await rt.t.db.query("insert into public.notes values (3, '8', 'kept')");
    await expect.poll(() => got.map((m) => m.payload.record)).toEqual([{ id: 3, room: '8', body: 'kept' }]);
  });
});
