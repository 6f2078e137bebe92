// The baseline of `npm run bench`: a bare node:http server that does what Plinth does for
// the two benchmarked requests, and nothing else: verify the user's JWT (jose, ES256), then
// in one transaction set role and claims and run the same SQL, through the same driver.
// Usage: node bench/baseline.mjs <port> <jwks.json path> <issuer> (DATABASE_URL or DATA_DIR in env),
// the JWKS being what the Plinth server published at GET /v1/auth/.well-known/jwks.json.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';

const [port, jwksPath, issuer] = process.argv.slice(2);
const jwks = createLocalJWKSet(JSON.parse(readFileSync(jwksPath, 'utf8')));
const SET = "select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)";
const READ = 'select * from items where owner = $1 limit 10';
const WRITE = 'insert into writes (title) values ($1) returning *';

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
    const claims = JSON.stringify(payload);
    let rows;
    if (req.method === 'GET') {
      const owner = new URL(req.url, 'http://x').searchParams.get('eq.owner');
      rows = await run(claims, READ, [owner]);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(rows));
    } else {
      let body = '';
      for await (const chunk of req) body += chunk;
      const { title } = JSON.parse(body);
      rows = await run(claims, WRITE, [title]);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(rows[0]));
    }
  } catch (err) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: String(err?.message ?? err) }));
  }
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
