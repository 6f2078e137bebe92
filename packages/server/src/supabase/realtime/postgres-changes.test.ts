import type { AddressInfo } from 'node:net';
import { type RealtimeChannel, RealtimeClient, type RealtimePostgresChangesPayload } from '@supabase/realtime-js';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';

// postgres_changes through Supabase's realtime-js on /realtime/v1/websocket, served by realtime's
// hub: the same capture, per-event RLS and filter evaluator as /api/v1/realtime (issue 37).

let t: TestServer;
let url: string;
const open: RealtimeClient[] = [];
const A = '00000000-0000-4000-8000-0000000000a1';
const B = '00000000-0000-4000-8000-0000000000b1';

type Row = Record<string, unknown>;
type Payload = RealtimePostgresChangesPayload<Row> & { new: Row; old: Row };

beforeAll(async () => {
  t = await createTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/realtime/v1`;
  const res = await t.sql(`
    create table notes (id bigserial primary key, owner uuid not null default auth.uid(), body text not null, list_id int);
    create policy own_read on notes for select using (owner = auth.uid());
    create policy own_write on notes for insert with check (owner = auth.uid());
    select realtime.enable('notes');
    create table posts (id bigserial primary key, title text not null, status text not null default 'open', n int);
    create policy everyone on posts for select using (true);
    select realtime.enable('posts');
    create table vault (id bigserial primary key, secret text not null);
    select realtime.enable('vault');
    create table quiet (id bigserial primary key, title text);
    create policy everyone on quiet for select using (true);`);
  expect(res.statusCode, res.body).toBe(200);
});
afterEach(async () => {
  for (const c of open.splice(0)) c.disconnect();
});
afterAll(async () => {
  await t?.stop();
});

function client(vsn: '1.0.0' | '2.0.0', key = t.keys.publicKey): RealtimeClient {
  const c = new RealtimeClient(url, { params: { apikey: key }, vsn, transport: WebSocket as unknown as typeof globalThis.WebSocket });
  open.push(c);
  return c;
}

async function subscribed(ch: RealtimeChannel): Promise<{ status: string; err?: Error }> {
  return new Promise((resolve) => {
    ch.subscribe((status, err) => {
      if (status !== 'TIMED_OUT') resolve({ status, err });
    });
  });
}

async function sql(query: string) {
  const res = await t.sql(query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function insertAs(token: string, table: string, row: Row) {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/db/${table}`, headers: t.as.user(token), payload: row });
  expect(res.statusCode, res.body).toBe(201);
}

describe.each(['1.0.0', '2.0.0'] as const)('postgres_changes, vsn %s', (vsn) => {
  it('INSERT, UPDATE and DELETE arrive in Supabase’s shape (eventType, new, old, schema, table, commit_timestamp, errors)', async () => {
    const got: Payload[] = [];
    const ch = client(vsn)
      .channel(`posts-${vsn}`)
      .on('postgres_changes', { event: '*', schema: 'public', table: 'posts' }, (p: Payload) => got.push(p));
    expect((await subscribed(ch)).status).toBe('SUBSCRIBED');
    await sql(`insert into posts (title, n) values ('first-${vsn}', 1)`);
    await sql(`update posts set title = 'second-${vsn}' where title = 'first-${vsn}'`);
    await sql(`delete from posts where title = 'second-${vsn}'`);
    await expect.poll(() => got.map((p) => p.eventType)).toEqual(['INSERT', 'UPDATE', 'DELETE']);
    const [ins, upd, del] = got;
    expect(ins).toMatchObject({
      schema: 'public',
      table: 'posts',
      errors: null,
      new: { title: `first-${vsn}`, status: 'open', n: 1 },
      old: {},
    });
    expect(typeof ins.new.id).toBe('number');
    expect(Number.isNaN(Date.parse(ins.commit_timestamp))).toBe(false);
    expect(upd).toMatchObject({ new: { id: ins.new.id, title: `second-${vsn}` }, old: { id: ins.new.id } });
    // As Supabase without REPLICA IDENTITY FULL: the old row is its primary key.
    expect(del).toMatchObject({ new: {}, old: { id: ins.new.id } });
    expect(Object.keys(del.old)).toEqual(['id']);
  });

  it('each binding gets its own events; a filter in realtime-js’s syntax (eq, in) selects rows as /api/v1/realtime’s does', async () => {
    const inserts: Row[] = [];
    const updates: Row[] = [];
    const eq: Row[] = [];
    const inList: Row[] = [];
    const ch = client(vsn)
      .channel(`filters-${vsn}`)
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'posts' }, (p: Payload) => inserts.push(p.new))
      .on('postgres_changes', { event: 'UPDATE', schema: 'public', table: 'posts' }, (p: Payload) => updates.push(p.new))
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'posts', filter: 'status=eq.closed' }, (p: Payload) =>
        eq.push(p.new),
      )
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'posts', filter: 'n=in.(2,3)' }, (p: Payload) =>
        inList.push(p.new),
      );
    expect((await subscribed(ch)).status).toBe('SUBSCRIBED');
    await sql(`insert into posts (title, status, n) values ('f1-${vsn}', 'open', 1), ('f2-${vsn}', 'closed', 2), ('f3-${vsn}', 'open', 3)`);
    await sql(`update posts set n = 9 where title = 'f1-${vsn}'`);
    await expect.poll(() => updates.map((r) => r.title)).toEqual([`f1-${vsn}`]);
    expect(inserts.map((r) => r.title)).toEqual([`f1-${vsn}`, `f2-${vsn}`, `f3-${vsn}`]);
    expect(eq.map((r) => r.title)).toEqual([`f2-${vsn}`]);
    expect(inList.map((r) => r.title)).toEqual([`f2-${vsn}`, `f3-${vsn}`]);
  });

  it('RLS: a user sees only the rows a policy lets them read, under the token of the join', async () => {
    const [ta, tb] = [await t.mintToken(A), await t.mintToken(B)];
    const gotA: Row[] = [];
    const gotB: Row[] = [];
    const ca = client(vsn);
    await ca.setAuth(ta);
    const cb = client(vsn);
    await cb.setAuth(tb);
    const cha = ca
      .channel(`notes-a-${vsn}`)
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes' }, (p: Payload) => gotA.push(p.new));
    const chb = cb
      .channel(`notes-b-${vsn}`)
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes' }, (p: Payload) => gotB.push(p.new));
    expect((await subscribed(cha)).status).toBe('SUBSCRIBED');
    expect((await subscribed(chb)).status).toBe('SUBSCRIBED');
    await insertAs(ta, 'notes', { body: `a-${vsn}` });
    await insertAs(tb, 'notes', { body: `b-${vsn}` });
    await expect.poll(() => gotB.map((r) => r.body)).toEqual([`b-${vsn}`]);
    await expect.poll(() => gotA.map((r) => r.body)).toEqual([`a-${vsn}`]);
    // The anon key alone reads no note: its channel gets none, while a public table's insert after them arrives.
    const anon: string[] = [];
    const chn = client(vsn)
      .channel(`notes-anon-${vsn}`)
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes' }, (p: Payload) => anon.push(`notes:${p.new.body}`))
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'posts' }, (p: Payload) => anon.push(`posts:${p.new.title}`));
    expect((await subscribed(chn)).status).toBe('SUBSCRIBED');
    await insertAs(ta, 'notes', { body: `a2-${vsn}` });
    await sql(`insert into posts (title) values ('after-${vsn}')`);
    await expect.poll(() => anon).toEqual([`posts:after-${vsn}`]);
    await expect.poll(() => gotA.map((r) => r.body)).toEqual([`a-${vsn}`, `a2-${vsn}`]);
  });

  it('a table closed by default stays closed, a table whose capture is off is refused, a bad filter is refused', async () => {
    // vault: RLS on, no policy. Subscribing is allowed (as a read is), but no row ever arrives.
    const seen: string[] = [];
    const ch = client(vsn)
      .channel(`vault-${vsn}`)
      .on('postgres_changes', { event: '*', schema: 'public', table: 'vault' }, () => seen.push('vault'))
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'posts' }, (p: Payload) => seen.push(`${p.new.title}`));
    expect((await subscribed(ch)).status).toBe('SUBSCRIBED');
    await sql(`insert into vault (secret) values ('s-${vsn}'); insert into posts (title) values ('marker-${vsn}')`);
    await expect.poll(() => seen).toEqual([`marker-${vsn}`]);

    const quiet = await subscribed(
      client(vsn)
        .channel(`quiet-${vsn}`)
        .on('postgres_changes', { event: '*', schema: 'public', table: 'quiet' }, () => undefined),
    );
    expect(quiet.status).toBe('CHANNEL_ERROR');
    expect(quiet.err?.message).toMatch(/realtime\.enable/);

    const bad = await subscribed(
      client(vsn)
        .channel(`bad-${vsn}`)
        .on('postgres_changes', { event: '*', schema: 'public', table: 'posts', filter: 'title=like.x%' }, () => undefined),
    );
    expect(bad.status).toBe('CHANNEL_ERROR');
    const missing = await subscribed(
      client(vsn)
        .channel(`missing-${vsn}`)
        .on('postgres_changes', { event: '*', schema: 'public', table: 'posts', filter: 'nope=eq.1' }, () => undefined),
    );
    expect(missing.status).toBe('CHANNEL_ERROR');
    expect(missing.err?.message).toMatch(/may not read the column "nope"/);
  });
});

describe('postgres_changes on the wire', () => {
  it('the join reply carries each binding with its id, then a system message says "Subscribed to PostgreSQL"; changes name those ids', async () => {
    const ws = new WebSocket(`${url}/websocket?apikey=${t.keys.publicKey}&vsn=1.0.0`);
    await new Promise((r) => ws.once('open', r));
    const frames: Array<{ event: string; topic: string; payload: Record<string, unknown> }> = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    const bindings = [
      { event: 'INSERT', schema: 'public', table: 'posts' },
      { event: '*', schema: 'public', table: 'posts', filter: 'status=eq.wire' },
    ];
    ws.send(
      JSON.stringify({
        topic: 'realtime:wire',
        event: 'phx_join',
        payload: { config: { postgres_changes: bindings } },
        ref: '1',
        join_ref: '1',
      }),
    );
    await expect.poll(() => frames.map((f) => f.event)).toEqual(['phx_reply', 'system', 'presence_state']);
    const reply = frames[0].payload as { status: string; response: { postgres_changes: Array<Record<string, unknown>> } };
    expect(reply.status).toBe('ok');
    const ids = reply.response.postgres_changes.map((b) => b.id);
    expect(reply.response.postgres_changes).toEqual(bindings.map((b, i) => ({ id: ids[i], ...b })));
    expect(ids.every((id) => typeof id === 'number' && id > 0) && new Set(ids).size === 2).toBe(true);
    expect(frames[1].payload).toEqual({
      channel: 'wire',
      extension: 'postgres_changes',
      message: 'Subscribed to PostgreSQL',
      status: 'ok',
    });
    await sql(`insert into posts (title, status) values ('w1', 'wire')`);
    await expect.poll(() => frames.filter((f) => f.event === 'postgres_changes').length).toBe(2);
    const changes = frames.filter((f) => f.event === 'postgres_changes').map((f) => f.payload as { ids: number[]; data: Row });
    expect(changes.map((c) => c.ids).sort()).toEqual(ids.map((id) => [id]).sort());
    expect(changes[0].data).toMatchObject({ schema: 'public', table: 'posts', type: 'INSERT', errors: null, record: { title: 'w1' } });
    expect(changes[0].data.columns).toEqual(
      expect.arrayContaining([
        { name: 'id', type: 'int8' },
        { name: 'title', type: 'text' },
      ]),
    );
    ws.close();
  });
});
