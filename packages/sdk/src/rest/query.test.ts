import { describe, expect, it } from 'vitest';
import { createClient } from '../index.js';
import { buildQuery, formatList, formatOrder, formatSelect, initialState, parseCount } from './query.js';

/** A client whose fetch records the request and answers `[]`, so the wire format is observable without a server. */
function capturing() {
  const seen: Array<{ url: string; method: string; headers: Record<string, string>; body: string | undefined }> = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    seen.push({
      url: String(url),
      method: init?.method ?? 'GET',
      headers: init?.headers as Record<string, string>,
      body: init?.body as string,
    });
    return new Response('[]', { status: 200, headers: { 'content-type': 'application/json', 'content-range': '*/7' } });
  };
  const client = createClient('https://api.example.com/', 'pk_x', {
    fetch: fetch as typeof globalThis.fetch,
    auth: { autoRefreshToken: false },
  });
  const query = () => new URL(seen[seen.length - 1].url).search.slice(1);
  return { client, seen, query };
}

describe('query string building', () => {
  it.each([
    ['select all', (c: Q) => c.select(), ''],
    ['select list, spaces dropped', (c: Q) => c.select('id, title'), 'select=id,title'],
    ['eq and neq', (c: Q) => c.select().eq('id', 1).neq('title', 'a b'), 'eq.id=1&neq.title=a%20b'],
    ['range operators', (c: Q) => c.select().gt('n', 1).lt('n', 9).gte('m', 2).lte('m', 8), 'gt.n=1&lt.n=9&gte.m=2&lte.m=8'],
    ['like and ilike', (c: Q) => c.select().like('t', '%milk%').ilike('t', 'a_*'), 'like.t=%25milk%25&ilike.t=a_*'],
    ['in with quoting', (c: Q) => c.select().in('s', ['a', 'b,c', '"q', '']), 'in.s=a,%22b,c%22,%22%5C%22q%22,%22%22'],
    ['is', (c: Q) => c.select().is('deleted_at', null).is('done', false), 'is.deleted_at=null&is.done=false'],
    [
      'order terms',
      (c: Q) => c.select().order('a').order('b', { ascending: false, nullsFirst: false }).order('c', { nullsFirst: true }),
      'order=a.asc,b.desc.nullslast,c.asc.nullsfirst',
    ],
    [
      'limit and offset',
      (c: Q) => c.select('a,b').eq('x', 'y').order('a').limit(10).offset(0),
      'select=a,b&eq.x=y&order=a.asc&limit=10&offset=0',
    ],
    ['range', (c: Q) => c.select().range(20, 29), 'limit=10&offset=20'],
    ['single asks for two rows', (c: Q) => c.select().eq('id', 1).single(), 'eq.id=1&limit=2'],
    ['date values', (c: Q) => c.select().gt('at', new Date(0)), 'gt.at=1970-01-01T00%3A00%3A00.000Z'],
  ])('%s', async (_name, build, expected) => {
    const { client, query } = capturing();
    await build(client.from('todos'));
    expect(query()).toBe(expected);
  });

  it('sends method, path, body, apikey and Prefer for writes', async () => {
    const { client, seen } = capturing();
    await client.from('todos').insert([{ title: 'x' }], { returning: 'minimal' });
    await client.from('todos').update({ done: true }, { count: 'exact' }).eq('id', 3);
    await client.from('todos').delete().in('id', [1, 2]);
    await client.from('todos').select('*', { count: 'exact' });
    expect(seen.map((r) => [r.method, r.url, r.headers.prefer, r.body])).toEqual([
      ['POST', 'https://api.example.com/api/v1/db/todos', 'return=minimal', '[{"title":"x"}]'],
      ['PATCH', 'https://api.example.com/api/v1/db/todos?eq.id=3', 'count=exact', '{"done":true}'],
      ['DELETE', 'https://api.example.com/api/v1/db/todos?in.id=1,2', undefined, undefined],
      ['GET', 'https://api.example.com/api/v1/db/todos', 'count=exact', undefined],
    ]);
    expect(seen.every((r) => r.headers.apikey === 'pk_x' && r.headers.authorization === undefined)).toBe(true);
  });
});

type Q = ReturnType<ReturnType<typeof capturing>['client']['from']>;

describe('query helpers', () => {
  it('formats lists, orders and selects', () => {
    expect(formatList(['a', 'b,c', 3, null])).toBe('a,"b,c",3,null');
    expect(formatList(['say "hi"', '"x\\y'])).toBe('say "hi","\\"x\\\\y"');
    expect(formatOrder('x', { ascending: false })).toBe('x.desc');
    expect(formatSelect(' * ')).toBeNull();
    expect(buildQuery(initialState('GET', 't'))).toBe('');
  });

  it('parses Content-Range totals', () => {
    expect(parseCount('0-9/42')).toBe(42);
    expect(parseCount('*/0')).toBe(0);
    expect(parseCount('0-9/*')).toBeNull();
    expect(parseCount(null)).toBeNull();
  });
});
