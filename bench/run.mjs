// npm run bench: Plinth against a bare node:http baseline, on PGlite and on PostgreSQL, in
// one run. Scenarios: (a) an authenticated read under RLS, (b) an authenticated insert,
// (c) the same read with the secret key (the price of verifying a user token), each also
// served by the baseline (bench/baseline.mjs). Prints req/s, p50/p99 and Plinth/baseline.
// BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32), BENCH_DBS=pglite,postgres.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SignJWT, importJWK } from 'jose';
import postgres from 'postgres';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DBS = (process.env.BENCH_DBS ?? 'pglite,postgres').split(',');
const OWNER = '00000000-0000-4000-8000-000000000001';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function start(cmd, args, env) {
  const proc = spawn(process.execPath, [cmd, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { proc, exited: new Promise((r) => proc.on('exit', r)) };
}

async function waitFor(url, init) {
  for (let i = 0; i < 400; i++) {
    try {
      const res = await fetch(url, init);
      if (res.status < 500) return;
    } catch {}
    await sleep(50);
  }
  throw new Error(`${url} did not come up`);
}

async function sql(base, secret, query) {
  const res = await fetch(`${base}/api/v1/sql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`sql failed: ${JSON.stringify(body)}`);
  return body.results;
}

async function cannon(label, opts) {
  await autocannon({ ...opts, connections: CONNECTIONS, duration: 2 }); // warm-up
  const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: SECONDS });
  const bad = r.non2xx + r.errors + r.timeouts;
  const out = { label, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: bad, total: r.requests.total };
  console.log(
    `  ${label.padEnd(34)} ${String(out.rps).padStart(7)} req/s  p50 ${String(out.p50).padStart(4)} ms  p99 ${String(out.p99).padStart(4)} ms${bad ? `  (${bad} errors!)` : ''}`,
  );
  return out;
}

async function benchDb(kind) {
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const basePort = port + 1;
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-'));
  const env = {
    // The benchmark is one client IP: lift the per-IP limits, which would otherwise answer 429.
    AUTH_RATE_REQUESTS_IP: '100000000/60',
    AUTH_RATE_SIGNIN_IP: '100000000/60',
    PUBLIC_URL: `http://localhost:${port}`,
    PLINTH_PUBLIC_KEY: 'pk_bench_public_key_0123456789abcdef0123456789abcdef',
    PLINTH_SECRET_KEY: 'sk_bench_secret_key_0123456789abcdef0123456789abcdef',
  };
  let dbUrl = null;
  if (kind === 'postgres') {
    const admin = execFileSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' }).trim();
    const a = postgres(admin, { max: 1, onnotice: () => {} });
    await a.unsafe('drop database if exists plinth_bench with (force)');
    await a.unsafe('create database plinth_bench');
    await a.end();
    dbUrl = admin.replace(/\/[^/]*$/, '/plinth_bench');
    env.DATABASE_URL = dbUrl;
  }
  console.log(`\n${kind === 'pglite' ? 'PGlite (embedded)' : 'PostgreSQL'} — ${CONNECTIONS} connections, ${SECONDS} s per scenario`);
  const plinth = start(join(root, 'packages/server/dist/main.js'), ['start', '--port', String(port), '--data-dir', dataDir], env);
  await waitFor(`${base}/health`);
  const secret = env.PLINTH_SECRET_KEY;
  await sql(
    base,
    secret,
    `create table items (id bigserial primary key, owner uuid not null default auth.uid(), title text not null, created_at timestamptz not null default now());
     create index items_owner on items (owner);
     create policy own_read on items for select using (owner = auth.uid());
     create policy own_write on items for insert with check (owner = auth.uid());
     insert into items (owner, title)
       select ('00000000-0000-4000-8000-' || lpad((1 + g % 100)::text, 12, '0'))::uuid, 'item ' || g from generate_series(1, 10000) g;
     analyze items;`,
  );
  const [keyRow] = (
    await sql(base, secret, 'select private_jwk, public_jwk from auth.signing_keys where active order by created_at desc limit 1')
  )[0].rows;
  const priv = typeof keyRow.private_jwk === 'string' ? JSON.parse(keyRow.private_jwk) : keyRow.private_jwk;
  const pub = typeof keyRow.public_jwk === 'string' ? JSON.parse(keyRow.public_jwk) : keyRow.public_jwk;
  const issuer = `${env.PUBLIC_URL}/v1/auth`;
  const token = await new SignJWT({ role: 'authenticated', session_id: crypto.randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid: priv.kid, typ: 'JWT' })
    .setSubject(OWNER)
    .setIssuer(issuer)
    .setAudience('authenticated')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(await importJWK(priv, 'ES256'));
  const user = { apikey: env.PLINTH_PUBLIC_KEY, authorization: `Bearer ${token}` };
  const readPath = `/api/v1/db/items?eq.owner=${OWNER}&limit=10`;
  const write = { method: 'POST', body: JSON.stringify({ title: 'bench' }), headers: { ...user, 'content-type': 'application/json' } };

  const check = await fetch(base + readPath, { headers: user });
  const rows = await check.json();
  if (check.status !== 200 || rows.length !== 10)
    throw new Error(`read check failed: ${check.status} ${JSON.stringify(rows).slice(0, 200)}`);

  const res = {};
  res.read = await cannon('Plinth   read  (user, RLS)', { url: base + readPath, headers: user });
  res.write = await cannon('Plinth   write (user, RLS)', { url: base + '/api/v1/db/items', ...write });
  res.serviceRead = await cannon('Plinth   read  (secret key)', { url: base + readPath, headers: { authorization: `Bearer ${secret}` } });
  Object.assign(res, await benchAuth(base, env.PLINTH_PUBLIC_KEY));
  plinth.proc.kill('SIGTERM');
  await plinth.exited;

  const jwksFile = join(dataDir, 'bench-jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [pub] }));
  const baseEnv = kind === 'postgres' ? { DATABASE_URL: dbUrl } : { DATA_DIR: join(dataDir, 'pgdata') };
  const baseline = start(join(root, 'bench/baseline.mjs'), [String(basePort), jwksFile, issuer], baseEnv);
  const bbase = `http://127.0.0.1:${basePort}`;
  await waitFor(bbase + readPath, { headers: user });
  res.baseRead = await cannon('Baseline read  (user, RLS)', { url: bbase + readPath, headers: user });
  res.baseWrite = await cannon('Baseline write (user, RLS)', { url: bbase + '/api/v1/db/items', ...write });
  baseline.proc.kill('SIGTERM');
  await baseline.exited;
  rmSync(dataDir, { recursive: true, force: true });

  const ratio = (a, b) => Math.round((a / b) * 100) / 100;
  const summary = {
    readRatio: ratio(res.read.rps, res.baseRead.rps),
    writeRatio: ratio(res.write.rps, res.baseWrite.rps),
    userVsSecretRead: ratio(res.read.rps, res.serviceRead.rps),
  };
  console.log(`  ratio Plinth/baseline: read ${summary.readRatio}, write ${summary.writeRatio}   (goal ≥ 0.7)`);
  console.log(`  user-token read / secret-key read: ${summary.userVsSecretRead}   (goal ≥ 0.85)`);
  console.log(`  argon2id (m=19456 KiB, t=2, p=1): ${res.argon2Ms} ms per hash in this process`);
  return { kind, ...res, ...summary };
}

/** Sign-ins and refreshes per second, and the argon2id price of one hash beside them. */
async function benchAuth(base, apikey) {
  const headers = { apikey, 'content-type': 'application/json' };
  const password = 'correct horse battery staple';
  const email = `bench-${Date.now()}@example.com`;
  const up = await fetch(`${base}/v1/auth/signup`, { method: 'POST', headers, body: JSON.stringify({ email, password }) });
  if (up.status !== 200) throw new Error(`signup failed: ${up.status} ${await up.text()}`);
  const { hash } = await import('@node-rs/argon2');
  const t0 = performance.now();
  for (let i = 0; i < 10; i++) await hash(`pw-${i}`, { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 });
  const argon2Ms = Math.round((performance.now() - t0) / 10);
  const signin = await cannon('Plinth   sign-in (argon2id)', {
    url: `${base}/v1/auth/signin`,
    method: 'POST',
    headers,
    body: JSON.stringify({ email, password }),
  });
  // Each connection refreshes its own session: a refresh token rotates on every use.
  const tokens = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const r = await fetch(`${base}/v1/auth/signin`, { method: 'POST', headers, body: JSON.stringify({ email, password }) });
    tokens.push((await r.json()).refresh_token);
  }
  let next = 0;
  const refresh = await cannon('Plinth   refresh', {
    url: base,
    requests: [
      {
        method: 'POST',
        path: '/v1/auth/refresh',
        headers,
        // The newest token of each session lives in `tokens`, so the measured run picks up
        // where the warm-up left off (a token rotated in flight is still in its 10 s grace).
        setupRequest: (req, context) => {
          context.i ??= next++ % tokens.length;
          return { ...req, body: JSON.stringify({ refresh_token: tokens[context.i] }) };
        },
        onResponse: (status, body, context) => {
          if (status === 200) tokens[context.i] = JSON.parse(body).refresh_token;
        },
      },
    ],
  });
  return { signin, refresh, argon2Ms };
}

const results = [];
for (const kind of DBS) results.push(await benchDb(kind));
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(
  join(root, 'bench/results/latest.json'),
  JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, connections: CONNECTIONS, results }, null, 2),
);
console.log('\nwritten to bench/results/latest.json');
