import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type RtClient, rtConnect, rtSubscribe } from '../../test/realtime.js';
import { SUBSCRIBE_BURST } from './connection.js';

// Review round 3 (issue 31), R4–R7 and I4, with real WebSocket clients against a listening server
// (PGlite, PostgreSQL, and PostgreSQL as a database owner without superuser). Every client comes
// from 127.0.0.1: one address for the per-IP limits.

let t: TestServer;
let base: string;
const clients: RtClient[] = [];
const EVE = '00000000-0000-4000-8000-0000000000e5';
const MAX_PER_IP = 6;
const MAX_REPLAY = 20;

async function client(token?: string, key = t.keys.publicKey): Promise<RtClient> {
  const c = await rtConnect(base, key);
  clients.push(c);
  if (token) c.send({ type: 'auth', access_token: token });
  return c;
}

async function sql(query: string) {
  const res = await t.sql(query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The answer (subscribed or error) to a subscribe sent now. */
async function answer(c: RtClient, sub: Record<string, unknown> & { id: string }) {
  const from = c.messages.length;
  c.send({ type: 'subscribe', ...sub });
  return c.next((m) => m.id === sub.id && (m.type === 'subscribed' || m.type === 'error'), 60_000, from);
}

beforeAll(async () => {
  t = await createTestServer({ REALTIME_MAX_SUBSCRIPTIONS_PER_IP: String(MAX_PER_IP), REALTIME_MAX_REPLAY: String(MAX_REPLAY) });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  await sql(`
    create table pub (id bigserial primary key, title text not null);
    create policy everyone on pub for select using (true);
    select realtime.enable('pub');
    create table profiles (id uuid primary key, name text, email text, age int);
    alter table profiles enable row level security;
    create policy anon_names on profiles for select to anon using (true);
    create policy own on profiles for select to authenticated using (id = auth.uid());
    revoke all on profiles from anon, authenticated;
    grant select (id, name) on profiles to anon;
    grant select on profiles to authenticated;
    select realtime.enable('profiles');`);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await t?.stop();
});

/** The server's count of subscriptions (GET /metrics). */
async function subscriptions(): Promise<number> {
  const text = (await t.app.inject({ url: '/metrics', headers: t.as.service })).body;
  const line = text.split('\n').find((l) => l.startsWith('plinth_realtime_subscriptions '));
  return line ? Number(line.split(' ')[1]) : Number.NaN;
}

/** Closes every client opened so far (the per-IP limits count them all). */
async function closeAll() {
  for (const c of clients.splice(0)) await c.close();
  await expect.poll(subscriptions).toBe(0);
}

describe('what a client sends is bounded (R5)', () => {
  it('1,500 messages padded to 60 KB with a field no message takes are each refused by name; the server stays healthy', async () => {
    const c = await client();
    const filter = `in.id=(${Array(900).fill('1').join(',')},zz)`;
    const pad = 'A'.repeat(60_000);
    for (let i = 0; i < 1500; i++) c.send({ type: 'subscribe', id: `p${i}`, table: 'pub', filter, pad });
    await c.next((m) => m.id === 'p1499', 120_000);
    const answers = c.messages.filter((m) => m.id?.startsWith('p'));
    expect(answers).toHaveLength(1500);
    for (const m of answers) expect(m).toMatchObject({ type: 'error', code: 'invalid_request', details: { field: 'pad' } });
    expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    // The same connection still works.
    expect(await rtSubscribe(c, { id: 'ok', table: 'pub' })).toMatchObject({ type: 'subscribed' });
    await closeAll();
  });

  it('subscribe is rate-limited per connection: past the burst, rate_limited until the bucket refills', async () => {
    const c = await client();
    // Each costs what a subscribe costs (here: a refusal) and a token of the bucket.
    for (let i = 0; i < SUBSCRIBE_BURST; i++) c.send({ type: 'subscribe', id: `n${i}`, table: 'nope' });
    await c.next((m) => m.id === `n${SUBSCRIBE_BURST - 1}`);
    expect(c.messages.filter((m) => m.code === 'table_not_found')).toHaveLength(SUBSCRIBE_BURST);
    const limited = await answer(c, { id: 'over', table: 'pub' });
    expect(limited).toMatchObject({ type: 'error', code: 'rate_limited' });
    expect(limited.details?.retry_after_ms).toBeGreaterThan(0);
    // Another connection has its own bucket.
    const d = await client();
    expect(await answer(d, { id: 'fresh', table: 'pub' })).toMatchObject({ type: 'subscribed' });
    // A second later (the server's clock) one more is allowed.
    t.clock.advance(1000);
    expect(await answer(c, { id: 'later', table: 'pub' })).toMatchObject({ type: 'subscribed' });
    await closeAll();
  });
});

describe('subscriptions per client address (R6)', () => {
  it(`at most REALTIME_MAX_SUBSCRIPTIONS_PER_IP (${MAX_PER_IP}) over all its connections; freed by unsubscribe and close`, async () => {
    const [a, b] = [await client(), await client()];
    for (let i = 0; i < 4; i++) await rtSubscribe(a, { id: `a${i}`, table: 'pub' });
    for (let i = 0; i < 2; i++) await rtSubscribe(b, { id: `b${i}`, table: 'pub' });
    const refused = await answer(b, { id: 'b2', table: 'pub' });
    expect(refused).toMatchObject({ type: 'error', code: 'too_many_subscriptions' });
    expect(refused.message).toContain(String(MAX_PER_IP));
    const c = await client();
    expect(await answer(c, { id: 'c0', table: 'pub' })).toMatchObject({ code: 'too_many_subscriptions' });
    a.send({ type: 'unsubscribe', id: 'a0' });
    await a.next((m) => m.type === 'unsubscribed' && m.id === 'a0');
    expect(await answer(b, { id: 'b2', table: 'pub' })).toMatchObject({ type: 'subscribed' });
    await a.close();
    // The server forgets a's three once it has seen the close (polled: it may follow the client's).
    await expect.poll(subscriptions).toBe(3);
    for (let i = 0; i < 3; i++) expect(await answer(c, { id: `c${i + 1}`, table: 'pub' })).toMatchObject({ type: 'subscribed' });
    // Everything counted is still served.
    await sql(`insert into pub (title) values ('counted')`);
    await b.waitChanges(1, 'b2');
    await c.waitChanges(1, 'c3');
    await closeAll();
  });
});

describe('since replays (R4)', () => {
  it(`a since more than REALTIME_MAX_REPLAY (${MAX_REPLAY}) changes back is resume_gap; a nearer one replays`, async () => {
    const c = await client();
    const start = (await rtSubscribe(c, { id: 'live', table: 'pub' })).seq as number;
    await sql(`insert into pub (title) select 'r' || g from generate_series(1, 30) g`);
    const live = await c.waitChanges(30, 'live');
    const last = live.at(-1)?.seq as number;
    const gap = await answer(c, { id: 'far', table: 'pub', since: start });
    expect(gap).toMatchObject({ type: 'error', code: 'resume_gap', details: { max_replay: MAX_REPLAY } });
    expect(gap.message).toContain('refetch, then subscribe');
    expect(await answer(c, { id: 'near', table: 'pub', since: last - 10 })).toMatchObject({ type: 'subscribed', seq: last });
    expect(c.changes('near').map((m) => m.seq)).toEqual(live.slice(-10).map((m) => m.seq));
    await closeAll();
  });

  it('many replays at once from one address wait their turn, and each gets every change once, in order', async () => {
    const first = await client();
    const start = (await rtSubscribe(first, { id: 'live', table: 'pub' })).seq as number;
    await sql(`insert into pub (title) select 'q' || g from generate_series(1, 12) g`);
    const live = (await first.waitChanges(12, 'live')).map((m) => m.seq);
    await first.close();
    // 3 connections × 2 replays (the address's cap is MAX_PER_IP subscriptions).
    const cs = [await client(), await client(), await client()];
    cs.forEach((c, k) => {
      for (let i = 0; i < 2; i++) c.send({ type: 'subscribe', id: `r${k}${i}`, table: 'pub', since: start });
    });
    for (const [k, c] of cs.entries()) {
      for (let i = 0; i < 2; i++) {
        expect(await c.next((m) => m.id === `r${k}${i}` && m.type !== 'change')).toMatchObject({ type: 'subscribed' });
        expect(c.changes(`r${k}${i}`).map((m) => m.seq)).toEqual(live);
      }
    }
    await closeAll();
  });
});

describe('an auth message that changes the role (R7)', () => {
  it('ends the subscriptions whose table or filter columns the new role may not read, with permission_denied', async () => {
    const eve = await t.mintToken(EVE);
    const c = await client(eve);
    await rtSubscribe(c, { id: 'ceo', table: 'profiles', filter: `like.email=${encodeURIComponent('ceo%')}` });
    await rtSubscribe(c, { id: 'names', table: 'profiles', filter: 'like.name=C%' });
    const from = c.messages.length;
    c.send({ type: 'auth', access_token: null }); // back to anon
    expect(await c.next((m) => m.id === 'ceo', 30_000, from)).toMatchObject({ type: 'error', code: 'permission_denied' });
    // Others' profiles are written: the filter on email learns nothing; names anon may read still come.
    await sql(`insert into profiles values
      ('00000000-0000-4000-8000-00000000c001', 'Carol', 'ceo@corp.example', 50),
      ('00000000-0000-4000-8000-00000000c002', 'Dan', 'ceo@gmail.example', 40)`);
    const names = await c.waitChanges(1, 'names');
    expect(names[0].row).toEqual({ id: '00000000-0000-4000-8000-00000000c001', name: 'Carol' });
    // Ordered after the write: a ping's answer comes after any change of it.
    c.send({ type: 'ping' });
    await c.next((m) => m.type === 'pong');
    expect(c.changes('ceo')).toEqual([]);
    // The same role again (a fresh token) keeps what it may read.
    c.send({ type: 'auth', access_token: eve });
    await rtSubscribe(c, { id: 'mine', table: 'profiles', filter: 'like.email=e%' });
    const before = c.messages.length;
    c.send({ type: 'auth', access_token: await t.mintToken(EVE, {}, 7200) });
    c.send({ type: 'ping' });
    await c.next((m) => m.type === 'pong', 30_000, before);
    expect(c.messages.slice(before).filter((m) => m.type === 'error')).toEqual([]);
    await closeAll();
  });
});

describe('a filter on a column the role may not read (I4)', () => {
  it('is answered alike for a hidden and a missing column, before any value is cast (no column-name oracle)', async () => {
    const c = await client();
    const answers = [];
    for (const [i, filter] of ['eq.email=x', 'eq.nope=x', 'eq.age=notanumber', 'eq.nope2=notanumber', 'is.age=true'].entries()) {
      answers.push(await answer(c, { id: `h${i}`, table: 'profiles', filter }));
    }
    for (const m of answers) expect(m).toMatchObject({ type: 'error', code: 'permission_denied' });
    // The same words, the column's name aside.
    const shape = (m: { message?: string; details?: Record<string, unknown> }) =>
      m.message?.replace(`"${m.details?.column as string}"`, '"…"');
    expect(new Set(answers.map(shape)).size).toBe(1);
    // The secret key sees the schema anyway: it is told the column does not exist.
    const s = await client(undefined, t.keys.secretKey);
    expect(await answer(s, { id: 's', table: 'profiles', filter: 'eq.nope=x' })).toMatchObject({ code: 'column_not_found' });
    expect(await answer(s, { id: 's2', table: 'profiles', filter: 'eq.age=notanumber' })).toMatchObject({ code: 'invalid_value' });
    await closeAll();
  });
});
