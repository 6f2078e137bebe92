import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Saved queries of the SQL runner (docs/api.md): named, kept in the project's database (so a
// restart and another admin see them), changed and deleted by id; the names are unique; only
// the management credentials reach them, and the runner's own role cannot read the table.

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.stop());

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = t.as.service) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('saved queries (/api/v1/sql/saved)', () => {
  it('saves, lists by name, renames, changes and deletes a query', async () => {
    expect((await call('GET', '/api/v1/sql/saved')).json()).toEqual([]);
    const made = await call('POST', '/api/v1/sql/saved', { name: ' recent users ', query: 'select * from users limit 10' });
    expect(made.statusCode, made.body).toBe(201);
    const q = made.json();
    expect(q).toMatchObject({ name: 'recent users', query: 'select * from users limit 10' });
    expect(q.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(q.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    await call('POST', '/api/v1/sql/saved', { name: 'Active buckets', query: 'select 1' });
    expect((await call('GET', '/api/v1/sql/saved')).json().map((x: { name: string }) => x.name)).toEqual([
      'Active buckets',
      'recent users',
    ]);

    const renamed = await call('PATCH', `/api/v1/sql/saved/${q.id}`, { name: 'newest users' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: q.id, name: 'newest users', query: 'select * from users limit 10' });
    const changed = await call('PATCH', `/api/v1/sql/saved/${q.id}`, { query: 'select 2' });
    expect(changed.json()).toMatchObject({ name: 'newest users', query: 'select 2' });

    expect((await call('DELETE', `/api/v1/sql/saved/${q.id}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/api/v1/sql/saved/${q.id}`)).json()).toMatchObject({ code: 'not_found' });
    expect((await call('GET', '/api/v1/sql/saved')).json().map((x: { name: string }) => x.name)).toEqual(['Active buckets']);
  });

  it('refuses a name taken, a blank name, unknown fields and ids with the stable codes', async () => {
    const taken = await call('POST', '/api/v1/sql/saved', { name: 'Active buckets', query: 'select 3' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 'conflict', details: { field: 'name' } });
    const blank = await call('POST', '/api/v1/sql/saved', { name: '   ', query: 'select 3' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toMatchObject({ code: 'invalid_value' });
    expect((await call('POST', '/api/v1/sql/saved', { name: 'x', query: 'select 1', owner: 'me' })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/sql/saved', { name: 'x' })).statusCode).toBe(400);
    expect((await call('PATCH', '/api/v1/sql/saved/not-a-uuid', { name: 'y' })).json()).toMatchObject({ code: 'not_found' });
    expect((await call('PATCH', '/api/v1/sql/saved/00000000-0000-4000-8000-000000000000', {})).statusCode).toBe(400);
  });

  it('is management only: the public key is refused, and the SQL runner cannot read the table', async () => {
    expect((await call('GET', '/api/v1/sql/saved', undefined, t.as.anon)).json()).toMatchObject({ code: 'forbidden' });
    expect((await call('POST', '/api/v1/sql/saved', { name: 'a', query: 'b' }, t.as.anon)).statusCode).toBe(403);
    const runner = await t.sql('select * from plinth.saved_queries');
    expect(runner.statusCode).toBe(400);
    expect(runner.json()).toMatchObject({ code: 'sql_error', details: { sqlstate: '42501' } });
  });

  it('answers no 500 to any body (property)', async () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('name', 'query', 'id', 'x'), value), async (body) => {
        const res = await call('POST', '/api/v1/sql/saved', body);
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode === 201) await call('DELETE', `/api/v1/sql/saved/${res.json().id}`);
      }),
      { numRuns: 60 },
    );
  });
});
