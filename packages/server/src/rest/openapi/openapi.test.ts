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
  it('describes each column as the JSON the API sends, in components.schemas', async () => {
    const { json } = await doc();
    expect(json.openapi).toBe('3.1.0');
    const finite = (base: object) => ({ anyOf: [base, { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] }] });
    const infinite = { type: 'string', enum: ['infinity', '-infinity'] };
    expect(json.components.schemas.todos).toEqual({
      type: 'object',
      title: 'todos',
      description: 'Things to do',
      properties: {
        id: { type: 'string', format: 'uuid' },
        title: { type: 'string', description: 'What to do' },
        body: { type: ['string', 'null'], maxLength: 200 },
        done: { type: 'boolean' },
        rank: { type: ['integer', 'null'], format: 'int64' },
        score: finite({ type: 'number', format: 'double' }),
        price: { anyOf: [...finite({ type: 'number' }).anyOf, { type: 'null' }] },
        due: { anyOf: [{ type: 'string', format: 'date' }, infinite, { type: 'null' }] },
        created_at: { anyOf: [{ type: 'string', format: 'date-time' }, infinite] },
        tags: { type: ['array', 'null'], items: { type: 'string' } },
        meta: {},
        mood: { type: ['string', 'null'], enum: ['ok', 'sad', null] },
        half: { type: ['integer', 'null'], format: 'int32', readOnly: true },
      },
      // A returned row has every column (null or not).
      required: ['id', 'title', 'body', 'done', 'rank', 'score', 'price', 'due', 'created_at', 'tags', 'meta', 'mood', 'half'],
    });
    // A create must give the not-null columns without a default; an update any; neither a generated column.
    const insert = json.components.schemas['todos.insert'];
    expect(insert.required).toEqual(['title', 'score']);
    expect(insert.additionalProperties).toBe(false);
    expect(Object.keys(insert.properties)).not.toContain('half');
    const update = json.components.schemas['todos.update'];
    expect(update.required).toBeUndefined();
    expect(Object.keys(update.properties)).toEqual(Object.keys(insert.properties));
    const tables = Object.keys(json.components.schemas).filter((k) => !k.includes('.') && json.components.schemas[k].title);
    expect(tables).toEqual(['open_todos', 'pair', 'todos']);
  });

  it('sends the values the schema describes: NaN and Infinity as strings, timestamps RFC 3339, bigint exact', async () => {
    const res = await t.sql(`insert into todos (title, score, price, rank, due) values
      ('nan', 'NaN', 'NaN', 9007199254740993, 'infinity'), ('neg', '-Infinity', 12.5, 1, '2026-01-02')`);
    expect(res.statusCode, res.body).toBe(200);
    const rows = await t.app.inject({
      url: '/api/v1/db/todos?order=title&select=title,score,price,rank,due,created_at',
      headers: t.as.service,
    });
    // The exact text: a JavaScript JSON.parse would round 9007199254740993 to …992.
    expect(rows.body).toContain('"rank":9007199254740993');
    const [nan, neg] = rows.json();
    expect(nan).toMatchObject({ score: 'NaN', price: 'NaN', due: 'infinity' });
    expect(neg).toMatchObject({ score: '-Infinity', price: 12.5, rank: 1, due: '2026-01-02' });
    expect(neg.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/);
    await t.sql(`delete from todos where title in ('nan', 'neg')`);
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
    // Create takes the insert shape (one or many), PATCH the partial update shape.
    expect(list.post.requestBody.content['application/json'].schema.oneOf[0]).toEqual({ $ref: '#/components/schemas/todos.insert' });
    expect(list.patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/todos.update' });
    expect(json.paths['/api/v1/db/todos/{pk}'].patch.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/todos.update',
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
    await expect.poll(async () => Object.keys((await doc()).json.components.schemas), { timeout: 20_000, interval: 50 }).toContain('added');
  });
});

describe('what each caller is shown', () => {
  it('the public key and users see the tables their role has privileges on, and no management route', async () => {
    const res = await t.sql(`create table private_notes (id int primary key, note text);
      revoke all on private_notes from anon, authenticated;
      create table read_only (id int primary key, v text, hidden text);
      revoke all on read_only from anon;
      grant select (id, v) on read_only to anon;`);
    expect(res.statusCode, res.body).toBe(200);
    const anon = (await doc()).json;
    const user = (await t.app.inject({ url: '/api/v1/openapi.json', headers: t.as.user(await t.mintToken(crypto.randomUUID())) })).json();
    const service = (await t.app.inject({ url: '/api/v1/openapi.json', headers: t.as.service })).json();
    for (const d of [anon, user]) {
      expect(d.paths['/api/v1/db/private_notes']).toBeUndefined();
      expect(d.components.schemas.private_notes).toBeUndefined();
      // Storage's object routes are for apps (their policies decide); its bucket routes are management.
      const app = /^\/api\/v1\/(db|storage\/(object|sign|public))\//;
      expect(Object.keys(d.paths).filter((p) => p.startsWith('/api/v1/') && !app.test(p))).toEqual([]);
    }
    // Column privileges: anon reads two columns of read_only and may not write it.
    expect(Object.keys(anon.paths['/api/v1/db/read_only'])).toEqual(['get']);
    expect(Object.keys(anon.components.schemas.read_only.properties)).toEqual(['id', 'v']);
    expect(Object.keys(user.paths['/api/v1/db/read_only'])).toEqual(['get', 'post', 'patch', 'delete']);
    // The secret key: everything, management included.
    expect(service.paths['/api/v1/db/private_notes']).toBeDefined();
    expect(service.paths['/api/v1/sql'].post.tags).toEqual(['management']);
    expect(Object.keys(service.components.schemas.read_only.properties)).toEqual(['id', 'v', 'hidden']);
  });
});

describe('auth endpoints in the document', () => {
  it('every answer has its schema; sign-out is 204; routes that need no key declare no security', async () => {
    const { json } = await doc();
    const ok = (p: string, m = 'post') => json.paths[p][m].responses['200'].content['application/json'].schema;
    expect(ok('/v1/auth/signin').required).toEqual(['access_token', 'token_type', 'expires_in', 'expires_at', 'refresh_token', 'user']);
    expect(ok('/v1/auth/signup').properties.session.anyOf[1]).toEqual({ type: 'null' });
    expect(ok('/v1/auth/user', 'get').properties.identities.type).toBe('array');
    expect(json.paths['/v1/auth/signout'].post.responses['204']).toEqual({ description: 'Signed out.' });
    expect(json.paths['/v1/auth/signout'].post.responses['200']).toBeUndefined();
    for (const p of ['/v1/auth/settings', '/v1/auth/.well-known/jwks.json']) expect(json.paths[p].get.security, p).toEqual([]);
    expect(json.paths['/v1/auth/oauth/{provider}'].get.security).toEqual([]);
    expect(json.paths['/v1/auth/signin'].post.security).toEqual([{ apikey: [] }, { bearer: [] }]);
    expect(json.paths['/v1/auth/signin'].post.responses['4XX']).toEqual({ $ref: '#/components/responses/Error' });
    // The answers are what the schemas say: a real sign-up and sign-in.
    const body = { email: 'openapi@example.com', password: 'correct horse battery' };
    const signUp = await t.app.inject({ method: 'POST', url: '/v1/auth/signup', headers: t.as.anon, payload: body });
    expect(Object.keys(signUp.json().user).sort()).toEqual([...ok('/v1/auth/signup').properties.user.required].sort());
    const signIn = await t.app.inject({ method: 'POST', url: '/v1/auth/signin', headers: t.as.anon, payload: body });
    // next_aal is optional in the schema (a session from a social sign-in's redirect has none) and always sent here.
    expect(Object.keys(signIn.json()).sort()).toEqual([...ok('/v1/auth/signin').required, 'next_aal'].sort());
    expect(Object.keys(ok('/v1/auth/signin').properties)).toContain('next_aal');
    const out = await t.app.inject({ method: 'POST', url: '/v1/auth/signout', headers: t.as.user(signIn.json().access_token) });
    expect(out.statusCode).toBe(204);
  });

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
  it('an always-identity column is readOnly and not in the create body, and writing it is 400 invalid_value', async () => {
    expect((await t.sql('create table tickets (id int generated always as identity primary key, seat text not null)')).statusCode).toBe(
      200,
    );
    const { json } = await doc();
    expect(json.components.schemas.tickets.properties.id.readOnly).toBe(true);
    expect(json.components.schemas['tickets.insert'].required).toEqual(['seat']);
    expect(Object.keys(json.components.schemas['tickets.insert'].properties)).toEqual(['seat']);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/db/tickets', headers: t.as.service, payload: { id: 7, seat: 'A1' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_value', details: { column: 'id' } });
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/db/tickets', headers: t.as.service, payload: { seat: 'A1' } });
    expect(ok.json()).toMatchObject({ id: 1, seat: 'A1' });
  });
});

describe('relations and functions in the document (docs/api.md)', () => {
  beforeAll(async () => {
    const res = await t.sql(`
      create table lists (id int primary key, name text not null);
      create table entries (id int primary key, list_id int references lists, body text, note tsvector);
      create function add(a int, b int default 1) returns int language sql immutable as 'select a + b';
      comment on function add(int, int) is 'Adds';
      create function entries_of(list int) returns setof entries language sql stable as 'select * from entries where list_id = list';
      create function touch(id int) returns void language sql as 'select';
      create function secret_fn() returns text language sql as $$ select 'x' $$;
      grant execute on function add(int, int), entries_of(int), touch(int) to anon, authenticated;`);
    expect(res.statusCode, res.body).toBe(200);
    // Served within a second anyway; the tests need not wait for it.
    await t.schema.reload();
  });

  it('each row lists the relations select= may embed, and the select parameter says how', async () => {
    const { json } = await doc();
    expect(json.components.schemas.entries['x-plinth-relationships']).toEqual({
      lists: { table: 'lists', cardinality: 'one', kind: 'many-to-one', constraint: 'entries_list_id_fkey' },
      list: { table: 'lists', cardinality: 'one', kind: 'many-to-one', constraint: 'entries_list_id_fkey' },
      list_id: { table: 'lists', cardinality: 'one', kind: 'many-to-one', constraint: 'entries_list_id_fkey' },
      'lists!entries_list_id_fkey': expect.objectContaining({ table: 'lists' }),
      'lists!list_id': expect.objectContaining({ table: 'lists' }),
    });
    expect(json.components.schemas.lists['x-plinth-relationships'].entries).toMatchObject({ table: 'entries', cardinality: 'many' });
    const get = json.paths['/api/v1/db/entries'].get;
    const select = get.parameters.find((p: { name: string }) => p.name === 'select');
    expect(select.description).toContain('relation!inner');
    expect(select.description).toContain('`list`');
    const names = get.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['or', 'and', 'fts.body', 'fts.note']));
    expect(names).not.toContain('fts.id');
    expect(json.paths['/api/v1/db/entries'].post.parameters.map((p: { name: string }) => p.name)).toContain('on_conflict');
  });

  it('documents each function the role may execute: arguments, result, GET for stable ones', async () => {
    const { json } = await doc();
    const add = json.paths['/api/v1/rpc/add'];
    expect(add.post.requestBody.content['application/json'].schema).toEqual({
      type: 'object',
      title: 'add(a integer, b integer default)',
      properties: { a: { type: 'integer', format: 'int32' }, b: { type: 'integer', format: 'int32' } },
      required: ['a'],
      additionalProperties: false,
    });
    expect(add.post.description).toBe('Adds');
    expect(add.post.responses['200'].content['application/json'].schema).toEqual({ type: ['integer', 'null'], format: 'int32' });
    expect(add.get.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    const of = json.paths['/api/v1/rpc/entries_of'];
    expect(of.post.responses['200'].content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/entries' },
    });
    expect(of.post.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['select', 'order', 'limit', 'eq.body']),
    );
    expect(of.post['x-plinth-overloads']).toEqual([expect.objectContaining({ set: true, volatility: 'stable' })]);
    const touch = json.paths['/api/v1/rpc/touch'];
    expect(touch.get).toBeUndefined();
    expect(touch.post.responses['204']).toBeDefined();
    // Closed to anon: not in its document, in the secret key's.
    expect(json.paths['/api/v1/rpc/secret_fn']).toBeUndefined();
    const service = (await t.app.inject({ url: '/api/v1/openapi.json', headers: t.as.service })).json();
    expect(service.paths['/api/v1/rpc/secret_fn'].post.operationId).toBe('rpc_secret_fn');
  });
});
