// The baseline of `npm run bench`: a bare node:http server that does what Plinth does for
// the benchmarked requests, and nothing else, as a careful hand-written server would: verify
// the user's JWT (jose, ES256), then in one transaction set role and claims and run the
// statement. On PostgreSQL through postgres.js with tagged templates, which it prepares once
// per connection, the set_config and the statement pipelined after BEGIN (sql.begin with an
// array); its connections are named `bench-baseline` so the bench counts their CPU apart from
// Plinth's (bench/README.md). On PGlite the same transaction through PGlite's own API.
// Usage: node bench/baseline.mjs <port> <jwks.json path> <issuer> (DATABASE_URL or DATA_DIR in env),
// the JWKS being what the Plinth server published at GET /v1/auth/.well-known/jwks.json.
//   GET   /api/v1/db/items?eq.owner=<uuid>&limit=10   the user's rows (RLS)
//   POST  /api/v1/db/writes {title}                   one row, returned
//   PATCH /api/v1/db/items/<id> {title}               one row updated, returned
//   GET   /api/v1/db/posts?…&limit=20                 a page of the blog (bench/relations.mjs):
//         posts with their author and comments, as ONE hand-written statement building the JSON
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';

const [port, jwksPath, issuer] = process.argv.slice(2);
const jwks = createLocalJWKSet(JSON.parse(readFileSync(jwksPath, 'utf8')));

/** (claims, owner) → rows; (claims, title) → row; (claims, id, title) → row; (claims, limit) → JSON text. */
let read;
let insert;
let update;
let page;
// The page, by hand: the newest posts with their author and their comments, in the cheapest
// form we know (row_to_json and json_agg of subqueries: json_build_object per comment cost
// PostgreSQL about twice the CPU in a first run). RLS decides which posts and comments.
const PAGE_FROM = `from (
  select p.id, p.title, p.created_at,
    (select row_to_json(a) from (select a.name from authors a where a.id = p.author_id) a) as author,
    (select coalesce(json_agg(c), '[]') from (select c.id, c.body, c.created_at from comments c where c.post_id = p.id order by c.id) c) as comments
  from posts p order by p.id desc limit`;
if (process.env.DATABASE_URL) {
  const { default: postgres } = await import('postgres');
  const sql = postgres(process.env.DATABASE_URL, {
    max: Number(process.env.DB_POOL_SIZE ?? 10),
    onnotice: () => {},
    connection: { application_name: 'bench-baseline' },
  });
  const set = (tx, claims) => tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims}, true)`;
  read = async (claims, owner) => (await sql.begin((tx) => [set(tx, claims), tx`select * from items where owner = ${owner} limit 10`]))[1];
  insert = async (claims, title) =>
    (await sql.begin((tx) => [set(tx, claims), tx`insert into writes (title) values (${title}) returning *`]))[1][0];
  update = async (claims, id, title) =>
    (await sql.begin((tx) => [set(tx, claims), tx`update items set title = ${title} where id = ${id} returning *`]))[1][0];
  const pageSql = (tx, limit) => tx`select coalesce(json_agg(x), '[]')::text as body ${tx.unsafe(PAGE_FROM)} ${limit}) x`;
  page = async (claims, limit) => (await sql.begin((tx) => [set(tx, claims), pageSql(tx, limit)]))[1][0].body;
} else {
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = new PGlite(process.env.DATA_DIR);
  await pg.waitReady;
  const SET = "select set_config('role', 'authenticated', true), set_config('request.jwt.claims', $1, true)";
  const inTx = (claims, text, params) =>
    pg.transaction(async (tx) => {
      await tx.query(SET, [claims]);
      return (await tx.query(text, params)).rows;
    });
  read = (claims, owner) => inTx(claims, 'select * from items where owner = $1 limit 10', [owner]);
  insert = async (claims, title) => (await inTx(claims, 'insert into writes (title) values ($1) returning *', [title]))[0];
  update = async (claims, id, title) => (await inTx(claims, 'update items set title = $1 where id = $2 returning *', [title, id]))[0];
  const text = `select coalesce(json_agg(x), '[]')::text as body ${PAGE_FROM} $1) x`;
  page = async (claims, limit) => (await inTx(claims, text, [limit]))[0].body;
}

async function body(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

const send = (res, status, value) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

createServer(async (req, res) => {
  try {
    const auth = req.headers.authorization ?? '';
    const { payload } = await jwtVerify(auth.slice(7), jwks, { algorithms: ['ES256'], audience: 'authenticated', issuer });
    const claims = JSON.stringify(payload);
    const url = new URL(req.url, 'http://x');
    if (req.method === 'GET' && url.pathname.endsWith('/posts')) {
      const body = await page(claims, Number(url.searchParams.get('limit') ?? 20));
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(body);
    }
    if (req.method === 'GET') return send(res, 200, await read(claims, url.searchParams.get('eq.owner')));
    if (req.method === 'POST') return send(res, 201, await insert(claims, (await body(req)).title));
    const id = url.pathname.split('/').pop();
    return send(res, 200, await update(claims, id, (await body(req)).title));
  } catch (err) {
    send(res, 500, { message: String(err?.message ?? err) });
  }
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
