import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';

let t: TestServer;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create type mood as enum ('ok', 'sad');
    create table todos (
      id uuid primary key default gen_random_uuid(),
      title text not null,
      body varchar(200),
      done boolean not null default false,
      rank int8,
      score float8 not null,
      price numeric(8,2),
      due date,
      created_at timestamptz not null default now(),
      tags text[],
      meta jsonb,
      mood mood,
      half int generated always as (length(title) / 2) stored
    );
    comment on table todos is 'Things to do';
    comment on column todos.title is 'What to do';
    create table pair (a int, b int, primary key (a, b));
    create view open_todos as select id, title from todos where not done;`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

async function doc() {
  const res = await t.app.inject({ url: '/api/v1/openapi.json', headers: t.as.anon });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  return { text: res.body, json: res.json() };
}

describe('GET /api/v1/openapi.json', () => {
  it('needs a key', async () => {
    expect((await t.app.inject({ url: '/api/v1/openapi.json' })).statusCode).toBe(401);
  });

  it('describes each column as JSON Schema in components.schemas', async () => {
    const { json } = await doc();
    expect(json.openapi).toBe('3.1.0');
    expect(json.components.schemas.todos).toEqual({
      type: 'object',
      description: 'Things to do',
      properties: {
        id: { type: 'string', format: 'uuid' },
        title: { type: 'string', description: 'What to do' },
        body: { type: ['string', 'null'], maxLength: 200 },
        done: { type: 'boolean' },
        rank: { type: ['integer', 'null'], format: 'int64' },
        score: { type: 'number', format: 'double' },
        price: { type: ['number', 'null'] },
        due: { type: ['string', 'null'], format: 'date' },
        created_at: { type: 'string', format: 'date-time' },
        tags: { type: ['array', 'null'], items: { type: 'string' } },
        meta: {},
        mood: { type: ['string', 'null'], enum: ['ok', 'sad', null] },
        half: { type: ['integer', 'null'], format: 'int32', readOnly: true },
      },
      required: ['title', 'score'],
    });
    expect(Object.keys(json.components.schemas)).toEqual(['open_todos', 'pair', 'todos']);
  });

  it('documents the paths, with every filter of every column', async () => {
    const { json } = await doc();
    const list = json.paths['/api/v1/db/todos'];
    expect(Object.keys(list)).toEqual(['get', 'post', 'patch', 'delete']);
    const names = list.get.parameters.map((p: { name: string }) => p.name);
    for (const op of ['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike', 'in', 'is']) expect(names).toContain(`${op}.title`);
    expect(names).toEqual(expect.arrayContaining(['select', 'order', 'limit', 'offset', 'Prefer']));
    expect(list.get.responses['200'].content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/todos' },
    });
    expect(Object.keys(json.paths['/api/v1/db/todos/{pk}'])).toEqual(['get', 'patch', 'delete']);
    // No single-column key: no /{pk}. A view: read only.
    expect(json.paths['/api/v1/db/pair/{pk}']).toBeUndefined();
    expect(Object.keys(json.paths['/api/v1/db/open_todos'])).toEqual(['get']);
    expect(json.components.securitySchemes.apikey).toMatchObject({ type: 'apiKey', in: 'header', name: 'apikey' });
    expect(json.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('is deterministic and follows schema changes', async () => {
    const first = await doc();
    expect((await doc()).text).toBe(first.text);
    await t.sql('create table added (id int primary key)');
    await expect.poll(async () => Object.keys((await doc()).json.components.schemas), { timeout: 2000, interval: 50 }).toContain('added');
  });
});

describe('auth endpoints in the document', () => {
  it('lists every /v1/auth route with the request body schema that validates it', async () => {
    const { json } = await doc();
    const auth = Object.keys(json.paths).filter((p) => p.startsWith('/v1/auth/'));
    for (const p of [
      '/v1/auth/signup',
      '/v1/auth/signin',
      '/v1/auth/refresh',
      '/v1/auth/user',
      '/v1/auth/request-magic-link',
      '/v1/auth/phone/verify',
    ]) {
      expect(auth, p).toContain(p);
    }
    expect(Object.keys(json.paths['/v1/auth/user']).sort()).toEqual(['get', 'patch']);
    const signup = json.paths['/v1/auth/signup'].post;
    expect(signup.tags).toEqual(['auth']);
    expect(signup.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['email', 'password'],
      properties: { email: { type: 'string' }, password: { type: 'string' } },
    });
    expect(json.paths['/v1/auth/phone/verify'].post.requestBody.content['application/json'].schema.required).toEqual(['phone', 'code']);
    // Operation ids are unique across the document.
    const ids = Object.values(json.paths).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map((op) => op.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('identity columns', () => {
  it('an always-identity column is readOnly and not required, and writing it is 400 invalid_value', async () => {
    expect((await t.sql('create table tickets (id int generated always as identity primary key, seat text not null)')).statusCode).toBe(
      200,
    );
    const { json } = await doc();
    expect(json.components.schemas.tickets.properties.id.readOnly).toBe(true);
    expect(json.components.schemas.tickets.required ?? []).not.toContain('id');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/db/tickets', headers: t.as.service, payload: { id: 7, seat: 'A1' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_value', details: { column: 'id' } });
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/db/tickets', headers: t.as.service, payload: { seat: 'A1' } });
    expect(ok.json()).toMatchObject({ id: 1, seat: 'A1' });
  });
});
