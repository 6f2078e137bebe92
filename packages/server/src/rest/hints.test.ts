import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// table_not_found and column_not_found name the closest table or column the caller could
// know of: any for the secret key, only what the role has a privilege on for the public key.
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create table hint_todos (id bigserial primary key, title text, user_id uuid);
    create table hint_secrets (id int);
    revoke all on hint_secrets from anon, authenticated;
    revoke all on hint_todos from anon;
    grant select (id, user_id) on hint_todos to anon;`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

const get = (url: string, headers: Record<string, string>) => t.app.inject({ url, headers });

describe('did you mean', () => {
  it('a mistyped or miscased table', async () => {
    for (const [path, meant] of [
      ['/api/v1/db/hint_todo', 'hint_todos'],
      ['/api/v1/db/Hint_Todos', 'hint_todos'],
    ]) {
      const res = await get(path, t.as.service);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        code: 'table_not_found',
        message: `No table or view "${path.split('/').pop()}" in the public schema; did you mean "${meant}"?`,
        details: { table: path.split('/').pop(), did_you_mean: meant },
      });
    }
    expect((await get('/api/v1/db/nothing_like_it', t.as.service)).json().details).toEqual({ table: 'nothing_like_it' });
  });

  it('a mistyped column in a filter, an order, a select and a body', async () => {
    for (const res of [
      await get('/api/v1/db/hint_todos?eq.user_di=x', t.as.service),
      await get('/api/v1/db/hint_todos?order=User_id.desc', t.as.service),
      await get('/api/v1/db/hint_todos?select=id,usr_id', t.as.service),
      await t.app.inject({ method: 'POST', url: '/api/v1/db/hint_todos', headers: t.as.service, payload: { user_idd: null } }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('column_not_found');
      expect(res.json().message).toMatch(/; did you mean "user_id"\?$/);
      expect(res.json().details.did_you_mean).toBe('user_id');
    }
  });

  it('never names a table or column the public key has no privilege on', async () => {
    const secret = await get('/api/v1/db/hint_secret', t.as.anon);
    expect(secret.json()).toEqual({
      code: 'table_not_found',
      message: 'No table or view "hint_secret" in the public schema.',
      details: { table: 'hint_secret' },
    });
    expect((await get('/api/v1/db/hint_secret', t.as.service)).json().details.did_you_mean).toBe('hint_secrets');
    expect((await get('/api/v1/db/hint_todo', t.as.anon)).json().details.did_you_mean).toBe('hint_todos');
    expect((await get('/api/v1/db/hint_todos?eq.titel=x', t.as.anon)).json().details).toEqual({ column: 'titel' });
    expect((await get('/api/v1/db/hint_todos?eq.titel=x', t.as.service)).json().details).toEqual({
      column: 'titel',
      did_you_mean: 'title',
    });
  });
});
