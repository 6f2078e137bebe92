// The relations scenarios of `npm run bench` (issue 22), called by bench/run.mjs:
// - a page of a blog as a user under RLS: 20 posts, each with its author and its 10 comments,
//   `GET /api/v1/db/posts?select=id,title,created_at,author(name),comments(id,body,created_at)`,
//   against bench/relations-baseline.mjs doing the same with one hand-written SQL statement
//   (goal: ≥ 0.8× its throughput);
// - a function call returning a set (`POST /api/v1/rpc/my_items?limit=10`) against the plain list
//   of the same rows (`GET /api/v1/db/items?eq.owner=…&limit=10`), interleaved (goal ≥ 0.9×);
// - on PostgreSQL, the statements PostgreSQL runs per page request: transactions of the bench
//   database (pg_stat_database; each statement outside a transaction block is one) over N
//   requests sent one at a time, less what the idle server runs in as long (its outbox poll).
import { join } from 'node:path';
import postgres from 'postgres';

const PAGE =
  '/api/v1/db/posts?select=id,title,created_at,author(name),comments(id,body,created_at)&order=id.desc&limit=20&comments.order=id';
const POSTS = 2000;
const OWNERS = 10;
const COMMENTS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const seed = (userId) => `
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

async function checkPage(url, headers, who) {
  const res = await fetch(url, { headers });
  const posts = await res.json();
  const ok =
    res.ok &&
    posts.length === 20 &&
    posts.every((p) => typeof p.author?.name === 'string' && p.comments.length === COMMENTS && typeof p.comments[0].body === 'string');
  if (!ok) throw new Error(`${who} page check: ${res.status} ${JSON.stringify(posts).slice(0, 300)}`);
}

/**
 * PostgreSQL statements per request: transactions counted in pg_stat_database around `n`
 * requests sent one at a time, less the idle server's own over as long. Backends report their
 * counts at most once a second, and within 10 s of going idle (PGSTAT_IDLE_INTERVAL): hence
 * the waits.
 */
async function statementsPerRequest(databaseUrl, send, n) {
  const pg = postgres(databaseUrl, { max: 1, onnotice: () => {} });
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

/**
 * Seeds the blog, measures Plinth while it runs, and returns the measurements and `baseline()`,
 * to be called once Plinth has stopped (PGlite's data dir has one user at a time).
 */
export async function benchRelations({ kind, base, secret, user, userId, readPath, env, root, tools }) {
  const { start, stop, waitFor, cannon, cannonPair, sql, probe } = tools;
  await sql(base, secret, seed(userId));
  await checkPage(base + PAGE, user, 'Plinth');
  const res = {};
  res.page = await cannon('Plinth   page: 20 posts+author+comments', { url: base + PAGE, headers: user });
  const rpc = {
    url: `${base}/api/v1/rpc/my_items?limit=10`,
    method: 'POST',
    body: '{}',
    headers: { ...user, 'content-type': 'application/json' },
  };
  const [viaRpc, viaList] = await Promise.all([
    (async () => (await fetch(rpc.url, rpc)).json())(),
    (async () => (await fetch(base + readPath, { headers: user })).json())(),
  ]);
  if (viaRpc.length !== 10 || JSON.stringify(viaRpc.map((r) => r.owner)) !== JSON.stringify(viaList.map((r) => r.owner)))
    throw new Error(`rpc check: ${JSON.stringify(viaRpc).slice(0, 300)}`);
  [res.rpc, res.list] = await cannonPair(
    { label: 'Plinth   rpc (a set, 10 rows)', opts: rpc },
    { label: 'Plinth   list (the same 10 rows)', opts: { url: base + readPath, headers: user } },
  );
  if (kind === 'postgres') {
    res.statementsPerPage = await statementsPerRequest(
      env.DATABASE_URL,
      () => fetch(base + PAGE, { headers: user }).then((r) => r.text()),
      300,
    );
    console.log(`  PostgreSQL statements per page request: ${res.statementsPerPage}   (goal 1)`);
  }
  return {
    results: res,
    /** The baseline's page, once Plinth is stopped; then the ratios. */
    async baseline({ basePort, jwksFile, issuer, baseEnv }) {
      const baseline = start(
        'relations baseline',
        join(root, 'bench/relations-baseline.mjs'),
        [String(basePort), jwksFile, issuer],
        baseEnv,
      );
      const bbase = `http://127.0.0.1:${basePort}`;
      await waitFor(baseline, `${bbase}${PAGE}`, { headers: user });
      probe.server = baseline.proc.pid;
      await checkPage(bbase + PAGE, user, 'relations baseline');
      res.basePage = await cannon('Baseline page (one SQL statement)', { url: bbase + PAGE, headers: user });
      await stop(baseline);
      const ratio = (a, b) => (b ? Math.round((a / b) * 100) / 100 : null);
      res.pageRatio = ratio(res.page.rps, res.basePage.rps);
      res.rpcRatio = ratio(res.rpc.rps, res.list.rps);
      const wrong = (...runs) => (runs.some((r) => r.errors) ? ' (WRONG: a run had errors)' : '');
      console.log(`  page Plinth/baseline: ${res.pageRatio}${wrong(res.page, res.basePage)}   (goal ≥ 0.8)`);
      console.log(`  rpc / plain list: ${res.rpcRatio}${wrong(res.rpc, res.list)}   (goal ≥ 0.9)`);
      return res;
    },
  };
}

/** The summary lines of these scenarios, one column per database. */
export function relationsTable(results) {
  const rel = (r) => r.relations ?? {};
  const cell = (f) => results.map((r) => String(f(rel(r)) ?? '-').padStart(32)).join('');
  const rps = (x) => (x ? `${x.rps} req/s ${x.p50}/${x.p99} ms err ${x.errors}${x.errors ? ' !!' : ''}` : '-');
  return [
    `  ${'page (posts+author+comments)'.padEnd(28)}${cell((r) => rps(r.page))}`,
    `  ${'baseline page (one stmt)'.padEnd(28)}${cell((r) => rps(r.basePage))}`,
    `  ${'page Plinth/baseline'.padEnd(28)}${cell((r) => r.pageRatio)}`,
    `  ${'rpc / plain list'.padEnd(28)}${cell((r) => r.rpcRatio)}`,
    `  ${'pg statements per page'.padEnd(28)}${cell((r) => r.statementsPerPage)}`,
  ].join('\n');
}
