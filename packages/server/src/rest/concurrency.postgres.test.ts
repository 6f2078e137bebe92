import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// PostgreSQL only: PGlite runs one statement at a time, so two requests never deadlock there.
let t: TestServer;

beforeAll(async () => {
  t = await createTestServer();
  // Updating one row of a pair also updates the other (after a pause): two requests that
  // start on different rows at once wait for each other, and PostgreSQL aborts one (40P01).
  const res = await t.sql(`
    create table pair (id int primary key, n int not null default 0);
    insert into pair values (1, 0), (2, 0);
    create function pair_touch_other() returns trigger language plpgsql as $$
    begin
      if pg_trigger_depth() = 1 then
        perform pg_sleep(0.3);
        update pair set n = n + 1 where id = 3 - new.id;
      end if;
      return new;
    end $$;
    create trigger pair_touch_other after update on pair for each row execute function pair_touch_other();`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

describe('concurrent writes', () => {
  it('a deadlock between two requests is 409 conflict for the one PostgreSQL aborts, 200 for the other', async () => {
    const patch = (id: number) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/v1/db/pair?eq.id=${id}`,
        headers: { ...t.as.service, 'content-type': 'application/json' },
        payload: JSON.stringify({ n: 10 }),
      });
    const answers = await Promise.all([patch(1), patch(2)]);
    expect(answers.map((r) => r.statusCode).sort(), answers.map((r) => r.body).join('\n')).toEqual([200, 409]);
    const refused = answers.find((r) => r.statusCode === 409);
    expect(refused?.json()).toMatchObject({ code: 'conflict', details: { sqlstate: '40P01' } });
    // The winner's change and its trigger's happened; the loser's did not.
    const rows = await t.app.inject({ url: '/api/v1/db/pair?order=id&select=n', headers: t.as.service });
    expect(
      rows
        .json()
        .map((r: { n: number }) => r.n)
        .sort(),
    ).toEqual([1, 10]);
  });
});
