import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../server/test/harness.js';
import { parseOpenApi } from './openapi';

// The console reads the server's real OpenAPI document (a test server's, on this run's
// database), and any document at all without throwing: the generator is changing (response
// schemas, `$ref`s into components), and a page must never break on it.

let t: TestServer;
let doc: Record<string, unknown>;
beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`
    create table todos (id bigserial primary key, title text not null, done boolean not null default false, meta jsonb,
      half int generated always as (length(title) / 2) stored);
    comment on table todos is 'Things to do';
    create table pair (a int, b int, primary key (a, b));
    create view open_todos as select id, title from todos where not done;
    create table "odd/name~x" (id int primary key);
    create table authors (id int primary key, name text);
    create table books (id int primary key, author_id int references authors, editor_id int references authors);
    grant select on authors, books to anon;
    create function add(a int, b int default 1) returns int language sql immutable as 'select a + b';
    create function stamp(note text) returns timestamptz language sql as 'select now()';
    grant execute on function add(int, int), stamp(text) to anon;`);
  expect(res.statusCode, res.body).toBe(200);
  doc = (await t.app.inject({ url: '/api/v1/openapi.json', headers: t.as.anon })).json();
});
afterAll(async () => {
  await t?.stop();
});

describe('parseOpenApi', () => {
  it("reads the server's document: tables, columns, operations, keys, auth endpoints", () => {
    const api = parseOpenApi(doc);
    expect(api.tables.map((x) => x.name)).toEqual(['authors', 'books', 'odd/name~x', 'open_todos', 'pair', 'todos']);
    const todos = api.tables.find((x) => x.name === 'todos');
    expect(todos).toMatchObject({ ops: ['list', 'get', 'create', 'update', 'delete'], byKey: true, pk: 'id', description: 'Things to do' });
    expect(todos?.columns.map((c) => [c.name, c.kind, c.required, c.nullable, c.readOnly])).toEqual([
      ['id', 'integer', false, false, false],
      ['title', 'string', true, false, false],
      ['done', 'boolean', false, false, false],
      ['meta', 'json', false, true, false],
      ['half', 'integer', false, true, true],
    ]);
    expect(api.tables.find((x) => x.name === 'pair')).toMatchObject({
      byKey: false,
      pk: null,
      ops: ['list', 'create', 'update', 'delete'],
    });
    expect(api.tables.find((x) => x.name === 'open_todos')?.ops).toEqual(['list']);
    expect(api.tables.find((x) => x.name === 'odd/name~x')?.columns.map((c) => c.name)).toEqual(['id']);
    const signup = api.endpoints.find((e) => e.method === 'POST' && e.path === '/v1/auth/signup');
    expect(signup?.tag).toBe('auth');
    expect(signup?.body?.required).toEqual(['email', 'password']);
    expect(api.endpoints.find((e) => e.path === '/v1/auth/oauth/{provider}')?.redirect).toBe(true);
    expect(api.endpoints.some((e) => e.path.startsWith('/api/v1/db/'))).toBe(false);
  });

  it('follows $refs a richer document may use (path items, parameters, bodies, row schemas only in responses)', () => {
    const richer = {
      paths: {
        '/api/v1/db/notes': { $ref: '#/components/pathItems/notes' },
        '/v1/auth/signin': {
          post: {
            tags: ['auth'],
            parameters: [{ $ref: '#/components/parameters/Trace' }],
            requestBody: { $ref: '#/components/requestBodies/SignIn' },
            responses: { '200': { $ref: '#/components/responses/Session' } },
          },
        },
      },
      components: {
        pathItems: {
          notes: {
            get: {
              responses: {
                '200': {
                  content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Note~1Row' } } } },
                },
              },
            },
          },
        },
        schemas: { 'Note/Row': { type: 'object', properties: { body: { type: ['string', 'null'] } }, required: [] } },
        parameters: { Trace: { name: 'x-trace', in: 'header' } },
        requestBodies: { SignIn: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Creds' } } } } },
        responses: { Session: { description: 'ok' } },
      },
    };
    (richer.components.schemas as Record<string, unknown>).Creds = { type: 'object', properties: { email: { type: 'string' } } };
    const api = parseOpenApi(richer);
    expect(api.tables).toEqual([
      {
        name: 'notes',
        columns: [
          { name: 'body', type: 'string', kind: 'string', nullable: true, required: false, readOnly: false, description: undefined },
        ],
        relations: [],
        ops: ['list'],
        byKey: false,
        pk: null,
        description: undefined,
      },
    ]);
    expect(api.endpoints[0]).toMatchObject({
      params: [{ name: 'x-trace', in: 'header' }],
      body: { properties: { email: { type: 'string' } } },
    });
  });

  it('reads the relations select= may embed, and the functions with their arguments', () => {
    const api = parseOpenApi(doc);
    const books = api.tables.find((x) => x.name === 'books');
    // Two keys lead to authors: one entry each, under its shortest unambiguous name.
    expect(books?.relations.map((r) => [r.name, r.table, r.cardinality, r.constraint])).toEqual([
      ['author', 'authors', 'one', 'books_author_id_fkey'],
      ['editor', 'authors', 'one', 'books_editor_id_fkey'],
    ]);
    expect(api.tables.find((x) => x.name === 'authors')?.relations.map((r) => [r.cardinality, r.constraint])).toEqual([
      ['many', 'books_author_id_fkey'],
      ['many', 'books_editor_id_fkey'],
    ]);
    expect(api.functions.map((f) => [f.name, f.get])).toEqual([
      ['add', true],
      ['stamp', false],
    ]);
    expect(api.functions[0].overloads[0].args).toEqual([
      { name: 'a', kind: 'integer', type: 'integer · int32', required: true },
      { name: 'b', kind: 'integer', type: 'integer · int32', required: false },
    ]);
    // Functions have their own list, not the other endpoints'.
    expect(api.endpoints.some((e) => e.path.startsWith('/api/v1/rpc/'))).toBe(false);
  });

  it('never throws, whatever the document (property)', () => {
    const pathItem = fc.dictionary(fc.constantFrom('get', 'post', 'patch', 'delete', '$ref', 'x'), fc.jsonValue());
    const docLike = fc.record({
      paths: fc.dictionary(
        fc.oneof(
          fc.string(),
          fc.constantFrom('/api/v1/db/t', '/api/v1/db/t/{pk}', '/api/v1/db/%E0%A4%A', '/v1/auth/x', '/api/v1/rpc/f', '/api/v1/rpc/%E0'),
        ),
        pathItem,
      ),
      components: fc.jsonValue(),
      servers: fc.jsonValue(),
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), docLike), (input) => {
        const api = parseOpenApi(input);
        expect(Array.isArray(api.tables) && Array.isArray(api.endpoints) && Array.isArray(api.functions)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('stops on $ref cycles', () => {
    const cyclic = {
      paths: { '/api/v1/db/loop': { get: { responses: { '200': { $ref: '#/components/responses/A' } } } } },
      components: { responses: { A: { $ref: '#/components/responses/B' }, B: { $ref: '#/components/responses/A' } }, schemas: {} },
    };
    expect(parseOpenApi(cyclic).tables).toEqual([
      { name: 'loop', columns: [], relations: [], ops: ['list'], byKey: false, pk: null, description: undefined },
    ]);
  });
});
