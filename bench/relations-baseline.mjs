// The baseline of the relations scenario (bench/relations.mjs): a bare node:http server that
// does what Plinth does for `GET /api/v1/db/posts?select=id,title,created_at,author(name),
// comments(id,body,created_at)…` and nothing else: verify the user's JWT (jose, ES256), then in one
// transaction set role and claims and run ONE hand-written SQL statement that builds the page's
// JSON (posts, each with its author and its comments), through the same driver. Like
// bench/baseline.mjs, whose way of running a statement it copies.
// Usage: node bench/relations-baseline.mjs <port> <jwks.json path> <issuer> (DATABASE_URL or DATA_DIR in env).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';

const [port, jwksPath, issuer] = process.argv.slice(2);
const jwks = createLocalJWKSet(JSON.parse(readFileSync(jwksPath, 'utf8')));
const SET = "select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)";
// The page, by hand: 20 posts (newest first) with their author and their comments, in the
// cheapest form we know (row_to_json and json_agg of subqueries: json_build_object per comment
// cost PostgreSQL about twice the CPU in a first run).
const PAGE = `select coalesce(json_agg(x), '[]')::text as body from (
  select p.id, p.title, p.created_at,
    (select row_to_json(a) from (select a.name from authors a where a.id = p.author_id) a) as author,
    (select coalesce(json_agg(c), '[]') from (select c.id, c.body, c.created_at from comments c where c.post_id = p.id order by c.id) c) as comments
  from posts p order by p.id desc limit $1) x`;

let run;
if (process.env.DATABASE_URL) {
  const { default: postgres } = await import('postgres');
  const sql = postgres(process.env.DATABASE_URL, { max: Number(process.env.DB_POOL_SIZE ?? 10), onnotice: () => {} });
  run = async (claims, text, params) => {
    const [, rows] = await sql.begin((tx) => [tx.unsafe(SET, ['authenticated', claims]), tx.unsafe(text, params)]);
    return rows;
  };
} else {
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = new PGlite(process.env.DATA_DIR);
  await pg.waitReady;
  run = (claims, text, params) =>
    pg.transaction(async (tx) => {
      await tx.query(SET, ['authenticated', claims]);
      return (await tx.query(text, params)).rows;
    });
}

createServer(async (req, res) => {
  try {
    const auth = req.headers.authorization ?? '';
    const { payload } = await jwtVerify(auth.slice(7), jwks, { algorithms: ['ES256'], audience: 'authenticated', issuer });
    const limit = Number(new URL(req.url, 'http://x').searchParams.get('limit') ?? 20);
    const rows = await run(JSON.stringify(payload), PAGE, [limit]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(rows[0].body);
  } catch (err) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: String(err?.message ?? err) }));
  }
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
