// npm run bench: Plinth against a bare node:http baseline, on PGlite and on PostgreSQL, in
// one run. Scenarios: (a) an authenticated read under RLS, (b) an authenticated insert,
// (c) the same read with the secret key (the price of verifying a user token), (a) and (b)
// also served by the baseline (bench/baseline.mjs), which verifies the same access token
// with the server's public JWKS; then sign-ins (argon2id) and refreshes per second.
// The user is a real one: signed up through the API, its token from the session.
// The two reads, whose ratio is the price of a user token, are measured interleaved (A B B A).
// Storage (bench/storage.mjs): a 1 MiB download under RLS against node:fs through a bare
// node:http server, and a big file (BENCH_STORAGE_BIG_MIB, default 1024) up and down with
// Plinth's memory watched.
// Prints and saves (bench/results/) req/s, p50/p99 and errors of each, the ratios, and the
// server's resident memory: idle (3 s after it first answers, on an empty data dir or
// database, as a laptop user meets it) and loaded (its peak over the whole run; Linux /proc).
// CPU per request on both sides of the wire: the server's processes (Node: the main thread,
// PGlite's worker thread, every worker of --workers) and PostgreSQL's (every process of the bench
// cluster: backends, and those that ended, through the postmaster's children times), from
// /proc/<pid>/stat around each measured run, divided by the requests it answered. On PostgreSQL,
// reads with `--workers 2` are measured against one worker, interleaved.
// Any non-2xx answer in a measured run makes that figure wrong: it is reported loudly and the
// run exits 1. Children and temporary directories are removed at the end, on failure and on
// Ctrl-C.
// BENCH_SECONDS (default 10), BENCH_WARMUP seconds (default 2), BENCH_CONNECTIONS (default 32),
// BENCH_DBS=pglite,postgres, BENCH_OUT (default bench/results).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { benchRelations, relationsTable } from './relations.mjs';
import { benchStorage } from './storage.mjs';
import { streamLoad } from './stream-load.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DBS = (process.env.BENCH_DBS ?? 'pglite,postgres').split(',').map((s) => s.trim());
const OUT = resolve(process.env.BENCH_OUT ?? join(root, 'bench/results'));
const ROWS = 10_000;
const OWNERS = 100;
const ARGON2 = {
  memoryCost: Number(process.env.AUTH_ARGON2_MEMORY_KIB ?? 19456),
  timeCost: Number(process.env.AUTH_ARGON2_TIME_COST ?? 2),
  parallelism: Number(process.env.AUTH_ARGON2_PARALLELISM ?? 1),
};
for (const kind of DBS) if (kind !== 'pglite' && kind !== 'postgres') throw new Error(`BENCH_DBS: unknown database "${kind}"`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Everything this run leaves behind, removed in `finally`, on exit and on Ctrl-C.
const children = new Set();
const tempDirs = new Set();
/** The PostgreSQL database being benchmarked, dropped at the end: { adminUrl, name }. */
let benchDatabase = null;
/** Measured runs that got a non-2xx answer, an error or a timeout: their figures are wrong. */
const problems = [];

function removeLeftovers() {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}
process.on('exit', removeLeftovers);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    process.stderr.write(`\nbench: ${signal}, stopping the servers and removing their data\n`);
    removeLeftovers();
    if (benchDatabase) await Promise.race([dropDatabase(benchDatabase), sleep(5000)]);
    process.exit(130);
  });
}

async function dropDatabase({ adminUrl, name }) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    // The login Plinth made for the database's API requests (src/db/api-login.ts: plinth_api_<database>).
    await admin.unsafe(`drop role if exists plinth_api_${name}`);
  } catch (err) {
    console.log(`  could not drop the database ${name}: ${err.message}`);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/** A child process, with the end of its output kept to explain a failure. */
function start(name, script, args, env) {
  const proc = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d) => {
    tail = (tail + d).slice(-4000);
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  const child = { name, proc, tail: () => tail, exited: new Promise((r) => proc.on('exit', (code, signal) => r(code ?? signal))) };
  children.add(child);
  return child;
}

/** SIGTERM, then SIGKILL after 10 s; resolves with the exit code. */
async function stop(child) {
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
  const code = await child.exited;
  clearTimeout(timer);
  children.delete(child);
  return code;
}

async function waitFor(child, url, init) {
  for (let i = 0; i < 600; i++) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null)
      throw new Error(`${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before answering:\n${child.tail()}`);
    try {
      const res = await fetch(url, init);
      if (res.status < 500) return;
    } catch {}
    await sleep(50);
  }
  throw new Error(`${child.name} did not answer ${url} within 30 s:\n${child.tail()}`);
}

/** A process's resident memory now and at its peak, in MiB, from /proc (null elsewhere). */
function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    return { rssMiB: Math.round(kib('VmRSS') / 1024), peakMiB: Math.round(kib('VmHWM') / 1024) };
  } catch {
    return { rssMiB: null, peakMiB: null };
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** [utime + stime, cutime + cstime] of a process in ms, or null when it is gone. */
function ticks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { self: (Number(f[11]) + Number(f[12])) * TICK_MS, children: (Number(f[13]) + Number(f[14])) * TICK_MS, ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/**
 * CPU ms used so far by a process and all its descendants, live or ended (an ended child's
 * time is in its parent's cutime/cstime once reaped).
 */
function treeCpuMs(root) {
  if (!root) return 0;
  const parent = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    const t = ticks(p);
    if (t) parent.set(Number(p), t);
  }
  let total = 0;
  const walk = (pid) => {
    const t = parent.get(pid);
    if (!t) return;
    total += t.self + t.children;
    for (const [child, c] of parent) if (c.ppid === pid) walk(child);
  };
  walk(root);
  return total;
}

/** The bench PostgreSQL cluster's postmaster (scripts/pg-cluster.sh), or null. */
function postmasterPid() {
  const dir = process.env.PLINTH_PG_DIR ?? `/tmp/plinth-pg-${process.env.PLINTH_PG_PORT ?? 54329}`;
  try {
    return Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
}

async function json(res, what) {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function sql(base, secret, query) {
  const res = await fetch(`${base}/api/v1/sql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await json(res, 'plinth sql')).results;
}

/** The warm-up before a scenario: not measured; its bad answers are only mentioned. */
async function warmUp(label, { server: _server, ...opts }) {
  if (WARMUP <= 0) return;
  const w = await load(opts, WARMUP);
  const wbad = w.non2xx + w.errors + w.timeouts;
  if (wbad) console.log(`  (warm-up of ${label.trim()}: ${wbad} bad answers ${codes(w)})`);
}

/** The load of one run: autocannon, or for large answers (`stream: true`) bench/stream-load.mjs. */
function load({ stream, ...opts }, seconds) {
  return (stream ? streamLoad : autocannon)({ ...opts, connections: CONNECTIONS, duration: seconds });
}

/** The process whose CPU the measured runs are charged to (the server under test), and PostgreSQL's. */
const probe = { server: null, pg: null };

/** One measured run, with the CPU the server and PostgreSQL spent during it. */
async function run({ server, ...opts }, seconds) {
  const pid = server ?? probe.server;
  const before = { node: treeCpuMs(pid), pg: treeCpuMs(probe.pg) };
  const r = await load(opts, seconds);
  r.cpu = { node: treeCpuMs(pid) - before.node, pg: probe.pg ? treeCpuMs(probe.pg) - before.pg : null };
  return r;
}

/** One scenario: a warm-up, then the measured run. A non-2xx answer is never a figure. */
async function cannon(label, opts) {
  await warmUp(label, opts);
  return measured(label, opts, [await run(opts, SECONDS)]);
}

/**
 * Two scenarios whose ratio is reported: both warmed up, then measured in A B B A order, half
 * the time each round, so neither gains from running later (a warmer JIT, caches, a vacuum
 * that ran in between) and a drift of the machine's speed falls on both alike.
 */
async function cannonPair(a, b) {
  await warmUp(a.label, a.opts);
  await warmUp(b.label, b.opts);
  const half = Math.max(1, SECONDS / 2);
  const a1 = await run(a.opts, half);
  const b1 = await run(b.opts, half);
  const b2 = await run(b.opts, half);
  const a2 = await run(a.opts, half);
  return [await measured(a.label, a.opts, [a1, a2]), await measured(b.label, b.opts, [b1, b2])];
}

/** One scenario's figures from its measured runs: req/s over all of them, mean p50, worst p99. */
async function measured(label, opts, runs) {
  const sum = (f) => runs.reduce((n, r) => n + f(r), 0);
  const seconds = sum((r) => r.duration);
  const out = {
    label,
    rps: Math.round(sum((r) => r.requests.total) / seconds),
    p50: Math.round((sum((r) => r.latency.p50) / runs.length) * 10) / 10,
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    errors: sum((r) => r.non2xx + r.errors + r.timeouts),
    non2xx: sum((r) => r.non2xx),
    socketErrors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    total: sum((r) => r.requests.total),
    statusCodes: {},
  };
  // CPU ms per answered request, on each side of the wire (PostgreSQL: null on PGlite, where it is the server's own).
  const answered = sum((r) => r.requests.total) || 1;
  out.nodeCpuMs = Math.round((sum((r) => r.cpu?.node ?? 0) / answered) * 1000) / 1000;
  out.pgCpuMs = runs.every((r) => r.cpu?.pg !== null && r.cpu?.pg !== undefined)
    ? Math.round((sum((r) => r.cpu.pg) / answered) * 1000) / 1000
    : null;
  for (const r of runs)
    for (const [k, v] of Object.entries(r.statusCodeStats ?? {})) out.statusCodes[k] = (out.statusCodes[k] ?? 0) + v.count;
  console.log(
    `  ${label.padEnd(34)} ${String(out.rps).padStart(7)} req/s  p50 ${String(out.p50).padStart(4)} ms  p99 ${String(out.p99).padStart(4)} ms  errors ${out.errors}  CPU/req node ${out.nodeCpuMs.toFixed(3)} ms${out.pgCpuMs === null ? '' : `, pg ${out.pgCpuMs.toFixed(3)} ms`}`,
  );
  if (out.errors) {
    const bad = Object.entries(out.statusCodes)
      .filter(([k]) => !k.startsWith('2'))
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
    const detail = `${out.non2xx} non-2xx (${bad}), ${out.socketErrors} socket errors, ${out.timeouts} timeouts of ${out.total + out.socketErrors}`;
    console.log(`  !!!!!!!! ${label.trim()}: ${detail}; THIS FIGURE IS WRONG`);
    console.log(`  !!!!!!!! one more such request answers: ${await sample(opts)}`);
    problems.push(`${label.trim()}: ${detail}`);
  }
  return out;
}

const codes = (r) =>
  `(${Object.entries(r.statusCodeStats ?? {})
    .filter(([k]) => !k.startsWith('2'))
    .map(([k, v]) => `${k}: ${v.count}`)
    .join(', ')})`;

/** What the failing request answers when sent once more (status and the start of the body). */
async function sample(opts) {
  try {
    const req = opts.requests?.[0];
    const url = req ? new URL(req.path, opts.url).toString() : opts.url;
    const body = req?.setupRequest ? req.setupRequest({ ...req }, {}).body : opts.body;
    const res = await fetch(url, { method: req?.method ?? opts.method ?? 'GET', headers: req?.headers ?? opts.headers, body });
    return `${res.status} ${(await res.text()).slice(0, 300)}`;
  } catch (err) {
    return String(err);
  }
}

async function benchDb(kind) {
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const basePort = port + 1;
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-'));
  tempDirs.add(dataDir);
  const env = {
    // The benchmark is one client IP: lift the per-IP limits, which would otherwise answer 429.
    AUTH_RATE_REQUESTS_IP: '100000000/60',
    AUTH_RATE_SIGNIN_IP: '100000000/60',
    PUBLIC_URL: `http://localhost:${port}`,
    PLINTH_PUBLIC_KEY: 'pk_bench_public_key_0123456789abcdef0123456789abcdef',
    PLINTH_SECRET_KEY: 'sk_bench_secret_key_0123456789abcdef0123456789abcdef',
    STORAGE_MAX_FILE_SIZE: '8GiB',
  };
  try {
    if (kind === 'postgres') {
      const adminUrl = execFileSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' }).trim();
      const name = `plinth_bench_${process.pid}`;
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      benchDatabase = { adminUrl, name };
      env.DATABASE_URL = adminUrl.replace(/\/[^/]*$/, `/${name}`);
    }
    console.log(
      `\n${kind === 'pglite' ? 'PGlite (embedded)' : 'PostgreSQL'}: ${CONNECTIONS} connections, ${SECONDS} s per scenario (after ${WARMUP} s of warm-up)`,
    );
    const plinth = start(
      'Plinth',
      join(root, 'packages/server/dist/main.js'),
      ['start', '--port', String(port), '--data-dir', dataDir],
      env,
    );
    console.log(`  Plinth started (pid ${plinth.proc.pid})`);
    await waitFor(plinth, `${base}/health`);
    probe.server = plinth.proc.pid;
    probe.pg = kind === 'postgres' ? postmasterPid() : null;
    await sleep(3000); // idle: the definition of the figure, not a wait for something
    const idleMiB = memory(plinth.proc.pid).rssMiB;
    console.log(`  resident memory, idle: ${idleMiB ?? '?'} MiB`);
    const secret = env.PLINTH_SECRET_KEY;
    const apikey = env.PLINTH_PUBLIC_KEY;

    // The benchmark user, signed up through the API like any app's user.
    const authHeaders = { apikey, 'content-type': 'application/json' };
    const email = `bench-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    const signup = await json(
      await fetch(`${base}/v1/auth/signup`, { method: 'POST', headers: authHeaders, body: JSON.stringify({ email, password }) }),
      'signup',
    );
    const token = signup.session?.access_token;
    const userId = signup.user?.id;
    if (!token || !/^[0-9a-f-]{36}$/.test(userId ?? '')) throw new Error('signup gave no session (is email confirmation required?)');

    // 10,000 rows over 100 owners, seeded as the secret key; one of the owners is the user.
    await sql(
      base,
      secret,
      `create table items (id bigserial primary key, owner uuid not null default auth.uid(), title text not null, created_at timestamptz not null default now());
       create index items_owner on items (owner);
       create policy own_read on items for select using (owner = auth.uid());
       create policy own_write on items for insert with check (owner = auth.uid());
       -- The writes go to a table of their own, so the reads measured after them see the same items.
       create table writes (id bigserial primary key, owner uuid not null default auth.uid(), title text not null, created_at timestamptz not null default now());
       create policy own_write on writes for insert with check (owner = auth.uid());
       create policy own_read on writes for select using (owner = auth.uid());
       insert into items (owner, title)
         select case when g % ${OWNERS} = 0 then '${userId}'::uuid
                     else ('00000000-0000-4000-8000-' || lpad((g % ${OWNERS})::text, 12, '0'))::uuid end,
                'item ' || g
         from generate_series(1, ${ROWS}) g;
       analyze items;`,
    );

    console.log(`  seeded ${ROWS} rows over ${OWNERS} owners; measuring`);
    const user = { apikey, authorization: `Bearer ${token}` };
    const readPath = `/api/v1/db/items?eq.owner=${userId}&limit=10`;
    const write = { method: 'POST', body: JSON.stringify({ title: 'bench' }), headers: { ...user, 'content-type': 'application/json' } };
    const checkRead = async (url, headers, who) => {
      const rows = await json(await fetch(url, { headers }), `${who} read check`);
      if (rows.length !== 10 || rows.some((r) => r.owner !== userId))
        throw new Error(`${who} read check: ${JSON.stringify(rows).slice(0, 300)}`);
    };
    await checkRead(base + readPath, user, 'Plinth (user)');
    await checkRead(base + readPath, { authorization: `Bearer ${secret}` }, 'Plinth (secret key)');
    const jwks = await json(await fetch(`${base}/v1/auth/.well-known/jwks.json`), 'jwks');
    const jwksFile = join(dataDir, 'bench-jwks.json');
    writeFileSync(jwksFile, JSON.stringify(jwks));

    const res = {};
    // The two reads interleaved: the user-token price is their ratio.
    [res.read, res.serviceRead] = await cannonPair(
      { label: 'Plinth   read  (user, RLS)', opts: { url: base + readPath, headers: user } },
      { label: 'Plinth   read  (secret key)', opts: { url: base + readPath, headers: { authorization: `Bearer ${secret}` } } },
    );
    res.write = await cannon('Plinth   write (user, RLS)', { url: `${base}/api/v1/db/writes`, ...write });
    // The baseline's writes start from the same empty table.
    await sql(base, secret, 'truncate writes');
    const relations = await benchRelations({
      kind,
      base,
      secret,
      user,
      userId,
      readPath,
      env,
      root,
      tools: { start, stop, waitFor, cannon, cannonPair, sql, probe },
    });
    Object.assign(res, await benchAuth(base, authHeaders, email, password));
    res.memory = { idleMiB, loadedMiB: memory(plinth.proc.pid).peakMiB };
    if (kind === 'postgres') {
      // Every core (plinth start --workers): 2 workers against the 1 above, interleaved, same
      // database, same token (same PUBLIC_URL).
      const wport = port + 2;
      const wbase = `http://127.0.0.1:${wport}`;
      const workers = start(
        'Plinth --workers 2',
        join(root, 'packages/server/dist/main.js'),
        ['start', '--port', String(wport), '--workers', '2'],
        env,
      );
      await waitFor(workers, `${wbase}/health`);
      await checkRead(wbase + readPath, user, 'Plinth (2 workers)');
      [res.oneWorker, res.twoWorkers] = await cannonPair(
        { label: 'Plinth   read  (1 worker)', opts: { url: base + readPath, headers: user, server: plinth.proc.pid } },
        { label: 'Plinth   read  (2 workers)', opts: { url: wbase + readPath, headers: user, server: workers.proc.pid } },
      );
      await stop(workers);
    }
    console.log(`  resident memory, loaded (peak): ${res.memory.loadedMiB ?? '?'} MiB`);
    res.storage = await benchStorage({
      base,
      secret,
      user,
      userId,
      plinthPid: plinth.proc.pid,
      dataDir,
      basePort: port + 2,
      root,
      tools: { start, stop, waitFor, cannonPair, sql, problems, tempDirs },
    });
    const plinthExit = await stop(plinth);
    if (plinthExit !== 0) console.log(`  !!!!!!!! Plinth exited with ${plinthExit} on SIGTERM`);

    // The baseline verifies the same token against the keys the server published.
    const issuer = `${env.PUBLIC_URL}/v1/auth`;
    const baseEnv = kind === 'postgres' ? { DATABASE_URL: env.DATABASE_URL } : { DATA_DIR: join(dataDir, 'pgdata') };
    const baseline = start('baseline', join(root, 'bench/baseline.mjs'), [String(basePort), jwksFile, issuer], baseEnv);
    const bbase = `http://127.0.0.1:${basePort}`;
    await waitFor(baseline, bbase + readPath, { headers: user });
    probe.server = baseline.proc.pid;
    await checkRead(bbase + readPath, user, 'baseline');
    res.baseRead = await cannon('Baseline read  (user, RLS)', { url: bbase + readPath, headers: user });
    res.baseWrite = await cannon('Baseline write (user, RLS)', { url: `${bbase}/api/v1/db/writes`, ...write });
    await stop(baseline);
    res.relations = await relations.baseline({ basePort, jwksFile, issuer, baseEnv });

    const ratio = (a, b) => (b ? Math.round((a / b) * 100) / 100 : null);
    const summary = {
      readRatio: ratio(res.read.rps, res.baseRead.rps),
      writeRatio: ratio(res.write.rps, res.baseWrite.rps),
      userVsSecretRead: ratio(res.read.rps, res.serviceRead.rps),
      // CPU per request, Plinth / baseline (PostgreSQL's: on PostgreSQL only).
      readNodeCpuRatio: ratio(res.read.nodeCpuMs, res.baseRead.nodeCpuMs),
      writeNodeCpuRatio: ratio(res.write.nodeCpuMs, res.baseWrite.nodeCpuMs),
      readPgCpuRatio: res.read.pgCpuMs === null ? null : ratio(res.read.pgCpuMs, res.baseRead.pgCpuMs),
      writePgCpuRatio: res.write.pgCpuMs === null ? null : ratio(res.write.pgCpuMs, res.baseWrite.pgCpuMs),
      workersRatio: res.twoWorkers ? ratio(res.twoWorkers.rps, res.oneWorker.rps) : null,
    };
    const wrong = (...runs) => (runs.some((r) => r.errors) ? ' (WRONG: a run had errors)' : '');
    console.log(
      `  ratio Plinth/baseline: read ${summary.readRatio}${wrong(res.read, res.baseRead)}, write ${summary.writeRatio}${wrong(res.write, res.baseWrite)}   (goal ≥ 0.7)`,
    );
    console.log(`  user-token read / secret-key read: ${summary.userVsSecretRead}${wrong(res.read, res.serviceRead)}   (goal ≥ 0.85)`);
    console.log(
      `  CPU per request, Plinth/baseline: Node read ${summary.readNodeCpuRatio}, write ${summary.writeNodeCpuRatio}${summary.readPgCpuRatio === null ? '' : `; PostgreSQL read ${summary.readPgCpuRatio}, write ${summary.writePgCpuRatio}   (goal ≤ 1.2)`}`,
    );
    if (summary.workersRatio !== null)
      console.log(
        `  reads, 2 workers / 1 worker: ${summary.workersRatio}${wrong(res.oneWorker, res.twoWorkers)}   (goal ≥ 1.4 on 2 cores)`,
      );
    console.log(
      `  argon2id (m=${ARGON2.memoryCost} KiB, t=${ARGON2.timeCost}, p=${ARGON2.parallelism}): ${res.argon2Ms} ms per hash, one at a time in the bench process`,
    );
    return { kind, ...res, ...summary };
  } finally {
    for (const c of [...children]) await stop(c);
    rmSync(dataDir, { recursive: true, force: true });
    tempDirs.delete(dataDir);
    if (benchDatabase) await dropDatabase(benchDatabase);
    benchDatabase = null;
  }
}

/** Sign-ins and refreshes per second, and the argon2id price of one hash beside them. */
async function benchAuth(base, headers, email, password) {
  const { hash } = await import('@node-rs/argon2');
  const t0 = performance.now();
  for (let i = 0; i < 10; i++) await hash(`pw-${i}`, { algorithm: 2, ...ARGON2 });
  const argon2Ms = Math.round((performance.now() - t0) / 10);
  const signin = await cannon(`Plinth   sign-in (argon2id ${argon2Ms} ms)`, {
    url: `${base}/v1/auth/signin`,
    method: 'POST',
    headers,
    body: JSON.stringify({ email, password }),
  });
  // Each connection refreshes its own session: a refresh token rotates on every use.
  const tokens = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const r = await fetch(`${base}/v1/auth/signin`, { method: 'POST', headers, body: JSON.stringify({ email, password }) });
    tokens.push((await json(r, 'signin')).refresh_token);
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

function table(results) {
  const rows = [
    ['Plinth read (user, RLS)', 'read'],
    ['Plinth write (user, RLS)', 'write'],
    ['Plinth read (secret key)', 'serviceRead'],
    ['Baseline read (user, RLS)', 'baseRead'],
    ['Baseline write (user, RLS)', 'baseWrite'],
    ['Plinth sign-in (argon2id)', 'signin'],
    ['Plinth refresh', 'refresh'],
  ];
  const lines = ['', 'Summary', `  ${'scenario'.padEnd(28)}${results.map((r) => r.kind.padStart(32)).join('')}`];
  for (const [label, key] of rows)
    lines.push(
      `  ${label.padEnd(28)}${results.map((r) => `${r[key].rps} req/s ${r[key].p50}/${r[key].p99} ms err ${r[key].errors}${r[key].errors ? ' !!' : ''}`.padStart(32)).join('')}`,
    );
  lines.push(
    `  ${'RSS idle / loaded MiB'.padEnd(28)}${results.map((r) => `${r.memory.idleMiB} / ${r.memory.loadedMiB}`.padStart(32)).join('')}`,
  );
  lines.push(`  ${'argon2id ms per hash'.padEnd(28)}${results.map((r) => String(r.argon2Ms).padStart(32)).join('')}`);
  lines.push(`  ${'read Plinth/baseline'.padEnd(28)}${results.map((r) => String(r.readRatio).padStart(32)).join('')}`);
  lines.push(`  ${'write Plinth/baseline'.padEnd(28)}${results.map((r) => String(r.writeRatio).padStart(32)).join('')}`);
  lines.push(`  ${'user-token/secret-key read'.padEnd(28)}${results.map((r) => String(r.userVsSecretRead).padStart(32)).join('')}`);
  const cpu = (x) => (x ? `${x.nodeCpuMs}${x.pgCpuMs === null ? '' : ` + pg ${x.pgCpuMs}`}` : '-');
  for (const [label, key] of [
    ['CPU ms/req Plinth read', 'read'],
    ['CPU ms/req baseline read', 'baseRead'],
    ['CPU ms/req Plinth write', 'write'],
    ['CPU ms/req baseline write', 'baseWrite'],
  ])
    lines.push(`  ${label.padEnd(28)}${results.map((r) => cpu(r[key]).padStart(32)).join('')}`);
  lines.push(
    `  ${'pg CPU read/write vs base'.padEnd(28)}${results.map((r) => `${r.readPgCpuRatio ?? '-'} / ${r.writePgCpuRatio ?? '-'}`.padStart(32)).join('')}`,
  );
  lines.push(`  ${'reads 2 workers / 1'.padEnd(28)}${results.map((r) => String(r.workersRatio ?? '-').padStart(32)).join('')}`);
  const cell = (r, f) => f(r.storage).padStart(32);
  lines.push(
    `  ${'download 1 MiB (user, RLS)'.padEnd(28)}${results.map((r) => cell(r, (s) => `${s.download.rps} req/s ${s.download.p50}/${s.download.p99} ms`)).join('')}`,
  );
  lines.push(
    `  ${'baseline download 1 MiB'.padEnd(28)}${results.map((r) => cell(r, (s) => `${s.baseDownload.rps} req/s ${s.baseDownload.p50}/${s.baseDownload.p99} ms`)).join('')}`,
  );
  lines.push(`  ${'download Plinth/baseline'.padEnd(28)}${results.map((r) => cell(r, (s) => String(s.downloadRatio))).join('')}`);
  lines.push(
    `  ${'big file up/down MiB/s'.padEnd(28)}${results.map((r) => cell(r, (s) => `${s.big.upload}/${s.big.download} (base ${s.big.baseUpload}/${s.big.baseDownload})`)).join('')}`,
  );
  lines.push(
    `  ${'RSS growth, big file'.padEnd(28)}${results.map((r) => cell(r, (s) => `${s.big.rssGrowth} MiB (${s.big.mib} MiB file)`)).join('')}`,
  );
  lines.push(relationsTable(results));
  return lines.join('\n');
}

const at = new Date().toISOString();
const results = [];
for (const kind of DBS) results.push(await benchDb(kind));
console.log(table(results));
mkdirSync(OUT, { recursive: true });
const report = JSON.stringify(
  { at, seconds: SECONDS, warmup: WARMUP, connections: CONNECTIONS, valid: problems.length === 0, problems, results },
  null,
  2,
);
const file = join(OUT, `bench-${at.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, report);
writeFileSync(join(OUT, 'latest.json'), report);
const shown = file.startsWith(`${process.cwd()}/`) ? relative(process.cwd(), file) : file;
console.log(`\nwritten to ${shown} and latest.json beside it`);
if (problems.length) {
  console.log(`\n!!!!!!!! ${problems.length} measured run(s) got answers other than 2xx: those figures are WRONG`);
  for (const p of problems) console.log(`!!!!!!!!   ${p}`);
  process.exitCode = 1;
}
