import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from './harness.js';
import { type RtClient, rtConnect, rtSubscribe } from './realtime.js';

// Security review round 3, R8: the change log named a table by its name, so after a rename (or a
// drop) and a new table of the same name with a looser policy, `since: 0` replayed the old
// table's rows to whoever the new policy admits. The log is keyed by the table's oid now.

let t: TestServer;
let base: string;
const clients: RtClient[] = [];
const ALICE = '00000000-0000-4000-8000-0000000000a1';

const sql = (query: string) => t.sqlOk(query);

beforeAll(async () => {
  t = await createTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await t?.stop();
});

const PRIVATE = (name: string) => `
  create table ${name} (id bigserial primary key, owner uuid not null default auth.uid(), body text);
  alter table ${name} enable row level security;
  create policy own on ${name} for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
  grant select, insert on ${name} to authenticated; grant usage on sequence ${name}_id_seq to authenticated;
  select realtime.enable('${name}');`;

const PUBLIC = (name: string) => `
  create table ${name} (id bigserial primary key, owner uuid, body text);
  alter table ${name} enable row level security;
  create policy wall on ${name} for select using (true);
  grant select on ${name} to anon, authenticated;
  select realtime.enable('${name}');`;

/** Alice writes a private row, the table is replaced, anon replays the new table from 0. */
async function replayAfter(name: string, replace: string): Promise<Array<string | undefined>> {
  await sql(PRIVATE(name));
  const alice = await t.mintToken(ALICE);
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/db/${name}`,
    headers: t.as.user(alice),
    payload: { body: 'alice: my private diary entry' },
  });
  expect(res.statusCode, res.body).toBe(201);
  // Numbered in the log, so a replay from 0 would find it.
  const logged = async () =>
    (await t.db.query<{ n: number }>(`select count(*)::int as n from realtime.read(0, (select last_seq from realtime.state), $1)`, [name]))
      .rows[0].n;
  await expect.poll(logged).toBe(1);
  await sql(replace);
  await sql(PUBLIC(name));
  await sql(`insert into ${name} (body) values ('wall: before subscribing')`);
  const anon = await rtConnect(base, t.keys.publicKey);
  clients.push(anon);
  await rtSubscribe(anon, { id: 'w', table: name, since: 0 });
  await sql(`insert into ${name} (body) values ('wall: live')`);
  const got = await anon.waitChanges(2, 'w');
  return got.map((m) => m.row?.body as string | undefined);
}

describe('the change log is keyed by table oid (review round 3, R8)', () => {
  it('after a rename and a new table of the same name, since: 0 gives anon nothing of the old table', async () => {
    const bodies = await replayAfter('diary', 'alter table diary rename to diary_2025;');
    expect(bodies).toEqual(['wall: before subscribing', 'wall: live']);
  });

  it('after a drop and a new table of the same name, the same', async () => {
    const bodies = await replayAfter('journal', 'drop table journal;');
    expect(bodies).toEqual(['wall: before subscribing', 'wall: live']);
  });
});
