import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BLOG_SQL } from '../../test/blog.js';
import { createTestServer, type TestServer } from '../../test/harness.js';

// docs/api.md §2 on the blog schema (test/blog.ts), as Alice under its owner policies: every form
// of the grammar answers what the same query written by hand in SQL answers, run as Alice.
let t: TestServer;
let alice: Record<string, string>;

beforeAll(async () => {
  t = await createTestServer();
  const res = await t.sql(BLOG_SQL);
  expect(res.statusCode, res.body).toBe(200);
  alice = t.as.user(await t.mintToken(ALICE));
});
afterAll(() => t?.stop());

/** Each name and value percent-encoded, as a client sends them. */
const encode = (query: string) =>
  query
    .split('&')
    .map((p) => {
      const i = p.indexOf('=');
      return i === -1 ? encodeURIComponent(p) : `${encodeURIComponent(p.slice(0, i))}=${encodeURIComponent(p.slice(i + 1))}`;
    })
    .join('&');

function get(table: string, query: string, headers: Record<string, string> = alice) {
  return t.app.inject({ url: `/api/v1/db/${table}?${encode(query)}`, headers });
}

/** The rows of a hand-written query, run as Alice (role and claims as the API sets them), as JSON. */
async function byHand(sql: string): Promise<unknown> {
  return t.db.transaction(async (tx) => {
    await tx.query("select set_config('role', 'authenticated', true), set_config('request.jwt.claims', $1, true)", [
      JSON.stringify({ sub: ALICE, role: 'authenticated' }),
    ]);
    const { rows } = await tx.query<{ j: string }>(`select coalesce(json_agg(q), '[]')::text as j from (${sql}) q`);
    return JSON.parse(rows[0].j);
  });
}

/** [what, table, query string, the same query by hand] */
const SCENARIOS: Array<[string, string, string, string]> = [
  [
    'many-to-one: an object, null when the row is hidden by RLS',
    'posts',
    'select=id,title,author(name)&order=id',
    `select p.id, p.title, case when a.id is null then null else json_build_object('name', a.name) end as author
     from posts p left join authors a on a.id = p.author_id order by p.id`,
  ],
  [
    'one-to-many: an array without the rows hidden by RLS',
    'posts',
    'select=id,comments(id,body)&comments.order=id&order=id',
    `select p.id, coalesce((select json_agg(json_build_object('id', c.id, 'body', c.body) order by c.id)
       from comments c where c.post_id = p.id), '[]') as comments from posts p order by p.id`,
  ],
  [
    'many-to-many through the join table',
    'posts',
    'select=id,tags(name)&tags.order=name&order=id',
    `select p.id, coalesce((select json_agg(json_build_object('name', g.name) order by g.name)
       from post_tags pt join tags g on g.id = pt.tag_id where pt.post_id = p.id), '[]') as tags from posts p order by p.id`,
  ],
  [
    'one-to-one (a unique foreign key): an object',
    'authors',
    'select=id,profiles(bio)&order=id',
    `select a.id, (select json_build_object('bio', f.bio) from profiles f where f.author_id = a.id) as profiles from authors a order by a.id`,
  ],
  [
    'nested, and every column of an embedded row',
    'posts',
    'select=id,comments(body,author(*))&comments.order=id&order=id',
    `select p.id, coalesce((select json_agg(json_build_object('body', c.body, 'author',
         (select row_to_json(a) from authors a where a.id = c.author_id)) order by c.id)
       from comments c where c.post_id = p.id), '[]') as comments from posts p order by p.id`,
  ],
  [
    'a self-reference: the parent by its column, the replies by the table',
    'comments',
    'select=id,parent(id),replies:comments(id)&replies.order=id&order=id',
    `select c.id, (select json_build_object('id', x.id) from comments x where x.id = c.parent_id) as parent,
       coalesce((select json_agg(json_build_object('id', r.id) order by r.id) from comments r where r.parent_id = c.id), '[]') as replies
     from comments c order by c.id`,
  ],
  [
    'aliases, and the second key to authors named by its column',
    'posts',
    'select=post:id,writer:author(name),editor(name)&order=id',
    `select p.id as post, (select json_build_object('name', a.name) from authors a where a.id = p.author_id) as writer,
       (select json_build_object('name', e.name) from authors e where e.id = p.editor_id) as editor from posts p order by p.id`,
  ],
  [
    'a foreign key named after !',
    'posts',
    'select=id,authors!posts_editor_id_fkey(name)&order=id',
    `select p.id, (select json_build_object('name', e.name) from authors e where e.id = p.editor_id) as authors from posts p order by p.id`,
  ],
  [
    'embedded filters, order, limit and offset shape the array only',
    'posts',
    'select=id,comments(id)&comments.eq.approved=true&comments.order=id.desc&comments.limit=2&comments.offset=1&order=id',
    `select p.id, coalesce((select json_agg(json_build_object('id', x.id)) from
       (select c.id from comments c where c.post_id = p.id and c.approved order by c.id desc limit 2 offset 1) x), '[]') as comments
     from posts p order by p.id`,
  ],
  [
    '!inner keeps the parents with a matching row',
    'posts',
    'select=id,author!inner(name)&author.eq.name=Bob&order=id',
    `select p.id, json_build_object('name', a.name) as author from posts p join authors a on a.id = p.author_id
     where a.name = 'Bob' order by p.id`,
  ],
  [
    '!inner on an array, with a filter-only relation',
    'posts',
    'select=id,comments!inner(id),tags!inner()&comments.eq.author_id=1&tags.eq.name=cats&order=id',
    `select p.id, (select json_agg(json_build_object('id', c.id) order by c.id) from comments c where c.post_id = p.id and c.author_id = 1) as comments
     from posts p where exists (select 1 from comments c where c.post_id = p.id and c.author_id = 1)
       and exists (select 1 from post_tags pt join tags g on g.id = pt.tag_id where pt.post_id = p.id and g.name = 'cats') order by p.id`,
  ],
  [
    'not. for every operator',
    'posts',
    'select=id&not.in.id=1,2&not.is.editor_id=null&not.like.title=*draft*&not.eq.score=0&not.ilike.body=*ZZZ*&order=id',
    `select id from posts where not id in (1, 2) and editor_id is not null and title not like '%draft%' and not score = 0
       and body not ilike '%ZZZ%' order by id`,
  ],
  [
    'or and and, nested, with quoted values',
    'posts',
    'select=id&or=(eq.title."Hello world",and(eq.published.true,gt.score.5),in.id.(4,"5"))&order=id',
    `select id from posts where title = 'Hello world' or (published and score > 5) or id in (4, 5) order by id`,
  ],
  [
    'not.or, and a group on an embedded relation',
    'posts',
    'select=id,comments(id)&not.or=(eq.id.3,eq.id.4)&comments.or=(eq.id.1,not.eq.author_id.2)&comments.order=id&order=id',
    `select p.id, coalesce((select json_agg(json_build_object('id', c.id) order by c.id) from comments c
       where c.post_id = p.id and (c.id = 1 or not c.author_id = 2)), '[]') as comments
     from posts p where not (p.id = 3 or p.id = 4) order by p.id`,
  ],
  [
    'JSON paths in select: the last key (or the alias) names the value',
    'posts',
    'select=id,kind:meta->>kind,meta->tags->0,meta->n&order=id',
    `select id, meta->>'kind' as kind, meta->'tags'->0 as "0", meta->'n' as n from posts order by id`,
  ],
  [
    'JSON paths in filters: text with ->>, JSON with ->',
    'posts',
    'select=id&eq.meta->>kind=news&gt.meta->n=1&in.meta->>kind=news,other&order=id',
    `select id from posts where meta->>'kind' = 'news' and meta->'n' > '1'::jsonb and meta->>'kind' in ('news', 'other') order by id`,
  ],
  [
    'full-text search on a tsvector column (websearch syntax)',
    'posts',
    'select=id&fts(english).search="first post" or cats -dogs&order=id',
    `select id from posts where search @@ websearch_to_tsquery('english', '"first post" or cats -dogs') order by id`,
  ],
  [
    'full-text search on a text column, with a configuration',
    'posts',
    'select=id&fts(simple).body=cats&fts.title=writes&order=id',
    `select id from posts where to_tsvector('simple', body) @@ websearch_to_tsquery('simple', 'cats')
       and to_tsvector(title) @@ websearch_to_tsquery('writes') order by id`,
  ],
  [
    'aggregates group by the other columns',
    'posts',
    'select=published,count()&order=published',
    `select published, count(*) as count from posts group by published order by published`,
  ],
  [
    'every aggregate, aliased, ordered by one',
    'posts',
    'select=author_id,total:count(),sum(score),avg(score),min(score),max(score)&order=total.desc,author_id',
    `select author_id, count(*) as total, sum(score) as sum, avg(score) as avg, min(score) as min, max(score) as max
     from posts group by author_id order by total desc, author_id`,
  ],
  [
    'aggregates inside an embedded relation',
    'posts',
    'select=id,comments(count())&order=id',
    `select p.id, json_build_array(json_build_object('count', (select count(*) from comments c where c.post_id = p.id))) as comments
     from posts p order by p.id`,
  ],
];

describe('each form of the grammar answers what the same SQL by hand answers', () => {
  for (const [what, table, query, sql] of SCENARIOS) {
    it(what, async () => {
      const res = await get(table, query);
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.parse(res.body)).toEqual(await byHand(sql));
      // And it is not empty: every scenario is written to return something.
      expect(JSON.parse(res.body).length).toBeGreaterThan(0);
    });
  }
});

describe('row-level security inside embedded relations', () => {
  it('a comment hidden by a policy is absent; an author hidden by a policy is null', async () => {
    const res = await get('posts', 'select=id,author(name),comments(id)&comments.order=id&order=id');
    const posts = res.json() as Array<{ id: number; author: { name: string } | null; comments: Array<{ id: number }> }>;
    const first = posts.find((p) => p.id === 1);
    // Comment 4 is Bob's and not approved: Alice does not see it.
    expect(first?.comments.map((c) => c.id)).toEqual([1, 2, 3]);
    // Cy is hidden: his post is visible (published), its author is null.
    expect(posts.find((p) => p.id === 4)?.author).toBeNull();
    // Bob sees his own pending comment.
    const bob = t.as.user(await t.mintToken('22222222-2222-4222-8222-222222222222'));
    const asBob = (await get('posts', 'select=id,comments(id)&comments.order=id&eq.id=1', bob)).json();
    expect(asBob[0].comments.map((c: { id: number }) => c.id)).toEqual([1, 2, 3, 4]);
  });

  it('anon sees what the policies give anon, embedded rows included', async () => {
    const res = await get('posts', 'select=id,comments(id)&comments.order=id&order=id', t.as.anon);
    expect(res.statusCode).toBe(200);
    expect(res.json().map((p: { id: number }) => p.id)).toEqual([1, 3, 4]);
    expect(res.json()[1].comments).toEqual([{ id: 5 }]);
  });
});

describe('counts and single rows', () => {
  it('Prefer: count=exact counts the parents !inner keeps', async () => {
    const res = await get('posts', 'select=id,author!inner(name)&author.eq.name=Ada&limit=1&order=id', { ...alice, prefer: 'count=exact' });
    expect(res.json()).toEqual([{ id: 1, author: { name: 'Ada' } }]);
    expect(res.headers['content-range']).toBe('0-0/2');
  });

  it('counts groups when aggregating', async () => {
    const res = await get('posts', 'select=author_id,count()&limit=1&order=author_id', { ...alice, prefer: 'count=exact' });
    expect(res.headers['content-range']).toBe('0-0/3');
  });

  it('embeds on /{pk}', async () => {
    const res = await t.app.inject({ url: '/api/v1/db/posts/3?select=title,author(name),tags(name)', headers: alice });
    expect(res.json()).toEqual({ title: 'Bob writes', author: { name: 'Bob' }, tags: [{ name: 'cats' }] });
  });
});

describe('refusals', () => {
  const cases: Array<[string, string, number, string]> = [
    ['posts', 'select=id,authors(name)', 400, 'ambiguous_relation'],
    ['posts', 'select=id,nope(name)', 400, 'relation_not_found'],
    ['posts', 'select=id,author!nope(name)', 400, 'relation_not_found'],
    ['posts', 'select=id&comments.eq.id=1', 400, 'invalid_parameter'],
    ['posts', 'select=id,author(name)&author.limit=1', 400, 'invalid_parameter'],
    ['posts', 'select=id,author(nope)', 400, 'column_not_found'],
    ['posts', 'select=title->x', 400, 'invalid_parameter'],
    ['posts', 'select=meta->>a->b', 400, 'invalid_parameter'],
    ['posts', 'fts.score=x', 400, 'invalid_value'],
    ['posts', 'fts(nope).title=x', 400, 'invalid_value'],
    ['posts', 'eq.search=a:0', 400, 'invalid_value'],
    ['posts', 'eq.search=a\\', 400, 'invalid_value'],
    ['posts', 'or=(eq.id)', 400, 'invalid_parameter'],
    ['posts', 'or=eq.id.1', 400, 'invalid_parameter'],
    ['posts', 'or=(eq.id.1', 400, 'invalid_parameter'],
    ['posts', 'or=(nope.id.1)', 400, 'invalid_parameter'],
    ['posts', 'select=id,count(),author(name)', 400, 'invalid_parameter'],
    ['posts', 'select=published,count()&order=title', 400, 'invalid_parameter'],
    ['posts', 'select=sum()', 400, 'invalid_parameter'],
    ['posts', 'select=sum(title)', 400, 'invalid_value'],
    ['posts', 'select=id,id:title', 400, 'invalid_parameter'],
    ['posts', 'select=id,author(name', 400, 'invalid_parameter'],
    ['posts', `select=${'k'.repeat(64)}:id`, 400, 'invalid_parameter'],
  ];
  for (const [table, query, status, code] of cases) {
    it(`${table}?${query} → ${status} ${code}`, async () => {
      const res = await get(table, query);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().code).toBe(code);
    });
  }

  it('an ambiguous relation lists the candidates and how to write each', async () => {
    const res = await get('posts', 'select=id,authors(name)');
    expect(res.json().details.candidates).toEqual([
      expect.objectContaining({ relation: 'authors', cardinality: 'one', constraint: 'posts_author_id_fkey', embed: 'author' }),
      expect.objectContaining({ relation: 'authors', cardinality: 'one', constraint: 'posts_editor_id_fkey', embed: 'editor' }),
    ]);
    for (const c of res.json().details.candidates) expect((await get('posts', `select=id,${c.embed}(name)`)).statusCode).toBe(200);
  });
});

describe('one statement per request', () => {
  it('a list with an author, comments and tags per row is one runAs and nothing else', async () => {
    // The user's session is checked (and cached) by an earlier request.
    expect((await get('posts', 'select=id')).statusCode).toBe(200);
    const db = t.db as unknown as Record<string, (...args: unknown[]) => unknown>;
    const calls: string[] = [];
    const stacks: string[] = [];
    const originals = new Map<string, (...args: unknown[]) => unknown>();
    for (const m of ['runAs', 'query', 'transaction', 'script']) {
      const original = db[m];
      originals.set(m, original);
      db[m] = (...args: unknown[]) => {
        // Only the request's own calls (made under the REST handler, its async frames included):
        // the server's background loops (the realtime numbering poll, the schema watch and the
        // schema cache's reload it starts) use the database meanwhile too.
        // The first two lines are the Error and this wrapper (itself in src/rest/): left out.
        const stack = (new Error().stack ?? '').split('\n').slice(2).join('\n');
        if (/[\\/]src[\\/]rest[\\/]/.test(stack) && !/[\\/]src[\\/]rest[\\/]schema-cache[\\/]/.test(stack)) {
          calls.push(m);
          if (m !== 'runAs') stacks.push(stack);
        }
        return original.apply(t.db, args);
      };
    }
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 50;
    try {
      const res = await get('posts', 'select=id,author(name),comments(body,author(name)),tags(name)&order=id&limit=20');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toHaveLength(4);
    } finally {
      for (const [m, f] of originals) db[m] = f;
      Error.stackTraceLimit = limit;
    }
    expect(calls, stacks.join('\n---\n')).toEqual(['runAs']);
  });
});
