// The relations scenarios of `npm run bench` (issue 22), run by bench/run.mjs inside its
// alternating rounds (bench/README.md):
// - a page of a blog as a user under RLS: 20 posts, each with its author and its 10 comments,
//   `GET /api/v1/db/posts?select=id,title,created_at,author(name),comments(id,body,created_at)…`,
//   against bench/baseline.mjs doing the same with one hand-written prepared statement
//   (goal: ≥ 0.8× its requests per second; CPU per request on both sides in the issue-21 table);
// - a function call returning a set (`POST /api/v1/rpc/my_items?limit=10`) against the plain list
//   of the same rows (`GET /api/v1/db/items?eq.owner=…&limit=10`), alternating (goal ≥ 0.9×);
// - on PostgreSQL, the transactions PostgreSQL runs per page request (pg_stat_database): one
//   runAs batch is one implicit transaction carrying exactly one statement of the request
//   (db/run-as.ts), so N queries per page would show as N.
import postgres from 'postgres';

export const PAGE =
  '/api/v1/db/posts?select=id,title,created_at,author(name),comments(id,body,created_at)&order=id.desc&limit=20&comments.order=id';
/** The RPC call: the user's items, through a function, as the plain list reads them. */
export const RPC = '/api/v1/rpc/my_items?limit=10';
const POSTS = 2000;
const OWNERS = 10;
const COMMENTS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The blog (after run.mjs's items): authors, posts and comments under owner policies, and my_items(). */
export const seedRelations = (userId) => `
  create table authors (id serial primary key, name text not null);
  create policy read_authors on authors for select using (true);
  create table posts (id bigserial primary key, owner uuid not null default auth.uid(), author_id int not null references authors,
    title text not null, created_at timestamptz not null default now());
  create index posts_owner on posts (owner, id);
  create policy own_posts on posts for select using (owner = auth.uid());
  create table comments (id bigserial primary key, post_id bigint not null references posts, owner uuid not null,
    body text not null, created_at timestamptz not null default now());
  create index comments_post on comments (post_id);
  create policy own_comments on comments for select using (owner = auth.uid());
  insert into authors (name) select 'author ' || g from generate_series(1, 10) g;
  insert into posts (owner, author_id, title)
    select case when g % ${OWNERS} = 0 then '${userId}'::uuid else ('00000000-0000-4000-8000-' || lpad((g % ${OWNERS})::text, 12, '0'))::uuid end,
           1 + g % 10, 'post ' || g
    from generate_series(1, ${POSTS}) g;
  insert into comments (post_id, owner, body) select p.id, p.owner, 'comment ' || c from posts p, generate_series(1, ${COMMENTS}) c;
  analyze authors, posts, comments;
  -- The same rows as the plain list of run.mjs (items of the user), through a function.
  create function my_items() returns setof items language sql stable as $$ select * from items where owner = auth.uid() $$;
  grant execute on function my_items() to authenticated;`;

/** Throws unless `url` answers the page: 20 of the user's posts, each with its author and 10 comments. */
export async function checkPage(url, headers, who) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  const posts = res.ok ? JSON.parse(text) : null;
  const ok =
    Array.isArray(posts) &&
    posts.length === 20 &&
    posts.every((p) => typeof p.author?.name === 'string' && p.comments.length === COMMENTS && typeof p.comments[0].body === 'string');
  if (!ok) throw new Error(`${who} page check: ${res.status} ${text.slice(0, 300)}`);
  return posts;
}

/** The RPC scenario's request (autocannon options). */
export const rpcRequest = (base, user) => ({
  url: base + RPC,
  method: 'POST',
  body: '{}',
  headers: { ...user, 'content-type': 'application/json' },
});

/** Throws unless the RPC call answers 10 rows of the user's, as the plain list does. */
export async function checkRpc(base, user, readPath) {
  const rpc = rpcRequest(base, user);
  const viaRpc = await (await fetch(rpc.url, rpc)).json();
  const viaList = await (await fetch(base + readPath, { headers: user })).json();
  if (!Array.isArray(viaRpc) || viaRpc.length !== 10 || viaRpc.some((r) => r.owner !== viaList[0]?.owner))
    throw new Error(`rpc check: ${JSON.stringify(viaRpc).slice(0, 300)}`);
}

/**
 * Transactions PostgreSQL runs per request: xact_commit + xact_rollback of the database in
 * pg_stat_database around `n` requests sent one at a time, less the idle server's own over as
 * long (its outbox poll). Backends report their counts at most once a second, and within 10 s
 * of going idle (PGSTAT_IDLE_INTERVAL): hence the waits.
 */
export async function transactionsPerRequest(databaseUrl, send, n) {
  const pg = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'bench-probe' } });
  const count = async () =>
    Number((await pg.unsafe('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()'))[0].n);
  try {
    await sleep(11_000);
    const before = await count();
    const t0 = Date.now();
    for (let i = 0; i < n; i++) await send();
    const busy = Date.now() - t0;
    await sleep(11_000);
    const after = await count();
    // The idle server over a window as long (its outbox polls once a second).
    const idleStart = await count();
    await sleep(busy + 11_000);
    const idleEnd = await count();
    // Each count() is a transaction of its own: one falls between before and after, one in the idle window.
    const background = idleEnd - idleStart - 1;
    return Math.round(((after - before - 1 - background) / n) * 100) / 100;
  } finally {
    await pg.end({ timeout: 1 });
  }
}

/** The summary lines of these scenarios, one column per database. */
export function relationsTable(results) {
  const cell = (f) => results.map((r) => String(f(r) ?? '-').padStart(32)).join('');
  const rps = (x) => (x ? `${x.rps} req/s ${x.p50}/${x.p99} ms err ${x.errors}${x.errors ? ' !!' : ''}` : '-');
  const cpu = (x) => (x ? `${x.nodeCpuMs}${x.pgCpuMs === null ? '' : ` + pg ${x.pgCpuMs}`}` : '-');
  return [
    `  ${'page (posts+author+comments)'.padEnd(28)}${cell((r) => rps(r.page))}`,
    `  ${'baseline page (one stmt)'.padEnd(28)}${cell((r) => rps(r.basePage))}`,
    `  ${'CPU ms/req Plinth page'.padEnd(28)}${cell((r) => cpu(r.page))}`,
    `  ${'CPU ms/req baseline page'.padEnd(28)}${cell((r) => cpu(r.basePage))}`,
    `  ${'page Plinth/baseline req/s'.padEnd(28)}${cell((r) => r.pageRatio)}`,
    `  ${'rpc (a set, 10 rows)'.padEnd(28)}${cell((r) => rps(r.rpc))}`,
    `  ${'rpc / plain list req/s'.padEnd(28)}${cell((r) => r.rpcRatio)}`,
    `  ${'pg transactions per page'.padEnd(28)}${cell((r) => r.transactionsPerPage)}`,
  ].join('\n');
}
