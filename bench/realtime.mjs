// The realtime scenarios of `npm run bench` (issue 23), on PostgreSQL, with a Plinth and a
// database of their own (run.mjs calls benchRealtime after its own scenarios; `node
// bench/realtime.mjs` runs them alone after `npm run build`):
// (a) owner policy: 1,000 WebSocket subscribers on 100 users, 500 writes/s for BENCH_SECONDS
//     straight into PostgreSQL: every change must reach exactly its owner's 10 subscribers;
//     p50/p99 write-to-delivery, and the database statements realtime sent per change (its
//     own counter, plinth_realtime_db_statements_total) whatever the subscriber count;
// (b) a public table (using (true)), 1,000 subscribers, 50 writes/s: deliveries per second,
//     p99, and the server's resident memory growth over the run;
// (c) write throughput of a realtime-enabled table against the same table without capture,
//     inserts through the REST API, measured A B B A.
// Latency is the client's receive time minus the change's commit_time (the row's write time, on
// the same machine's clock). Every figure is a ratio or a count of this run; nothing is compared
// with a constant here (the goals are printed beside them).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import WebSocket from 'ws';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SUBSCRIBERS = Number(process.env.BENCH_RT_SUBSCRIBERS ?? 1000);
const USERS = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

/** CPU ms a process has used (user + system; Linux /proc, 10 ms ticks). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] * 10) / 10;
}

async function json(res, what) {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function metric(base, secret, name) {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${secret}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** Opens `n` WebSockets, each authenticated with tokens[i] (or none) and subscribed to `table`. */
async function subscribers(base, apikey, n, tokenOf, table, onMessage) {
  const url = `${base.replace('http', 'ws')}/api/v1/realtime?apikey=${apikey}`;
  const sockets = [];
  for (let i = 0; i < n; i += 50) {
    const batch = [];
    for (let k = i; k < Math.min(n, i + 50); k++) {
      batch.push(
        new Promise((resolve, reject) => {
          const ws = new WebSocket(url);
          ws.on('error', reject);
          ws.on('open', () => {
            const token = tokenOf(k);
            if (token) ws.send(JSON.stringify({ type: 'auth', access_token: token }));
            ws.send(JSON.stringify({ type: 'subscribe', id: 's', table }));
          });
          ws.on('message', (data) => {
            const text = data.toString();
            if (text.startsWith('{"type":"subscribed"')) resolve(ws);
            else if (text.startsWith('{"type":"error"')) reject(new Error(text));
            else onMessage(k, text);
          });
        }),
      );
    }
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

/** The seq and commit time of a change message, read without parsing the row. */
function stamp(text) {
  const s = text.indexOf('"seq":');
  const seq = Number(text.slice(s + 6, text.indexOf(',', s)));
  const c = text.lastIndexOf('"commit_time":"');
  return { seq, at: Date.parse(text.slice(c + 15, text.length - 2)) };
}

/** Inserts `perSecond` rows a second for `seconds`, spread evenly, over `conns` connections. */
async function paced(db, perSecond, seconds, insert) {
  const total = perSecond * seconds;
  const start = Date.now();
  const lanes = 8;
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const due = start + (i * 1000) / perSecond;
        if (due > Date.now()) await sleep(due - Date.now());
        await insert(db, i);
      }
    }),
  );
  return (Date.now() - start) / 1000;
}

async function untilQuiet(count, expected, ms = 30_000) {
  const end = Date.now() + ms;
  while (count() < expected && Date.now() < end) await sleep(50);
}

/**
 * Runs the three scenarios; resolves with their figures.
 * @example const rt = await benchRealtime({ root });
 */
export async function benchRealtime({ root, log = console.log }) {
  const adminUrl = execFileSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' }).trim();
  const name = `plinth_bench_rt_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`create database ${name}`);
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-rt-'));
  const port = 19_000 + Math.floor(Math.random() * 1000);
  const base = `http://127.0.0.1:${port}`;
  const apikey = 'pk_bench_public_key_0123456789abcdef0123456789abcdef';
  const secret = 'sk_bench_secret_key_0123456789abcdef0123456789abcdef';
  const proc = spawn(
    process.execPath,
    [join(root, 'packages/server/dist/main.js'), 'start', '--port', String(port), '--data-dir', dataDir],
    {
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        DATABASE_URL: databaseUrl,
        PUBLIC_URL: `http://localhost:${port}`,
        PLINTH_PUBLIC_KEY: apikey,
        PLINTH_SECRET_KEY: secret,
        AUTH_RATE_REQUESTS_IP: '100000000/60',
        AUTH_RATE_SIGNIN_IP: '100000000/60',
        REALTIME_MAX_CONNECTIONS_PER_IP: '100000',
        // Argon2 at its cheapest for the 100 sign-ups only (the bench measures realtime, not hashing).
        AUTH_ARGON2_MEMORY_KIB: '1024',
        AUTH_ARGON2_TIME_COST: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  proc.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const sockets = [];
  const db = postgres(databaseUrl, { max: 8, onnotice: () => {} });
  try {
    for (let i = 0; i < 600; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {}
      if (proc.exitCode !== null) throw new Error(`Plinth exited: ${stderr}`);
      await sleep(50);
    }
    const sql = async (query) =>
      json(
        await fetch(`${base}/api/v1/sql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }),
        'sql',
      );
    await sql(`create table owned (id bigserial primary key, owner uuid not null, body text not null);
               create policy own on owned for select using (owner = auth.uid());
               select realtime.enable('owned');
               create table board (id bigserial primary key, body text not null);
               create policy everyone on board for select using (true);
               select realtime.enable('board');
               create table captured (id bigserial primary key, owner uuid not null default auth.uid(), title text not null);
               create policy w on captured for insert with check (owner = auth.uid());
               create policy r on captured for select using (owner = auth.uid());
               select realtime.enable('captured');
               create table plain (id bigserial primary key, owner uuid not null default auth.uid(), title text not null);
               create policy w on plain for insert with check (owner = auth.uid());
               create policy r on plain for select using (owner = auth.uid());`);
    log(`\nRealtime (PostgreSQL): ${SUBSCRIBERS} subscribers, ${SECONDS} s per scenario`);

    // 100 users through the API, like an app's.
    const users = [];
    for (let u = 0; u < USERS; u++) {
      const r = await json(
        await fetch(`${base}/v1/auth/signup`, {
          method: 'POST',
          headers: { apikey, 'content-type': 'application/json' },
          body: JSON.stringify({ email: `rt-${process.pid}-${u}@example.com`, password: 'correct horse battery staple' }),
        }),
        'signup',
      );
      users.push({ id: r.user.id, token: r.session.access_token });
    }

    // (a) owner policy: 10 subscribers per user; each change must reach exactly those 10.
    const perChange = new Map();
    const wrongOwner = { n: 0 };
    const latA = [];
    const ownerSubs = await subscribers(
      base,
      apikey,
      SUBSCRIBERS,
      (k) => users[k % USERS].token,
      'owned',
      (k, text) => {
        const { seq, at } = stamp(text);
        latA.push(Date.now() - at);
        perChange.set(seq, (perChange.get(seq) ?? 0) + 1);
        if (!text.includes(users[k % USERS].id)) wrongOwner.n++;
      },
    );
    sockets.push(...ownerSubs);
    const stmts0 = await metric(base, secret, 'plinth_realtime_db_statements_total');
    const cpuA0 = cpuMs(proc.pid);
    const fetched0 = await metric(base, secret, 'plinth_realtime_fetched_total');
    const rate = 500;
    const secondsA = await paced(
      db,
      rate,
      SECONDS,
      (c, i) => c`insert into owned (owner, body) values (${users[i % USERS].id}, ${`change ${i}`})`,
    );
    await untilQuiet(() => perChange.size, rate * SECONDS);
    const cpuA = cpuMs(proc.pid) - cpuA0;
    const stmts = (await metric(base, secret, 'plinth_realtime_db_statements_total')) - stmts0;
    const fetched = (await metric(base, secret, 'plinth_realtime_fetched_total')) - fetched0;
    const exact = [...perChange.values()].filter((n) => n === SUBSCRIBERS / USERS).length;
    latA.sort((x, y) => x - y);
    const owner = {
      writesPerSecond: Math.round((rate * SECONDS) / secondsA),
      changes: rate * SECONDS,
      deliveredToExactlyItsOwners: exact,
      deliveredToAnother: wrongOwner.n,
      p50Ms: percentile(latA, 50),
      p99Ms: percentile(latA, 99),
      statementsPerChange: fetched ? Math.round((stmts / fetched) * 100) / 100 : null,
      // The server's CPU per delivery: what the load costs it, whatever else the machine runs.
      serverCpuUsPerDelivery: Math.round(
        (cpuA * 1000) /
          Math.max(
            1,
            [...perChange.values()].reduce((a, b) => a + b, 0),
          ),
      ),
    };
    log(
      `  owner policy   ${owner.writesPerSecond} writes/s  ${exact}/${owner.changes} changes to exactly their owner's ${SUBSCRIBERS / USERS}, ${wrongOwner.n} to another  p50 ${owner.p50Ms} ms  p99 ${owner.p99Ms} ms (goal ≤ 100)  statements/change ${owner.statementsPerChange} (goal ≤ 2)  server CPU ${owner.serverCpuUsPerDelivery} µs/delivery`,
    );
    for (const ws of ownerSubs) ws.terminate();
    sockets.length = 0;

    // (b) public table: every subscriber gets every change.
    let deliveries = 0;
    const latB = [];
    const publicSubs = await subscribers(
      base,
      apikey,
      SUBSCRIBERS,
      () => null,
      'board',
      (_k, text) => {
        deliveries++;
        if ((deliveries & 15) === 0) latB.push(Date.now() - stamp(text).at);
      },
    );
    sockets.push(...publicSubs);
    await sleep(1000);
    const rss0 = rssMiB(proc.pid);
    let rssPeak = rss0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMiB(proc.pid));
    }, 50);
    const t0 = Date.now();
    const cpuB0 = cpuMs(proc.pid);
    const pubRate = 50;
    await paced(db, pubRate, SECONDS, (c, i) => c`insert into board (body) values (${`news ${i}`})`);
    await untilQuiet(() => deliveries, pubRate * SECONDS * SUBSCRIBERS, 60_000);
    const secondsB = (Date.now() - t0) / 1000;
    const cpuB = cpuMs(proc.pid) - cpuB0;
    clearInterval(sampler);
    latB.sort((x, y) => x - y);
    const pub = {
      deliveries,
      expected: pubRate * SECONDS * SUBSCRIBERS,
      deliveriesPerSecond: Math.round(deliveries / secondsB),
      p50Ms: percentile(latB, 50),
      p99Ms: percentile(latB, 99),
      rssGrowthMiB: rssPeak - rss0,
      serverCpuUsPerDelivery: Math.round((cpuB * 1000) / Math.max(1, deliveries)),
      // What that CPU would sustain on one free core: the figure this box's load cannot blur.
      deliveriesPerServerCpuSecond: Math.round(deliveries / Math.max(0.001, cpuB / 1000)),
    };
    log(
      `  public table   ${pub.deliveriesPerSecond} deliveries/s (goal ≥ 50,000)  ${pub.deliveries}/${pub.expected} delivered  p50 ${pub.p50Ms} ms  p99 ${pub.p99Ms} ms (goal ≤ 250)  RSS growth ${pub.rssGrowthMiB} MiB (goal < 150)  server CPU ${pub.serverCpuUsPerDelivery} µs/delivery (${pub.deliveriesPerServerCpuSecond} per CPU-second)`,
    );
    for (const ws of publicSubs) ws.terminate();
    sockets.length = 0;

    // (c) write throughput with and without capture, through the REST API, A B B A.
    const user = users[0];
    const write = (table) => ({
      url: `${base}/api/v1/db/${table}`,
      method: 'POST',
      headers: { apikey, authorization: `Bearer ${user.token}`, 'content-type': 'application/json', prefer: 'return=minimal' },
      body: JSON.stringify({ title: 'bench' }),
      connections: 32,
    });
    const run = async (table, seconds) => {
      const r = await autocannon({ ...write(table), duration: seconds });
      return { requests: r.requests.total, seconds: r.duration, errors: r.non2xx + r.errors + r.timeouts };
    };
    await run('captured', 2);
    await run('plain', 2);
    const half = Math.max(1, SECONDS / 2);
    const runs = { captured: [], plain: [] };
    runs.captured.push(await run('captured', half));
    runs.plain.push(await run('plain', half));
    runs.plain.push(await run('plain', half));
    runs.captured.push(await run('captured', half));
    const rps = (rs) => Math.round(rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((n, r) => n + r.seconds, 0));
    const errors = [...runs.captured, ...runs.plain].reduce((n, r) => n + r.errors, 0);
    const writes = {
      capturedRps: rps(runs.captured),
      plainRps: rps(runs.plain),
      ratio: Math.round((rps(runs.captured) / rps(runs.plain)) * 100) / 100,
      errors,
    };
    log(
      `  write with capture ${writes.capturedRps} req/s, without ${writes.plainRps} req/s: ratio ${writes.ratio} (goal ≥ 0.8)${errors ? `  !!!!!!!! ${errors} bad answers: WRONG` : ''}`,
    );
    return { owner, public: pub, writes, valid: errors === 0 };
  } finally {
    for (const ws of sockets) ws.terminate();
    await db.end({ timeout: 1 }).catch(() => {});
    if (proc.exitCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => {
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        proc.on('exit', () => {
          clearTimeout(timer);
          r();
        });
      });
    }
    rmSync(dataDir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.unsafe(`drop role if exists plinth_api_${name}`).catch(() => {});
    await admin.end({ timeout: 1 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const result = await benchRealtime({ root });
  console.log(JSON.stringify(result, null, 2));
}
