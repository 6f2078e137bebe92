import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// PostgreSQL decides access (convention 3): two users, anon and the secret key against one
// policy, through every endpoint.
let t: TestServer;
const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';
let alice: Record<string, string>;
let bob: Record<string, string>;
let aliceRow: number;
let bobRow: number;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create table todos (id serial primary key, title text not null, user_id uuid default auth.uid());
    create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());
    create table closed (id int primary key);
    insert into closed values (1);`);
  expect(res.statusCode, res.body).toBe(200);
  alice = t.as.user(await t.mintToken(ALICE));
  bob = t.as.user(await t.mintToken(BOB));
  aliceRow = (await post(alice, { title: 'alice 1' })).json().id;
  bobRow = (await post(bob, { title: 'bob 1' })).json().id;
});
afterAll(() => t?.stop());

function post(headers: Record<string, string>, payload: unknown) {
  return t.app.inject({ method: 'POST', url: '/api/v1/db/todos', headers, payload: payload as object });
}
function req(method: 'GET' | 'PATCH' | 'DELETE', path: string, headers: Record<string, string>, payload?: unknown) {
  return t.app.inject({ method, url: `/api/v1/db/${path}`, headers, ...(payload ? { payload: payload as object } : {}) });
}

describe('row-level security', () => {
  it('a created row belongs to its creator (default auth.uid())', async () => {
    const res = await req('GET', `todos/${aliceRow}`, alice);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ title: 'alice 1', user_id: ALICE });
  });

  it('each user lists only their own rows', async () => {
    expect((await req('GET', 'todos', alice)).json().map((r: { user_id: string }) => r.user_id)).toEqual([ALICE]);
    expect((await req('GET', 'todos', bob)).json().map((r: { user_id: string }) => r.user_id)).toEqual([BOB]);
    const counted = await req('GET', 'todos', bob, undefined);
    expect(counted.headers['content-range']).toBe('0-0/*');
    const exact = await t.app.inject({ url: '/api/v1/db/todos', headers: { ...bob, prefer: 'count=exact' } });
    expect(exact.headers['content-range']).toBe('0-0/1');
  });

  it("a user cannot read another user's row by key or filter", async () => {
    expect((await req('GET', `todos/${bobRow}`, alice)).statusCode).toBe(404);
    expect((await req('GET', `todos?eq.id=${bobRow}`, alice)).json()).toEqual([]);
    expect((await req('GET', `todos?eq.user_id=${BOB}`, alice)).json()).toEqual([]);
  });

  it("a user cannot update another user's row", async () => {
    const byKey = await req('PATCH', `todos/${bobRow}`, alice, { title: 'hacked' });
    expect(byKey.statusCode).toBe(404);
    expect((await req('PATCH', `todos?eq.id=${bobRow}`, alice, { title: 'hacked' })).json()).toEqual([]);
    const wide = await req('PATCH', 'todos?neq.id=0&select=user_id', alice, { title: 'alice 1' });
    expect(wide.json()).toEqual([{ user_id: ALICE }]);
    expect((await req('GET', `todos/${bobRow}`, bob)).json().title).toBe('bob 1');
  });

  it('a user cannot hand their row to someone else', async () => {
    const res = await req('PATCH', `todos/${aliceRow}`, alice, { user_id: BOB });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('rls_violation');
  });

  it("a user cannot delete another user's row", async () => {
    expect((await req('DELETE', `todos/${bobRow}`, alice)).statusCode).toBe(404);
    expect((await req('DELETE', `todos?neq.id=0`, alice)).json().map((r: { user_id: string }) => r.user_id)).toEqual([ALICE]);
    expect((await req('GET', `todos/${bobRow}`, bob)).statusCode).toBe(200);
    aliceRow = (await post(alice, { title: 'alice 2' })).json().id;
  });

  it("inserting a row with another user's id is 403 rls_violation", async () => {
    const res = await post(alice, { title: 'forged', user_id: BOB });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('rls_violation');
    const bulk = await post(alice, [
      { title: 'mine', user_id: ALICE },
      { title: 'forged', user_id: BOB },
    ]);
    expect(bulk.json().code).toBe('rls_violation');
    expect((await req('GET', 'todos?eq.title=mine', alice)).json()).toEqual([]);
  });

  it('anon sees nothing and cannot write', async () => {
    expect((await req('GET', 'todos', t.as.anon)).json()).toEqual([]);
    expect((await req('GET', `todos/${aliceRow}`, t.as.anon)).statusCode).toBe(404);
    expect((await req('DELETE', 'todos?neq.id=0', t.as.anon)).json()).toEqual([]);
    const res = await post(t.as.anon, { title: 'anon' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('rls_violation');
  });

  it('a table without a policy is closed to users and open to the secret key', async () => {
    expect((await req('GET', 'closed', alice)).json()).toEqual([]);
    expect((await req('GET', 'closed', t.as.service)).json()).toEqual([{ id: 1 }]);
  });

  it('the secret key sees and changes every row', async () => {
    const all = await req('GET', 'todos?order=id', t.as.service);
    expect(all.json().map((r: { user_id: string }) => r.user_id)).toEqual([BOB, ALICE]);
    const res = await req('PATCH', `todos/${bobRow}`, t.as.service, { title: 'by service' });
    expect(res.json().title).toBe('by service');
  });

  it('a bad or expired token is 401, never a silent anon', async () => {
    const expired = await t.mintToken(ALICE, {}, -10);
    const res = await req('GET', 'todos', t.as.user(expired));
    expect(res.statusCode).toBe(401);
    const garbage = await req('GET', 'todos', t.as.user('eyJhbGciOiJub25lIn0.e30.'));
    expect(garbage.statusCode).toBe(401);
  });
});
