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
    [
      'embedding, spaces dropped',
      (c: Q) => c.select('id, author ( name ), comments!inner(body)'),
      'select=id,author(name),comments!inner(body)',
    ],
    [
      'filters, order and paging of an embedded relation',
      (c: Q) =>
        c
          .select('id,comments(body)')
          .eq('comments.approved', true)
          .order('created_at', { referencedTable: 'comments', ascending: false })
          .order('id', { referencedTable: 'comments' })
          .range(0, 2, { referencedTable: 'comments' }),
      'select=id,comments(body)&comments.eq.approved=true&comments.order=created_at.desc,id.asc&comments.offset=0&comments.limit=3',
    ],
    ['nested relations', (c: Q) => c.select().is('comments.author.banned', false), 'comments.author.is.banned=false'],
    [
      'not, for every operator',
      (c: Q) => c.select().not('status', 'in', ['a', 'b,c']).not('deleted_at', 'is', null).not('n', 'eq', 3),
      'not.in.status=a,%22b,c%22&not.is.deleted_at=null&not.eq.n=3',
    ],
    [
      'or, and on an embedded relation',
      (c: Q) => c.select().or('eq.status.open,and(gt.n.3,is.owner.null)').or('eq.id.1', { referencedTable: 'comments' }),
      'or=(eq.status.open,and(gt.n.3,is.owner.null))&comments.or=(eq.id.1)',
    ],
    [
      'textSearch, with and without a configuration',
      (c: Q) => c.select().textSearch('body', '"a b" -c').textSearch('title', 'x', { config: 'simple' }),
      'fts.body=%22a%20b%22%20-c&fts(simple).title=x',
    ],
    ['JSON paths', (c: Q) => c.select('kind:meta->>kind').eq('meta->>kind', 'a'), 'select=kind%3Ameta-%3E%3Ekind&eq.meta-%3E%3Ekind=a'],
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

  it('sends upserts with Prefer: resolution and on_conflict', async () => {
    const { client, seen } = capturing();
    await client.from('todos').upsert({ id: 1, title: 'x' });
    await client.from('tags').upsert([{ name: 'pg' }], { onConflict: 'name, org', ignoreDuplicates: true, returning: 'minimal' });
    expect(seen.map((r) => [r.method, r.url, r.headers.prefer, r.body])).toEqual([
      ['POST', 'https://api.example.com/api/v1/db/todos', 'resolution=merge-duplicates', '{"id":1,"title":"x"}'],
      [
        'POST',
        'https://api.example.com/api/v1/db/tags?on_conflict=name,org',
        'return=minimal, resolution=ignore-duplicates',
        '[{"name":"pg"}]',
      ],
    ]);
  });

  it('calls functions: POST with the arguments as the body, GET with them in the query; sets take filters', async () => {
    const { client, seen } = capturing();
    await client.rpc('add', { a: 1, b: [1, 2] });
    await client
      .rpc('posts by', { author: 7 }, { get: true, count: 'exact' })
      .select('id,title')
      .eq('published', true)
      .order('id')
      .limit(5);
    await client.rpc('nothing');
    expect(seen.map((r) => [r.method, r.url, r.headers.prefer, r.body])).toEqual([
      ['POST', 'https://api.example.com/api/v1/rpc/add', undefined, '{"a":1,"b":[1,2]}'],
      [
        'GET',
        'https://api.example.com/api/v1/rpc/posts%20by?select=id,title&author=7&eq.published=true&order=id.asc&limit=5',
        'count=exact',
        undefined,
      ],
      ['POST', 'https://api.example.com/api/v1/rpc/nothing', undefined, '{}'],
    ]);
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
