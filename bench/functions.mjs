// The functions scenarios of `npm run bench` (issue 38), on PostgreSQL, with a Plinth serving a
// project folder of its own (run.mjs calls benchFunctions; `node bench/functions.mjs` runs them
// alone after `npm run build`), each pair measured in alternating rounds (A B, B A, …):
// (a) a hello function (`functions/hello.ts`, called with a user's token, JWT verified) against a
//     plain Fastify route answering the same text in a process of its own (goal ≥ 0.7×);
// (b) a function reading the user's 10 rows through `ctx.client` (RLS as the caller) against the
//     same read through REST, `GET /api/v1/db/items?limit=10` (goal ≥ 0.7×);
// (c) the CPU that 100 schedules firing each minute add to an otherwise idle server (goal < 2 %
//     of a core): two servers started side by side, one with 100 functions each scheduled
//     `* * * * *`, one with the same functions and no schedule; once every schedule has run
//     once (its worker started), the process CPU time (main thread and workers) of each over
//     BENCH_IDLE_SECONDS (default 120: two firings; the real clock, no fake one) is compared.
//     BENCH_IDLE_SECONDS=0 leaves it out.
// Ratios are of this run only: the machine's speed cancels out.
// Options: BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32), BENCH_IDLE_SECONDS (120);
// `node bench/functions.mjs schedules` runs (c) alone.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 120);
const SCHEDULES = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const FILES = {
  'plinth.json': '{}\n',
  'functions/hello.ts': `export default () => new Response('hello');\n`,
  'functions/rows.ts': `export default async (_req: Request, ctx: any) => {
  const { data, error } = await ctx.client.from('items').select('*').limit(10);
  return error ? Response.json(error, { status: 500 }) : Response.json(data);
};\n`,
};

const PLAIN = `import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.get('/hello', async (_req, reply) => reply.type('text/plain').send('hello'));
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });
console.log('ready');
`;

async function json(res, what) {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function waitFor(url, proc, stderr) {
  for (let i = 0; i < 1200; i++) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {}
    if (proc.exitCode !== null) throw new Error(`exited: ${stderr()}`);
    await sleep(50);
  }
  throw new Error(`${url} did not answer`);
}

function run(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers }, (err, r) => {
      if (err) reject(err);
      else resolve({ rps: r.requests.average, p99: r.latency.p99, bad: r.non2xx + r.errors });
    });
  });
}

/** A B, B A, … rounds; the median of the rounds' ratios A/B. */
async function pair(label, a, b, log) {
  const ratios = [];
  const runs = { a: [], b: [] };
  await run(a.url, a.headers);
  await run(b.url, b.headers);
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    const got = {};
    for (const k of order) got[k] = await run((k === 'a' ? a : b).url, (k === 'a' ? a : b).headers);
    runs.a.push(got.a);
    runs.b.push(got.b);
    ratios.push(got.a.rps / got.b.rps);
  }
  ratios.sort((x, y) => x - y);
  const median = (xs) => xs[Math.floor(xs.length / 2)];
  const bad = [...runs.a, ...runs.b].reduce((n, r) => n + r.bad, 0);
  const out = {
    a: Math.round(median(runs.a.map((r) => r.rps).sort((x, y) => x - y))),
    b: Math.round(median(runs.b.map((r) => r.rps).sort((x, y) => x - y))),
    ratio: Math.round(median(ratios) * 100) / 100,
    bad,
  };
  log(
    `  ${label}: ${out.a} req/s against ${out.b} req/s, ratio ${out.ratio} (goal ≥ 0.7)${bad ? `  !!!!!!!! ${bad} bad answers: WRONG` : ''}`,
  );
  return out;
}

/**
 * Runs both pairs; resolves with their figures.
 * @example const fn = await benchFunctions({ root });
 */
export async function benchFunctions({ root, log = console.log }) {
  const adminUrl = execFileSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' }).trim();
  const name = `plinth_bench_fn_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`create database ${name}`);
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const project = mkdtempSync(join(tmpdir(), 'plinth-bench-fn-'));
  for (const [file, text] of Object.entries(FILES)) {
    mkdirSync(join(project, file, '..'), { recursive: true });
    writeFileSync(join(project, file), text);
  }
  const port = 21_000 + Math.floor(Math.random() * 1000);
  const plainPort = port + 1000;
  const base = `http://127.0.0.1:${port}`;
  const apikey = 'pk_bench_public_key_0123456789abcdef0123456789abcdef';
  const secret = 'sk_bench_secret_key_0123456789abcdef0123456789abcdef';
  let stderr = '';
  const proc = spawn(process.execPath, [join(root, 'packages/server/dist/main.js'), 'start', '--port', String(port)], {
    cwd: project,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      PUBLIC_URL: `http://localhost:${port}`,
      PLINTH_PUBLIC_KEY: apikey,
      PLINTH_SECRET_KEY: secret,
      AUTH_RATE_REQUESTS_IP: '100000000/60',
      AUTH_RATE_SIGNIN_IP: '100000000/60',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  proc.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  // The plain route resolves fastify from the repository (NODE_PATH does not apply to ESM).
  writeFileSync(join(project, 'plain.mjs'), PLAIN.replace("from 'fastify'", `from '${join(root, 'node_modules/fastify/fastify.js')}'`));
  const plain = spawn(process.execPath, [join(project, 'plain.mjs'), String(plainPort)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let plainErr = '';
  plain.stderr.on('data', (d) => {
    plainErr = (plainErr + d).slice(-2000);
  });
  try {
    await waitFor(`${base}/health`, proc, () => stderr);
    await waitFor(`http://127.0.0.1:${plainPort}/hello`, plain, () => plainErr);
    await json(
      await fetch(`${base}/api/v1/sql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `create table items (id bigserial primary key, owner uuid not null default auth.uid(), title text not null);
                  create policy own on items for all using (owner = auth.uid()) with check (owner = auth.uid());`,
        }),
      }),
      'sql',
    );
    const signup = await json(
      await fetch(`${base}/v1/auth/signup`, {
        method: 'POST',
        headers: { apikey, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `fn-${process.pid}@example.com`, password: 'correct horse battery staple' }),
      }),
      'signup',
    );
    const user = { apikey, authorization: `Bearer ${signup.session.access_token}` };
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await db.unsafe(`insert into items (owner, title) select $1::uuid, 'item ' || g from generate_series(1, 100) g`, [signup.user.id]);
    await db.unsafe(`insert into items (owner, title) select gen_random_uuid(), 'other ' || g from generate_series(1, 1000) g`);
    await db.end({ timeout: 1 });
    // Each answers as it should before it is measured.
    const rows = await json(await fetch(`${base}/api/v1/functions/rows`, { headers: user }), 'rows function');
    if (!Array.isArray(rows) || rows.length !== 10 || rows.some((r) => r.owner !== signup.user.id))
      throw new Error(`the rows function answered ${JSON.stringify(rows).slice(0, 200)}`);
    if ((await (await fetch(`${base}/api/v1/functions/hello`, { headers: user })).text()) !== 'hello') throw new Error('hello function');

    log(`\nFunctions (PostgreSQL): ${ROUNDS} alternating rounds of ${SECONDS} s, ${CONNECTIONS} connections`);
    const hello = await pair(
      'hello function / plain Fastify route',
      { url: `${base}/api/v1/functions/hello`, headers: user },
      { url: `http://127.0.0.1:${plainPort}/hello`, headers: {} },
      log,
    );
    const read = await pair(
      'function reading 10 rows / the same read through REST',
      { url: `${base}/api/v1/functions/rows`, headers: user },
      { url: `${base}/api/v1/db/items?limit=10`, headers: user },
      log,
    );
    const schedules = IDLE_SECONDS > 0 ? await benchScheduleIdle({ root, adminUrl, log }) : null;
    return { hello, read, schedules };
  } finally {
    for (const p of [proc, plain]) {
      if (p.exitCode === null) {
        p.kill('SIGTERM');
        await new Promise((r) => {
          const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
          p.on('exit', () => {
            clearTimeout(timer);
            r();
          });
        });
      }
    }
    rmSync(project, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.unsafe(`drop role if exists plinth_api_${name}`).catch(() => {});
    await admin.end({ timeout: 1 });
  }
}

/** Process CPU time (user + system, all threads) in ms, from /proc (Linux). */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

/**
 * (c): the CPU 100 schedules firing each minute add to an idle server.
 * @example const { addedPercent } = await benchScheduleIdle({ root, adminUrl, log });
 */
async function benchScheduleIdle({ root, adminUrl, log }) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const started = [];
  const secret = 'sk_bench_secret_key_0123456789abcdef0123456789abcdef';
  try {
    const servers = [];
    for (const scheduled of [true, false]) {
      const name = `plinth_bench_sched_${scheduled ? 'on' : 'off'}_${process.pid}`;
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.unsafe(`create database ${name}`);
      const project = mkdtempSync(join(tmpdir(), 'plinth-bench-sched-'));
      const functions = {};
      mkdirSync(join(project, 'functions'), { recursive: true });
      for (let i = 0; i < SCHEDULES; i++) {
        writeFileSync(join(project, `functions/s${i}.ts`), `export default () => new Response('ok');\n`);
        if (scheduled) functions[`s${i}`] = { schedule: '* * * * *' };
      }
      writeFileSync(join(project, 'plinth.json'), `${JSON.stringify({ functions })}\n`);
      const port = 23_000 + Math.floor(Math.random() * 1000) + (scheduled ? 0 : 1000);
      let stderr = '';
      const proc = spawn(process.execPath, [join(root, 'packages/server/dist/main.js'), 'start', '--port', String(port)], {
        cwd: project,
        env: {
          ...process.env,
          LOG_LEVEL: 'warn',
          DATABASE_URL: adminUrl.replace(/\/[^/]*$/, `/${name}`),
          PUBLIC_URL: `http://localhost:${port}`,
          PLINTH_PUBLIC_KEY: 'pk_bench_public_key_0123456789abcdef0123456789abcdef',
          PLINTH_SECRET_KEY: secret,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      proc.stderr.on('data', (d) => {
        stderr = (stderr + d).slice(-4000);
      });
      const server = { name, project, proc, base: `http://127.0.0.1:${port}`, stderr: () => stderr };
      started.push(server);
      servers.push(server);
      await waitFor(`${server.base}/health`, proc, () => stderr);
    }
    const [on, off] = servers;
    // Every schedule has run once (its function loaded, its worker started) before measuring.
    for (let i = 0; ; i++) {
      const rows = await json(
        await fetch(`${on.base}/api/v1/admin/function-schedules`, { headers: { authorization: `Bearer ${secret}` } }),
        'schedules',
      );
      if (rows.length === SCHEDULES && rows.every((r) => r.runs >= 1 && r.last_status !== 'running')) break;
      if (i > 150) throw new Error(`the schedules did not all run within 150 s: ${JSON.stringify(rows.slice(0, 3))}`);
      await sleep(1000);
    }
    const t0 = Date.now();
    const c0 = [cpuMs(on.proc.pid), cpuMs(off.proc.pid)];
    await sleep(IDLE_SECONDS * 1000);
    const c1 = [cpuMs(on.proc.pid), cpuMs(off.proc.pid)];
    const wall = Date.now() - t0;
    const pct = (ms) => Math.round((ms / wall) * 10_000) / 100;
    const out = { withSchedules: pct(c1[0] - c0[0]), without: pct(c1[1] - c0[1]) };
    out.addedPercent = Math.round((out.withSchedules - out.without) * 100) / 100;
    log(
      `  ${SCHEDULES} schedules firing each minute, idle server: ${out.withSchedules} % of a core against ${out.without} % without, +${out.addedPercent} % over ${Math.round(wall / 1000)} s (goal < 2 %)`,
    );
    return out;
  } finally {
    for (const s of started) {
      if (s.proc.exitCode === null) {
        s.proc.kill('SIGTERM');
        await new Promise((r) => {
          const timer = setTimeout(() => s.proc.kill('SIGKILL'), 10_000);
          s.proc.on('exit', () => {
            clearTimeout(timer);
            r();
          });
        });
      }
      rmSync(s.project, { recursive: true, force: true });
      await admin.unsafe(`drop database if exists ${s.name} with (force)`).catch(() => {});
      await admin.unsafe(`drop role if exists plinth_api_${s.name}`).catch(() => {});
    }
    await admin.end({ timeout: 1 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // `node bench/functions.mjs schedules`: (c) alone.
  const result =
    process.argv[2] === 'schedules'
      ? await benchScheduleIdle({
          root,
          adminUrl: execFileSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' }).trim(),
          log: console.log,
        })
      : await benchFunctions({ root });
  console.log(JSON.stringify(result, null, 2));
}
