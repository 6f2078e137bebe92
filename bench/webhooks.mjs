// The database webhook scenarios of `npm run bench` (issue 24), with a Plinth and a database of
// their own (run.mjs calls benchWebhooks after its own scenarios; `node bench/webhooks.mjs` runs
// them alone after `npm run build`):
// (a) delivery rate: 1,000 changes (one insert of 1,000 rows, straight into the database) to a
//     fast local receiver (node:http, answers 200 at once): deliveries per second for the one
//     webhook, from the insert's commit to the last POST received, every change checked to arrive
//     once and in order; and the server's CPU per delivery, the figure this shared box's load
//     cannot blur;
// (b) write throughput of a table with a webhook (its deliveries going out meanwhile), of one whose
//     webhook's endpoint is down (capture and fan-out only), of one with realtime's capture only
//     (the change log's trigger, which every webhook needs), against the same table without,
//     inserts through the REST API, A B C D D C B A twice, with Plinth's and PostgreSQL's CPU per
//     write.
// On PostgreSQL, and (a) on the embedded database too. Every figure is a ratio or a count of this
// run; nothing is compared with a constant here (the goals are printed beside them).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { backendsCpu, treeCpuMs } from './cpu.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CHANGES = 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function json(res, what) {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * The receiver's code: a process of its own (so its work is not the load generator's), answering
 * 200 at once and noting each change's seq and arrival time (epoch ms, comparable across processes).
 */
const RECEIVER = `
const { createServer } = require('node:http');
const got = [];
const now = () => performance.timeOrigin + performance.now();
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const s = body.indexOf('"seq":');
    got.push([Number(body.slice(s + 6, body.indexOf(',', s))), now()]);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => process.send(m === 'count' ? { count: got.length } : { got }));
`;

/** Starts the receiver process; `count()` and `got()` ask it over IPC. */
async function receiver() {
  const proc = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((r) => proc.once('message', (m) => r(m.port)));
  const ask = (what, key) =>
    new Promise((r) => {
      proc.once('message', (m) => r(m[key]));
      proc.send(what);
    });
  return {
    url: `http://127.0.0.1:${port}/in`,
    count: () => ask('count', 'count'),
    got: async () => (await ask('got', 'got')).map(([seq, at]) => ({ seq, at })),
    close: async () => {
      proc.kill();
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

const epochMs = () => performance.timeOrigin + performance.now();

/** A Plinth on `databaseUrl` (null: the embedded database in its own data dir), ready. */
async function startPlinth(root, databaseUrl) {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-wh-'));
  const port = 20_000 + Math.floor(Math.random() * 1000);
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
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        PUBLIC_URL: `http://localhost:${port}`,
        PLINTH_PUBLIC_KEY: apikey,
        PLINTH_SECRET_KEY: secret,
        AUTH_RATE_REQUESTS_IP: '100000000/60',
        WEBHOOK_ALLOW_PRIVATE: 'true',
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
  for (let i = 0; i < 1200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {}
    if (proc.exitCode !== null) throw new Error(`Plinth exited: ${stderr}`);
    await sleep(50);
  }
  const call = async (method, path, body) =>
    json(
      await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      `${method} ${path}`,
    );
  return {
    base,
    apikey,
    proc,
    /** The database's name (its backends' command lines carry it), or null for the embedded one. */
    db: databaseUrl ? new URL(databaseUrl).pathname.slice(1) : null,
    databaseUrl,
    call,
    sql: (query) => call('POST', '/api/v1/sql', { query }),
    async stop() {
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
    },
  };
}

/** (a): 1,000 changes in one insert to one webhook; the delivery rate and the server's CPU per delivery. */
async function deliveryRate(p, log, label) {
  const r = await receiver();
  try {
    await p.sql('create table hooked (id int primary key, body text not null)');
    await p.call('POST', '/api/v1/webhooks', { name: 'bench', table: 'hooked', url: r.url, events: ['insert'] });
    // A warm-up change: connections open, statements planned.
    await p.sql(`insert into hooked values (0, 'warm-up')`);
    while ((await r.count()) < 1) await sleep(20);
    const cpu0 = treeCpuMs(p.proc.pid);
    const t0 = epochMs();
    await p.sql(`insert into hooked select g, 'change ' || g from generate_series(1, ${CHANGES}) g`);
    const committed = epochMs();
    const end = Date.now() + 120_000;
    while ((await r.count()) < CHANGES + 1 && Date.now() < end) await sleep(10);
    const cpu = treeCpuMs(p.proc.pid) - cpu0;
    const got = (await r.got()).slice(1);
    const seqs = got.map((x) => x.seq);
    const inOrder = seqs.every((s, i) => i === 0 || s === seqs[i - 1] + 1);
    const last = got.at(-1)?.at ?? committed;
    const first = got[0]?.at ?? committed;
    const out = {
      changes: CHANGES,
      delivered: got.length,
      inOrderOnce: inOrder && new Set(seqs).size === got.length,
      // From the insert's commit to the last POST: what a burst of 1,000 changes takes end to end.
      perSecond: Math.round((got.length * 1000) / Math.max(1, last - committed)),
      // The sender alone: first POST to last.
      sendPerSecond: Math.round(((got.length - 1) * 1000) / Math.max(1, last - first)),
      firstAfterCommitMs: Math.round(first - committed),
      insertMs: Math.round(committed - t0),
      serverCpuUsPerDelivery: Math.round((cpu * 1000) / Math.max(1, got.length)),
    };
    log(
      `  ${label.padEnd(11)}${out.delivered}/${out.changes} delivered${out.inOrderOnce ? ', in order, once' : ' !!!!!!!! NOT in order / once'}: ${out.perSecond}/s from commit to last POST (goal ≥ 500), the sender ${out.sendPerSecond}/s, first POST ${out.firstAfterCommitMs} ms after commit, server CPU ${out.serverCpuUsPerDelivery} µs/delivery`,
    );
    return out;
  } finally {
    await r.close();
  }
}

/**
 * (b): REST inserts into a table whose webhook delivers meanwhile (a fast receiver), into one whose
 * webhook's endpoint is down (its deliveries wait: capture and fan-out only), and into a table
 * without; A B C C B A. With the Plinth process's CPU per write in each case.
 */
async function writeRatio(p, log) {
  const r = await receiver();
  const pgProbe = p.db ? backendsCpu(p.databaseUrl, p.db) : null;
  try {
    await p.sql(`create table with_hook (id bigserial primary key, title text not null);
                 create table down_hook (id bigserial primary key, title text not null);
                 create table captured (id bigserial primary key, title text not null);
                 select realtime.enable('captured');
                 create table without_hook (id bigserial primary key, title text not null);`);
    await p.call('POST', '/api/v1/webhooks', { name: 'writes', table: 'with_hook', url: r.url, events: ['insert'] });
    // Nothing listens on port 9 of the loopback: every attempt is refused, then waits its backoff.
    await p.call('POST', '/api/v1/webhooks', { name: 'down', table: 'down_hook', url: 'http://127.0.0.1:9/in', events: ['insert'] });
    const run = async (table, seconds) => {
      const cpu0 = treeCpuMs(p.proc.pid);
      // PostgreSQL's share: the bench database's backends but the probe's own (bench/cpu.mjs).
      const pgStop = pgProbe ? await pgProbe.start((app) => app !== 'bench-probe') : null;
      const res = await autocannon({
        url: `${p.base}/api/v1/db/${table}`,
        method: 'POST',
        headers: {
          authorization: 'Bearer sk_bench_secret_key_0123456789abcdef0123456789abcdef',
          'content-type': 'application/json',
          prefer: 'return=minimal',
        },
        body: JSON.stringify({ title: 'bench' }),
        connections: 32,
        duration: seconds,
      });
      return {
        requests: res.requests.total,
        seconds: res.duration,
        cpu: treeCpuMs(p.proc.pid) - cpu0,
        pg: pgStop ? await pgStop() : 0,
        errors: res.non2xx + res.errors + res.timeouts,
      };
    };
    const TABLES = ['with_hook', 'down_hook', 'captured', 'without_hook'];
    for (const t of TABLES) await run(t, 2);
    const half = Math.max(1, SECONDS / 2);
    const runs = Object.fromEntries(TABLES.map((t) => [t, []]));
    // A B C D D C B A, twice: this box's load moves within seconds, and each table gets both ends of it.
    for (let round = 0; round < 2; round++) {
      for (const t of [...TABLES, ...[...TABLES].reverse()]) runs[t].push(await run(t, half));
    }
    const rps = (rs) => Math.round(rs.reduce((n, x) => n + x.requests, 0) / rs.reduce((n, x) => n + x.seconds, 0));
    const perWrite = (rs, key) =>
      Math.round(
        (rs.reduce((n, x) => n + x[key], 0) * 1000) /
          Math.max(
            1,
            rs.reduce((n, x) => n + x.requests, 0),
          ),
      );
    const per = (key) => ({
      without: perWrite(runs.without_hook, key),
      withWebhook: perWrite(runs.with_hook, key),
      endpointDown: perWrite(runs.down_hook, key),
      captureOnly: perWrite(runs.captured, key),
    });
    const errors = Object.values(runs)
      .flat()
      .reduce((n, x) => n + x.errors, 0);
    const written = runs.with_hook.reduce((n, x) => n + x.requests, 0);
    // Every insert into the delivering webhook's table reaches the receiver (the warm-up's too).
    const end = Date.now() + 120_000;
    while ((await r.count()) < written && Date.now() < end) await sleep(50);
    const out = {
      withoutRps: rps(runs.without_hook),
      withWebhookRps: rps(runs.with_hook),
      ratio: Math.round((rps(runs.with_hook) / rps(runs.without_hook)) * 100) / 100,
      endpointDownRps: rps(runs.down_hook),
      endpointDownRatio: Math.round((rps(runs.down_hook) / rps(runs.without_hook)) * 100) / 100,
      captureOnlyRps: rps(runs.captured),
      captureOnlyRatio: Math.round((rps(runs.captured) / rps(runs.without_hook)) * 100) / 100,
      // The webhook's own share, over the capture it needs: the table with a webhook against the
      // table with realtime's capture only.
      webhookOverCaptureRatio: Math.round((rps(runs.with_hook) / rps(runs.captured)) * 100) / 100,
      serverCpuUsPerWrite: per('cpu'),
      postgresCpuUsPerWrite: p.db ? per('pg') : null,
      delivered: await r.count(),
      errors,
    };
    log(
      `  writes     without a webhook ${out.withoutRps} req/s; with one delivering meanwhile ${out.withWebhookRps} req/s: ratio ${out.ratio} (goal ≥ 0.8)${errors ? `  !!!!!!!! ${errors} bad answers: WRONG` : ''}`,
    );
    log(
      `             with realtime's capture only ${out.captureOnlyRps} req/s: ratio ${out.captureOnlyRatio}; with the webhook's endpoint down ${out.endpointDownRps} req/s: ratio ${out.endpointDownRatio}; with the webhook over capture only: ${out.webhookOverCaptureRatio}`,
    );
    const c = (k) => `${out.serverCpuUsPerWrite[k]} + ${out.postgresCpuUsPerWrite?.[k] ?? '?'} µs`;
    log(
      `             CPU per write, Plinth + PostgreSQL: ${c('without')} without, ${c('captureOnly')} capture only, ${c('withWebhook')} with the webhook delivering, ${c('endpointDown')} with its endpoint down; ${out.delivered} deliveries made meanwhile`,
    );
    return out;
  } finally {
    await pgProbe?.end();
    await r.close();
  }
}

/**
 * Runs the scenarios; resolves with their figures.
 * @example const wh = await benchWebhooks({ root });
 */
export async function benchWebhooks({ root, log = console.log }) {
  const adminUrl = execFileSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' }).trim();
  const name = `plinth_bench_wh_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`create database ${name}`);
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  log(`\nDatabase webhooks: ${CHANGES} changes to a local receiver; writes ${SECONDS} s (load average ${load()})`);
  const out = { loadAverage: load() };
  let p = await startPlinth(root, databaseUrl);
  try {
    out.postgres = await deliveryRate(p, log, 'PostgreSQL');
    out.writes = await writeRatio(p, log);
  } finally {
    await p.stop();
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.unsafe(`drop role if exists plinth_api_${name}`).catch(() => {});
    await admin.end({ timeout: 1 });
  }
  p = await startPlinth(root, null);
  try {
    out.pglite = await deliveryRate(p, log, 'PGlite');
  } finally {
    await p.stop();
  }
  out.valid = out.postgres.inOrderOnce && out.pglite.inOrderOnce && out.writes.errors === 0 && out.writes.delivered >= 1;
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const result = await benchWebhooks({ root });
  console.log(JSON.stringify(result, null, 2));
}
