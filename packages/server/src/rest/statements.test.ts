import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BLOG_SQL } from '../../test/blog.js';
import { createTestServer, type TestServer } from '../../test/harness.js';

// Every request is one statement through Db.runAs (db/run-as.ts), which prepares it once per
// session and role: the statement text must be the same for requests of the same shape, so the
// values, and nothing else, differ between two such requests (a text per value would prepare a
// statement per request and push the useful ones out of the 200 a session keeps).
let t: TestServer;
let alice: Record<string, string>;
/** What runAs was asked to run since the last `take()`. */
let calls: Array<{ text: string; values: string[] }> = [];
const take = () => {
  const out = calls;
  calls = [];
  return out;
};

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(`${BLOG_SQL}
    create function add(a int, b int) returns int language sql immutable as 'select a + b';
    create function posts_by(author int) returns setof posts language sql stable as $$ select * from posts where author_id = author $$;
    grant execute on function add(int, int), posts_by(int) to authenticated;`);
  expect(res.statusCode, res.body).toBe(200);
  alice = t.as.user(await t.mintToken(ALICE));
  const runAs = t.db.runAs.bind(t.db);
  t.db.runAs = (ctx, text, values, rows) => {
    calls.push({ text, values });
    return runAs(ctx, text, values, rows);
  };
});
afterAll(() => t?.stop());

type Req = { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: unknown; prefer?: string };

async function send(r: Req) {
  const headers = { ...alice, ...(r.prefer ? { prefer: r.prefer } : {}) };
  const res = await t.app.inject({ method: r.method ?? 'GET', url: r.url, headers, payload: r.payload as object });
  expect(res.statusCode, `${r.url}: ${res.body}`).toBeLessThan(300);
}

/** The path with its query's names and values percent-encoded, as a client sends them. */
function q(url: string): string {
  const [path, query] = url.split('?');
  const encoded = query
    .split('&')
    .map((p) => {
      const i = p.indexOf('=');
      return i === -1 ? encodeURIComponent(p) : `${encodeURIComponent(p.slice(0, i))}=${encodeURIComponent(p.slice(i + 1))}`;
    })
    .join('&');
  return `${path}?${encoded}`;
}

describe('one statement per request, its text the same for the same shape', () => {
  const SHAPES: Array<[string, Req, Req]> = [
    [
      'embedding with embedded filters, order and limit',
      { url: q('/api/v1/db/posts?select=id,author(name),comments(body)&comments.eq.approved=true&comments.limit=2&order=id&limit=3') },
      { url: q('/api/v1/db/posts?select=id,author(name),comments(body)&comments.eq.approved=false&comments.limit=5&order=id&limit=9') },
    ],
    [
      'many-to-many and !inner',
      { url: q('/api/v1/db/posts?select=id,tags!inner(name)&tags.eq.name=pg') },
      { url: q('/api/v1/db/posts?select=id,tags!inner(name)&tags.eq.name=cats') },
    ],
    [
      'or/and groups and not.',
      { url: q('/api/v1/db/posts?or=(eq.id.1,and(gt.score.3,not.is.meta.null))&not.eq.title=x') },
      { url: q('/api/v1/db/posts?or=(eq.id.3,and(gt.score.9,not.is.meta.null))&not.eq.title=y') },
    ],
    [
      'in inside a group',
      { url: q('/api/v1/db/posts?or=(in.id.(1,2),eq.score.5)') },
      { url: q('/api/v1/db/posts?or=(in.id.(3,4,5),eq.score.7)') },
    ],
    [
      'JSON paths in select and filters',
      { url: q('/api/v1/db/posts?select=id,kind:meta->>kind,first:meta->tags->0&eq.meta->>kind=news') },
      { url: q('/api/v1/db/posts?select=id,kind:meta->>kind,first:meta->tags->0&eq.meta->>kind=draft') },
    ],
    [
      'full-text search with a configuration',
      { url: q('/api/v1/db/posts?fts(english).body=cats') },
      { url: q('/api/v1/db/posts?fts(simple).body=dogs -cats') },
    ],
    [
      'aggregates with grouping',
      { url: q('/api/v1/db/posts?select=author_id,n:count(),max(score)&gt.score=0'), prefer: 'count=exact' },
      { url: q('/api/v1/db/posts?select=author_id,n:count(),max(score)&gt.score=4'), prefer: 'count=exact' },
    ],
    [
      'upsert (merge-duplicates, on_conflict)',
      {
        method: 'POST',
        url: '/api/v1/db/notes?on_conflict=slug',
        payload: [{ id: 10, slug: 'a', body: 'one' }],
        prefer: 'resolution=merge-duplicates',
      },
      {
        method: 'POST',
        url: '/api/v1/db/notes?on_conflict=slug',
        payload: [
          { id: 11, slug: 'b', body: 'two' },
          { id: 12, slug: 'c', body: 'three' },
        ],
        prefer: 'resolution=merge-duplicates',
      },
    ],
    [
      'upsert (ignore-duplicates)',
      { method: 'POST', url: '/api/v1/db/notes', payload: { id: 10, slug: 'a', body: 'x' }, prefer: 'resolution=ignore-duplicates' },
      { method: 'POST', url: '/api/v1/db/notes', payload: { id: 13, slug: 'd', body: 'y' }, prefer: 'resolution=ignore-duplicates' },
    ],
    [
      'RPC with a scalar result, POST and GET',
      { method: 'POST', url: '/api/v1/rpc/add', payload: { a: 1, b: 2 } },
      { method: 'POST', url: '/api/v1/rpc/add', payload: { b: 40, a: 2 } },
    ],
    ['RPC by GET', { url: '/api/v1/rpc/add?a=1&b=2' }, { url: '/api/v1/rpc/add?a=5&b=6' }],
    [
      'RPC with a set result, shaped like a table',
      { method: 'POST', url: q('/api/v1/rpc/posts_by?select=id,author(name)&gt.id=0&order=id&limit=2'), payload: { author: 1 } },
      { method: 'POST', url: q('/api/v1/rpc/posts_by?select=id,author(name)&gt.id=2&order=id&limit=7'), payload: { author: 2 } },
    ],
  ];

  it.each(SHAPES)('%s', async (_what, first, second) => {
    take();
    await send(first);
    const [a, ...moreA] = take();
    await send(second);
    const [b, ...moreB] = take();
    expect(moreA).toEqual([]);
    expect(moreB).toEqual([]);
    expect(b.text).toBe(a.text);
    expect(b.values).not.toEqual(a.values);
  });

  it('a page of posts, each with its author and comments, is one statement', async () => {
    take();
    await send({ url: q('/api/v1/db/posts?select=id,title,author(name),comments(id,body,author(name))&order=id.desc&limit=20') });
    expect(take()).toHaveLength(1);
  });
});
