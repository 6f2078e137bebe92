import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { restClient } from '../../../test/supabase-rest.js';

// An upsert's status on /rest/v1, as PostgREST's: 201 when it inserted a row, 200 when every row
// was there already and updated. A partitioned table has no xmax to tell: its upserts work, 201.
let t: TestServer;
let anon: ReturnType<typeof restClient>;

const SCHEMA = `
create table kv (k text primary key, v int not null);
create table parts (id int, day date, v int, primary key (id, day)) partition by range (day);
create table parts_2025 partition of parts for values from ('2025-01-01') to ('2026-01-01');
grant select, insert, update on kv, parts to anon;
create policy all_kv on kv for all using (true) with check (true);
create policy all_parts on parts for all using (true) with check (true);
insert into kv values ('a', 1);
insert into parts values (1, '2025-03-01', 1);
`;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(SCHEMA);
  expect(res.statusCode, res.body).toBe(200);
  anon = restClient(t, t.as.anon);
});
afterAll(() => t?.stop());

describe('upsert status', () => {
  it('200 when every row was updated, 201 when one was inserted; the rows either way', async () => {
    const updated = await anon.from('kv').upsert({ k: 'a', v: 2 }).select();
    expect(updated.error).toBeNull();
    expect(updated.status).toBe(200);
    expect(updated.data).toEqual([{ k: 'a', v: 2 }]);
    const mixed = await anon
      .from('kv')
      .upsert([
        { k: 'a', v: 3 },
        { k: 'b', v: 1 },
      ])
      .select('k,v');
    expect(mixed.status).toBe(201);
    expect(mixed.data).toEqual([
      { k: 'a', v: 3 },
      { k: 'b', v: 1 },
    ]);
  });

  it('on a partitioned table the upsert works and answers 201', async () => {
    const updated = await anon.from('parts').upsert({ id: 1, day: '2025-03-01', v: 5 }).select('v');
    expect(updated.error).toBeNull();
    expect(updated.status).toBe(201);
    expect(updated.data).toEqual([{ v: 5 }]);
  });
});
