import { describe, expect, it } from 'vitest';
import type { TableDoc } from '../../lib/openapi';
import { js } from '../../lib/rest';
import { authSdkCall } from './auth-sdk';
import { bodyTemplate, planTable, type TableRequest } from './plan';

// The builder's fields to the request it sends, as a scenario table: which operations use the
// SDK's query builder (so the snippet is that very chain), which go to `/{pk}` through `send`,
// and what the builder refuses before sending anything.

const todos: TableDoc = {
  name: 'todos',
  ops: ['list', 'get', 'create', 'update', 'delete'],
  byKey: true,
  pk: 'id',
  relations: [],
  columns: [
    { name: 'id', type: 'integer', kind: 'integer', nullable: false, required: false, readOnly: false },
    { name: 'title', type: 'string', kind: 'string', nullable: false, required: true, readOnly: false },
    { name: 'meta', type: 'json', kind: 'json', nullable: true, required: false, readOnly: false },
    { name: 'half', type: 'integer', kind: 'integer', nullable: true, required: false, readOnly: true },
  ],
};
const base: TableRequest = {
  op: 'list',
  byKey: false,
  pk: '',
  filters: [],
  order: [],
  select: '',
  limit: undefined,
  offset: undefined,
  count: false,
  minimal: false,
  body: '',
};

const cases: Array<[string, Partial<TableRequest>, unknown]> = [
  ['a bare list', {}, { kind: 'sdk', counted: false, steps: [{ method: 'select', args: [] }] }],
  [
    'a counted list without select',
    { count: true, limit: 10, offset: 0 },
    {
      kind: 'sdk',
      counted: true,
      steps: [
        { method: 'select', args: ['*', { count: 'exact' }] },
        { method: 'limit', args: [10] },
        { method: 'offset', args: [0] },
      ],
    },
  ],
  ['select with spaces', { select: ' id, title ' }, { kind: 'sdk', counted: false, steps: [{ method: 'select', args: ['id,title'] }] }],
  [
    'read one by key',
    { op: 'get', pk: 'a/b', select: 'title' },
    { kind: 'raw', method: 'GET', path: '/api/v1/db/todos/a%2Fb', query: 'select=title', prefer: null },
  ],
  [
    'create, minimal',
    { op: 'create', body: '[{"title":"a"},{"title":"b"}]', minimal: true },
    { kind: 'sdk', steps: [{ method: 'insert', args: [[{ title: 'a' }, { title: 'b' }], { returning: 'minimal' }] }] },
  ],
  [
    'update by filter',
    { op: 'update', body: '{"title":"x"}', filters: [['eq', 'id', '3']] },
    {
      kind: 'sdk',
      steps: [
        { method: 'update', args: [{ title: 'x' }] },
        { method: 'eq', args: ['id', 3] },
      ],
    },
  ],
  [
    'update by key',
    { op: 'update', byKey: true, pk: '3', body: '{"title":"x"}' },
    { kind: 'raw', method: 'PATCH', path: '/api/v1/db/todos/3', body: { title: 'x' } },
  ],
  [
    'delete by key, minimal',
    { op: 'delete', byKey: true, pk: '3', minimal: true },
    { kind: 'raw', method: 'DELETE', prefer: 'return=minimal' },
  ],
  // With no filter, the server answers filter_required: the builder lets it say so.
  ['delete without filters', { op: 'delete' }, { kind: 'sdk', steps: [{ method: 'delete', args: [] }] }],
];

const refusals: Array<[string, Partial<TableRequest>, RegExp]> = [
  ['create without a body', { op: 'create' }, /Write the row to create/],
  ['a body that is not JSON', { op: 'create', body: '{title:' }, /not valid JSON/],
  ['an update with an array', { op: 'update', body: '[]' }, /one JSON object/],
  ['read one without a key', { op: 'get' }, /Give the id/],
  ['an unclosed quote in an in list', { filters: [['in', 'title', '"a']] }, /not closed/],
];

describe('planTable', () => {
  it.each(cases)('%s', (_name, fields, expected) => {
    const planned = planTable(todos, 'id', { ...base, ...fields });
    expect(planned).toMatchObject({ plan: expected as object });
  });

  it.each(refusals)('refuses %s', (_name, fields, message) => {
    const planned = planTable(todos, 'id', { ...base, ...fields });
    expect('error' in planned && planned.error).toMatch(message);
  });

  it('gives the by-key endpoints an SDK chain reaching the same row', () => {
    const planned = planTable(todos, 'id', { ...base, op: 'get', pk: '7' });
    expect('plan' in planned && planned.plan.kind === 'raw' && planned.plan.equivalent).toEqual([
      { method: 'select', args: [] },
      { method: 'eq', args: ['id', 7] },
      { method: 'single', args: [] },
    ]);
  });

  it('fills a create body with the required columns, an update body with one column', () => {
    expect(JSON.parse(bodyTemplate(todos, 'create'))).toEqual({ title: '' });
    expect(JSON.parse(bodyTemplate(todos, 'update'))).toEqual({ meta: {} });
  });
});

describe('auth SDK calls', () => {
  it('maps the endpoints the SDK has a call for', () => {
    expect(authSdkCall('POST', '/v1/auth/signin', { email: 'a@b.c', password: 'p' }, {})).toBe(
      `client.auth.signIn({ email: 'a@b.c', password: 'p' })`,
    );
    expect(authSdkCall('POST', '/v1/auth/signup', { email: 'a@b.c', password: 'p', data: { name: 'A' } }, {})).toBe(
      `client.auth.signUp(${js({ email: 'a@b.c', password: 'p', data: { name: 'A' } })})`,
    );
    expect(authSdkCall('GET', '/v1/auth/oauth/{provider}', undefined, { provider: 'github' })).toContain("signInWithOAuth('github'");
    expect(authSdkCall('GET', '/v1/auth/settings', undefined, {})).toBeNull();
  });
});
