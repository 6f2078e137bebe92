import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// What the database refuses reaches the client as a 4xx with the one error shape, by
// SQLSTATE (db/errors.ts, the table every area uses). Only a fault of the database or of Plinth is a 500.
let t: TestServer;

const SETUP = `
create table things (id serial primary key, name text, qty int, tag text unique, doc jsonb);
insert into things (name, qty) values ('a', 1);
create function things_guard() returns trigger language plpgsql as $$
begin
  if new.qty % 2 = 1 and new.qty > 100 then
    raise exception 'qty above 100 must be even, got %', new.qty using detail = 'things_guard';
  end if;
  assert new.qty is distinct from 42, 'qty may not be 42';
  return new;
end $$;
create trigger things_guard before insert or update on things for each row execute function things_guard();
create view small_things as select * from things where qty < 10 with check option;
create view labels as select id, upper(name) as label from things;
create view totals as select count(*) as n from things;
create table loopy (id int primary key);
create policy loopy_self on loopy using (exists (select 1 from loopy));
create table raiser (id serial primary key, code text not null, msg text);
create function raiser_raise() returns trigger language plpgsql as $$
begin
  raise exception using errcode = new.code, message = coalesce(new.msg, 'raised ' || new.code);
end $$;
create trigger raiser_raise before insert on raiser for each row execute function raiser_raise();
create table texts (id serial primary key, doc tsvector, q tsquery, path jsonpath);
`;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(SETUP);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
function call(method: Method, path: string, payload?: unknown, headers: Record<string, string> = t.as.service) {
  return t.app.inject({
    method,
    url: `/api/v1/db/${path}`,
    headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });
}

function expectError(res: { statusCode: number; body: string }, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = JSON.parse(res.body);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  return body as { code: string; message: string; details?: Record<string, unknown> };
}

describe('values whose own syntax is wrong (input functions raise 42601)', () => {
  it.each([
    ['a tsvector', { doc: "'unclosed" }],
    ['a tsquery', { q: 'a & & b' }],
    ['a jsonpath', { path: '$$$' }],
  ])('%s written: 400 invalid_value, not 500', async (_name, body) => {
    expectError(await call('POST', 'texts', body), 400, 'invalid_value');
  });

  it.each(['eq.q=a%20%26%20%26%20b', 'eq.doc=%27x', 'eq.path=%24.a%5B'])('%s as a filter: 400 invalid_value', async (filter) => {
    expectError(await call('GET', `texts?${filter}`), 400, 'invalid_value');
  });
});

describe('errors raised by triggers and functions', () => {
  it("a trigger's raise exception is a 400 with the trigger's message", async () => {
    const body = expectError(await call('POST', 'things', { name: 'x', qty: 101 }), 400, 'raised_exception');
    expect(body.message).toBe('qty above 100 must be even, got 101');
    expect(body.details).toEqual({ sqlstate: 'P0001', detail: 'things_guard' });
    const patched = expectError(await call('PATCH', 'things?eq.name=a', { qty: 103 }), 400, 'raised_exception');
    expect(patched.message).toBe('qty above 100 must be even, got 103');
    expect((await call('GET', 'things?select=qty&eq.name=a')).json()).toEqual([{ qty: 1 }]);
  });

  it('an assert in a trigger is a 400 with its message', async () => {
    const body = expectError(await call('POST', 'things', { name: 'x', qty: 42 }), 400, 'raised_exception');
    expect(body.message).toBe('qty may not be 42');
    expect(body.details).toEqual({ sqlstate: 'P0004' });
  });

  it("a SQLSTATE of the owner's own (not a PostgreSQL class) is a 400 with the message", async () => {
    const body = expectError(await call('POST', 'raiser', { code: 'U0A42', msg: 'no more seats' }), 400, 'raised_exception');
    expect(body.message).toBe('no more seats');
    expect(body.details).toEqual({ sqlstate: 'U0A42' });
  });

  // Each class, raised with that SQLSTATE by a trigger: the status a client gets for it.
  const classes: Array<[string, number, string]> = [
    ['22023', 400, 'invalid_value'],
    ['22P05', 400, 'invalid_value'],
    ['23000', 400, 'constraint_violation'],
    ['23505', 409, 'conflict'],
    ['44000', 400, 'constraint_violation'],
    ['42P17', 400, 'invalid_request'],
    ['42846', 400, 'invalid_request'],
    ['54000', 400, 'invalid_value'],
    ['54001', 400, 'invalid_value'],
    ['54023', 400, 'invalid_request'],
    ['57014', 400, 'statement_timeout'],
    ['40001', 409, 'conflict'],
    ['40P01', 409, 'conflict'],
    ['55P03', 409, 'conflict'],
    ['25006', 405, 'method_not_allowed'],
    ['53200', 503, 'database_unavailable'],
    ['P0002', 400, 'invalid_request'],
    ['0A000', 400, 'invalid_request'],
  ];
  for (const [sqlstate, status, code] of classes) {
    it(`SQLSTATE ${sqlstate}: ${status} ${code}`, async () => {
      const body = expectError(await call('POST', 'raiser', { code: sqlstate }), status, code);
      // The database's own message is not sent (only a raise's, which its author wrote for clients).
      expect(body.message).not.toContain(`raised ${sqlstate}`);
      expect(JSON.stringify(body)).toContain(sqlstate);
    });
  }

  it('a fault of the database itself is still a 500, with the one error shape and no cause', async () => {
    for (const sqlstate of ['XX000', '58030', '42601', '39P01']) {
      const body = expectError(await call('POST', 'raiser', { code: sqlstate }), 500, 'internal_error');
      expect(JSON.stringify(body)).not.toContain('raised');
    }
  });
});

describe('writes a relation cannot take', () => {
  it('a view with an aggregate cannot be updated or deleted from: 405', async () => {
    expectError(await call('PATCH', 'totals?eq.n=1', { n: 2 }), 405, 'method_not_allowed');
    expectError(await call('DELETE', 'totals?eq.n=1'), 405, 'method_not_allowed');
  });

  it('a computed column of a view cannot be written: 405', async () => {
    const post = expectError(await call('POST', 'labels', { label: 'x' }), 405, 'method_not_allowed');
    expect(post.message).toContain('labels');
    expectError(await call('PATCH', 'labels?eq.id=1', { label: 'x' }), 405, 'method_not_allowed');
  });

  it('a row outside a view WITH CHECK OPTION: 400 constraint_violation', async () => {
    expectError(await call('POST', 'small_things', { name: 'big', qty: 50 }), 400, 'constraint_violation');
    expect((await call('POST', 'small_things', { name: 'small', qty: 5 })).statusCode).toBe(201);
  });
});

describe('values and policies the database refuses', () => {
  it('a policy that recurses into its own table is a 400, not a 500', async () => {
    const body = expectError(await call('GET', 'loopy', undefined, t.as.anon), 400, 'invalid_request');
    expect(body.details).toEqual({ sqlstate: '42P17' });
  });

  it('a value too large for its unique index: 400 invalid_value', async () => {
    const huge = randomBytes(12_000).toString('base64');
    expectError(await call('POST', 'things', { name: 'x', tag: huge }), 400, 'invalid_value');
  });

  it('a body nested too deeply is a 400, and the server keeps serving', async () => {
    for (const depth of [1_000, 3_000, 20_000, 200_000]) {
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      for (const [method, path] of [
        ['POST', 'things'],
        ['PATCH', 'things?eq.id=1'],
      ] as const) {
        const res = await call(method, path, `{"doc": ${nested}}`);
        const what = `${depth} ${method} ${res.body.slice(0, 200)}`;
        // Shallow enough, PostgreSQL may store it; too deep, it is refused, never a 500.
        if (depth >= 20_000) expect(res.statusCode, what).toBe(400);
        else expect(res.statusCode, what).toBeLessThan(500);
        if (res.statusCode >= 400) expect(typeof res.json().message, what).toBe('string');
      }
    }
    expect((await call('GET', 'things?select=id&eq.id=1')).json()).toEqual([{ id: 1 }]);
  });
});
