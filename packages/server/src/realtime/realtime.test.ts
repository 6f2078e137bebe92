import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type RtClient, rtConnect, rtSubscribe } from '../../test/realtime.js';

let t: TestServer;
let base: string;
const clients: RtClient[] = [];
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

async function client(token?: string): Promise<RtClient> {
  const c = await rtConnect(base, t.keys.publicKey);
  clients.push(c);
  if (token) c.send({ type: 'auth', access_token: token });
  return c;
}

async function sql(query: string) {
  const res = await t.sql(query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function rest(method: 'POST' | 'PATCH' | 'DELETE', path: string, token: string | null, payload?: unknown) {
  const res = await t.app.inject({
    method,
    url: `/api/v1/db/${path}`,
    headers: token ? t.as.user(token) : t.as.service,
    payload: payload as object,
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

beforeAll(async () => {
  t = await createTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  await sql(`
    create table todos (id bigserial primary key, owner uuid not null default auth.uid(), title text not null, list_id int, done boolean not null default false);
    create policy own_read on todos for select using (owner = auth.uid());
    create policy own_write on todos for insert with check (owner = auth.uid());
    create policy own_update on todos for update using (owner = auth.uid());
    create policy own_delete on todos for delete using (owner = auth.uid());
    select realtime.enable('todos');`);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await t?.stop();
});

describe('owner policy', () => {
  it('each user sees only the changes of their own rows', async () => {
    const a = await t.mintToken(A);
    const b = await t.mintToken(B);
    const ca = await client(a);
    const cb = await client(b);
    await rtSubscribe(ca, { id: 'a', table: 'todos' });
    await rtSubscribe(cb, { id: 'b', table: 'todos' });
    const rowA = await rest('POST', 'todos', a, { title: 'for A' });
    const rowB = await rest('POST', 'todos', b, { title: 'for B' });
    const [ga] = await ca.waitChanges(1, 'a');
    const [gb] = await cb.waitChanges(1, 'b');
    expect(ga).toMatchObject({ op: 'insert', table: 'todos', row: { id: rowA.id, title: 'for A', owner: A } });
    expect(gb).toMatchObject({ op: 'insert', row: { id: rowB.id, title: 'for B', owner: B } });
    // B's later change arrived after A's: had A been sent B's row, it would be here by now.
    await rest('DELETE', `todos?eq.id=${rowA.id}`, a);
    const del = (await ca.waitChanges(2, 'a'))[1];
    expect(del).toMatchObject({ op: 'delete', row: null, old: { id: rowA.id } });
    expect(ca.changes('a').map((m) => m.row?.owner ?? A)).toEqual([A, A]);
    expect(cb.changes('b')).toHaveLength(1);
  });
});
