// The attacks of the third security review (../shared/security/review-round-3.md, R1–R6), run
// against a Plinth on the embedded database while `/health` is polled, for issue 31's figure:
// the worst `/health` latency during the attacks (goal: under 250 ms), beside the idle one.
// run.mjs calls benchAttacks after its own scenarios; `node bench/attacks.mjs` runs them alone
// after `npm run build`.
// - A Plinth on a fresh data dir, on a free loopback port, is seeded with the review's tables
//   (the secret key through /api/v1/sql); its idle `/health` is measured first; it is stopped,
//   and each attack runs on a server of its own, started on a copy of that data dir, so one
//   attack's aftermath (a blocked event loop, a queue still draining) is never charged to the next.
// - Each attack is bounded: it runs BENCH_ATTACK_SECONDS (15) at most and `/health` is polled for
//   that whole window (so what a write sets off afterwards is seen too); its clients are then
//   closed. `/health` is polled every 50 ms from a worker thread (its own event loop, not the
//   attack clients'), one request at a time, each with a timeout of BENCH_HEALTH_TIMEOUT_MS
//   (5000): a request that gets no answer in time, or is refused, counts as that timeout and is
//   reported as "> 5000 ms (no answer)". A server that does not answer `/health` after its attack
//   is killed (SIGKILL), so the run always ends; one that does gets SIGTERM (SIGKILL after 10 s).
// - The sizes are the review's (R1: `like.title=%%%%%%%%%%%%!` as anon, then an ordinary write;
//   R2: a webhook with `like.subject=%urgent%invoice%` and a 98 KB value written by an end-user;
//   R3: a membership policy and a like probe of another workspace's note; R4: 100 `since: 0`
//   replays of a 30,000-change log; R5: 1,500 padded 62 KB subscribe messages on one connection;
//   R6: 1,000 anon subscriptions with distinct `ilike` filters, then 20 writes and reads).
//   BENCH_ATTACKS_SMALL=1 (the smoke test, bench/run.pglite.test.ts) runs each at a small size
//   for 1 s, all on the seeded server while it answers: it shows the bench works, its figures
//   mean nothing.
// Loopback only: R2's webhook calls a receiver this script starts on 127.0.0.1. BENCH_SERVER
// (another build's packages/server/dist/main.js) is measured instead of this one's, as in run.mjs.
// Nothing is compared with a constant here: the goal is printed beside the figures.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import WebSocket from 'ws';

const SMALL = process.env.BENCH_ATTACKS_SMALL === '1';
const WINDOW_MS = 1000 * Number(process.env.BENCH_ATTACK_SECONDS ?? (SMALL ? 1 : 15));
/** A server of its own for each attack; the smoke run shares one while it answers. */
const FRESH = process.env.BENCH_ATTACKS_FRESH ? process.env.BENCH_ATTACKS_FRESH === '1' : !SMALL;
/** BENCH_ATTACKS_ONLY=R1,R3: those attacks only. */
const ONLY = process.env.BENCH_ATTACKS_ONLY?.split(',').map((s) => s.trim().toUpperCase());
const HEALTH_TIMEOUT_MS = Number(process.env.BENCH_HEALTH_TIMEOUT_MS ?? 5000);
const IDLE_MS = SMALL ? 500 : 5000;
const POLL_MS = 50;
const GOAL_MS = 250;
/** The review's sizes, and the smoke test's. */
const SIZE = SMALL
  ? {
      r1Wildcards: 4,
      r1Value: 20,
      r2Repeat: 200,
      r3Wildcards: 2,
      r3Guesses: 2,
      r4Rows: 300,
      r4Connections: 2,
      r4PerConnection: 5,
      r5Messages: 30,
      r6Connections: 2,
      r6PerConnection: 10,
      r6Writes: 3,
    }
  : {
      r1Wildcards: 12,
      r1Value: 60,
      r2Repeat: 14_000,
      r3Wildcards: 5,
      r3Guesses: 4,
      r4Rows: 30_000,
      r4Connections: 5,
      r4PerConnection: 20,
      r5Messages: 1500,
      r6Connections: 10,
      r6PerConnection: 100,
      r6Writes: 20,
    };
const PK = 'pk_bench_public_key_0123456789abcdef0123456789abcdef';
const SK = 'sk_bench_secret_key_0123456789abcdef0123456789abcdef';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Every server and data dir of this script, killed and removed on exit (run.mjs's Ctrl-C exits).
const servers = new Set();
const tempDirs = new Set();
process.on('exit', () => {
  for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A port nobody listens on now, on the loopback. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A Plinth on `dataDir`, on the loopback only; resolves once `/health` answers (60 s at most). */
async function startServer(root, dataDir) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const main = resolve(process.env.BENCH_SERVER ?? join(root, 'packages/server/dist/main.js'));
  // The embedded database, one process: whatever the caller's environment points at.
  const { DATABASE_URL: _db, REDIS_URL: _redis, WORKERS: _workers, ...callers } = process.env;
  const proc = spawn(process.execPath, [main, 'start', '--port', String(port), '--data-dir', dataDir], {
    env: {
      ...callers,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://localhost:${port}`,
      PLINTH_PUBLIC_KEY: PK,
      PLINTH_SECRET_KEY: SK,
      // R2's receiver is on the loopback (the review's public address is never used here).
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // Argon2 at its cheapest for the two sign-ups (the attacks are measured, not hashing).
      AUTH_ARGON2_MEMORY_KIB: '1024',
      AUTH_ARGON2_TIME_COST: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d) => {
    tail = (tail + d).slice(-4000);
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  const server = { proc, base, tail: () => tail, exited: new Promise((r) => proc.on('exit', (code, signal) => r(code ?? signal))) };
  servers.add(server);
  const end = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`Plinth exited before answering:\n${tail}`);
    if ((await get(`${base}/health`, 2000)).ok) return server;
    if (Date.now() > end) {
      proc.kill('SIGKILL');
      throw new Error(`Plinth did not answer /health within 60 s:\n${tail}`);
    }
    await sleep(50);
  }
}

/**
 * Stops a server: SIGKILL at once if it does not answer `/health` (it may never take SIGTERM),
 * else SIGTERM and SIGKILL after 10 s. Resolves with how it ended.
 */
async function stopServer(server) {
  let how = 'stopped';
  if (server.proc.exitCode !== null || server.proc.signalCode !== null)
    how = `had exited (${server.proc.exitCode ?? server.proc.signalCode})`;
  else if (!(await get(`${server.base}/health`, HEALTH_TIMEOUT_MS)).ok) {
    server.proc.kill('SIGKILL');
    how = 'did not answer /health: killed (SIGKILL)';
  } else {
    server.proc.kill('SIGTERM');
    const timer = setTimeout(() => {
      how = 'did not stop on SIGTERM in 10 s: killed (SIGKILL)';
      server.proc.kill('SIGKILL');
    }, 10_000);
    await server.exited;
    clearTimeout(timer);
  }
  await server.exited;
  servers.delete(server);
  return how;
}

/** A GET that never throws: {ok, status} (status 0: no answer within `ms` or refused). */
async function get(url, ms, headers) {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(ms) });
    await res.arrayBuffer();
    return { ok: res.ok, status: res.status };
  } catch {
    return { ok: false, status: 0 };
  }
}

/**
 * A request of an attack or its set-up, bounded by `deadline` (epoch ms): {status, text, ms};
 * status 0 when it got no answer in time. `strict` (set-up) throws on anything but a 2xx.
 */
async function call(base, method, path, { headers = {}, body, deadline = Date.now() + 120_000, strict = false } = {}) {
  const t0 = performance.now();
  let out;
  try {
    const res = await fetch(base + path, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
    });
    out = { status: res.status, text: await res.text() };
  } catch (err) {
    out = { status: 0, text: String(err?.cause?.code ?? err?.name ?? err) };
  }
  out.ms = Math.round(performance.now() - t0);
  if (strict && !(out.status >= 200 && out.status < 300))
    throw new Error(`${method} ${path}: ${out.status || 'no answer'} ${out.text.slice(0, 300)}`);
  return out;
}

const sk = { authorization: `Bearer ${SK}` };
const sql = (base, query) => call(base, 'POST', '/api/v1/sql', { headers: sk, body: { query }, strict: true });

/** A user signed up through the API: {id, token}. */
async function signUp(base, email) {
  const r = await call(base, 'POST', '/v1/auth/signup', {
    headers: { apikey: PK },
    body: { email, password: 'correct horse battery staple' },
    strict: true,
  });
  const j = JSON.parse(r.text);
  if (!j.session?.access_token) throw new Error('signup gave no session (is email confirmation required?)');
  return { id: j.user.id, token: j.session.access_token };
}

/**
 * A realtime client (the public key unless told) that keeps what it is told. `answer(pred)` waits for a
 * message until the attack's deadline (null then). Never throws: a refused or closed socket is
 * an outcome of the attack, kept in `closed`.
 */
function client(base, deadline, clients, apikey = PK) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/realtime?apikey=${apikey}`);
  const msgs = [];
  const waiters = new Set();
  const c = { ws, msgs, closed: null };
  clients.push(c);
  const settleWaiters = () => {
    for (const w of waiters) if (w.pred === null || msgs.some(w.pred)) w.done();
  };
  ws.on('error', () => {});
  ws.on('message', (d) => {
    try {
      msgs.push(JSON.parse(String(d)));
    } catch {
      msgs.push({ type: 'unparsable' });
    }
    settleWaiters();
  });
  ws.on('close', (code) => {
    c.closed = code;
    for (const w of waiters) w.done();
  });
  const wait = (pred) =>
    new Promise((resolve) => {
      const found = () => (pred ? (msgs.find(pred) ?? null) : null);
      if (found() || c.closed !== null) return resolve(found());
      const w = {
        pred,
        done: () => {
          clearTimeout(timer);
          waiters.delete(w);
          resolve(found());
        },
      };
      const timer = setTimeout(w.done, Math.max(0, deadline - Date.now()));
      waiters.add(w);
    });
  c.opened = new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    ws.once('open', () => {
      clearTimeout(timer);
      resolve(true);
    });
    ws.once('close', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  c.send = (m) => {
    if (ws.readyState !== WebSocket.OPEN) return false;
    ws.send(typeof m === 'string' ? m : JSON.stringify(m));
    return true;
  };
  c.answer = (pred) => wait(pred);
  return c;
}

/** How a subscription was answered: `subscribed`, an error's code, or `no answer` / `closed <code>`. */
function answerOf(c, m) {
  if (m?.type === 'subscribed') return 'subscribed';
  if (m?.type === 'error') return m.code;
  return c.closed !== null ? `closed ${c.closed}` : 'no answer';
}
function tally(xs) {
  const t = {};
  for (const x of xs) t[x] = (t[x] ?? 0) + 1;
  return t;
}

/** The poller: a worker thread GETting `/health` every POLL_MS, one at a time, each bounded. */
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, every, timeout } = workerData;
let on = true;
parentPort.on('message', () => { on = false; });
const once = () => fetch(url, { signal: AbortSignal.timeout(timeout) }).then((res) => res.arrayBuffer().then(() => res.ok));
(async () => {
  // Not measured: fetch's first call loads its HTTP client and opens the connection.
  await once().catch(() => false);
  parentPort.postMessage('ready');
  while (on) {
    const t0 = performance.now();
    let ok = false;
    try {
      ok = await once();
    } catch {}
    const ms = performance.now() - t0;
    parentPort.postMessage(ok ? Math.round(ms * 10) / 10 : -1);
    const wait = every - ms;
    if (wait > 0 && on) await new Promise((r) => setTimeout(r, wait));
  }
  parentPort.postMessage('done');
})();
`;

/** Starts the poller; resolves once it polls (its first, unmeasured request answered or timed out). */
async function poll(base) {
  const samples = [];
  const worker = new Worker(POLLER, { eval: true, workerData: { url: `${base}/health`, every: POLL_MS, timeout: HEALTH_TIMEOUT_MS } });
  let finished;
  let started;
  const done = new Promise((r) => {
    finished = r;
  });
  const ready = new Promise((r) => {
    started = r;
  });
  worker.on('message', (m) => (m === 'done' ? finished() : m === 'ready' ? started() : samples.push(m)));
  worker.on('error', () => finished());
  worker.on('exit', () => finished());
  await Promise.race([ready, done, sleep(HEALTH_TIMEOUT_MS + 2000)]);
  return {
    /** Stops after the request in flight (bounded by its timeout); resolves with the figures. */
    async stop() {
      worker.postMessage('stop');
      await Promise.race([done, sleep(HEALTH_TIMEOUT_MS + 2000)]);
      await worker.terminate();
      return figures(samples);
    },
  };
}

/** Worst and median of the polls; a poll without an answer counts as the timeout. */
function figures(samples) {
  const noAnswer = samples.filter((s) => s < 0).length;
  const ms = samples.map((s) => (s < 0 ? HEALTH_TIMEOUT_MS : s)).sort((a, b) => a - b);
  const median = ms.length ? ms[Math.floor((ms.length - 1) / 2)] : null;
  return { polls: ms.length, noAnswer, worstMs: ms.length ? ms[ms.length - 1] : null, medianMs: median };
}

const shown = (f) =>
  f.worstMs === null ? 'no poll' : f.noAnswer ? `> ${HEALTH_TIMEOUT_MS} ms (no answer)` : `${Math.round(f.worstMs)} ms`;

/** Polls `/health` until 5 answers in a row come within 100 ms, 20 s at most (not measured). */
async function settle(base) {
  const end = Date.now() + 20_000;
  let quick = 0;
  while (quick < 5 && Date.now() < end) {
    const t0 = performance.now();
    const r = await get(`${base}/health`, 2000);
    quick = r.ok && performance.now() - t0 < 100 ? quick + 1 : 0;
    await sleep(POLL_MS);
  }
  return quick >= 5;
}

function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** The review's tables, made once on the first server (each attack's server starts on a copy). */
const SCHEMA = `
create table pub (id bigserial primary key, title text not null);
alter table pub enable row level security;
create policy r on pub for select using (true);
grant select on pub to anon, authenticated;
select realtime.enable('pub');
create table tickets (id bigserial primary key, owner uuid not null default auth.uid(), subject text not null);
alter table tickets enable row level security;
create policy own on tickets for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
grant select, insert on tickets to authenticated;
grant usage on sequence tickets_id_seq to authenticated;
create table members (workspace_id int not null, user_id uuid not null, primary key (workspace_id, user_id));
alter table members enable row level security;
create policy self on members for select using (user_id = auth.uid());
grant select on members to authenticated;
create table notes (id bigserial primary key, workspace_id int not null, author text, body text not null, secret text);
alter table notes enable row level security;
create policy member on notes for select
  using (exists (select 1 from members m where m.workspace_id = notes.workspace_id and m.user_id = auth.uid()));
revoke all on notes from anon, authenticated;
grant select (id, workspace_id, author, body) on notes to authenticated;
select realtime.enable('notes');`;

const like = (pattern) => encodeURIComponent(pattern);
const R3_SECRET =
  `ws1 board minutes: acquisition of Northwind closes on the 14th, price ${'9'.repeat(8)}, keep it quiet ${'.'.repeat(40)}`.slice(0, 130);

/**
 * The attacks: `setup` (not measured) and `run` (measured, until the window's deadline).
 * Each returns what the server answered, to show which holes are open.
 */
const ATTACKS = [
  {
    id: 'R1',
    label: `like ReDoS: anon subscribes with like.title=${'%'.repeat(SIZE.r1Wildcards)}!, then one write`,
    async run({ base, deadline, clients }) {
      const c = client(base, deadline, clients);
      await c.opened;
      c.send({ type: 'subscribe', id: 's1', table: 'pub', filter: `like.title=${like(`${'%'.repeat(SIZE.r1Wildcards)}!`)}` });
      const subscribe = answerOf(c, await c.answer((m) => m.id === 's1'));
      const write = await call(base, 'POST', '/api/v1/db/pub', { headers: sk, body: { title: 'a'.repeat(SIZE.r1Value) }, deadline });
      return { subscribe, write: `${write.status || 'no answer'} in ${write.ms} ms` };
    },
  },
  {
    id: 'R2',
    label: `webhook like.subject=%urgent%invoice%, an end-user writes a ${Math.round((7 * SIZE.r2Repeat) / 1000)} KB subject`,
    async setup({ base, extra }) {
      const got = { n: 0 };
      const receiver = createServer((req, res) => {
        got.n++;
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
      extra.close = () => new Promise((r) => receiver.close(r));
      extra.got = got;
      await call(base, 'POST', '/api/v1/webhooks', {
        headers: sk,
        body: {
          name: 'urgent invoices',
          table: 'tickets',
          url: `http://127.0.0.1:${receiver.address().port}/hook`,
          filter: 'like.subject=%urgent%invoice%',
        },
        strict: true,
      });
      extra.mallory = await signUp(base, `mallory-${process.pid}@example.com`);
    },
    async run({ base, deadline, extra }) {
      const write = await call(base, 'POST', '/api/v1/db/tickets', {
        headers: { apikey: PK, authorization: `Bearer ${extra.mallory.token}`, prefer: 'return=minimal' },
        body: { subject: 'urgent '.repeat(SIZE.r2Repeat) },
        deadline,
      });
      return { write: `${write.status || 'no answer'} in ${write.ms} ms`, deliveries: extra.got.n };
    },
  },
  {
    id: 'R3',
    label: `cross-RLS probe: like filters on another workspace's note (membership policy), ${SIZE.r3Guesses} guesses`,
    async setup({ base, extra }) {
      extra.eve = await signUp(base, `eve-${process.pid}@example.com`);
      await sql(base, `insert into members values (2, '${extra.eve.id}')`);
    },
    async run({ base, deadline, clients, extra }) {
      const guesses = ['ws1 board minutes: acq', 'ws1 board minutes: xyz', 'ws1 board', 'hello'].slice(0, SIZE.r3Guesses);
      // A control: the secret key sees every note, so each probe pings only once the change has
      // gone through realtime (a quick pong then means the filter cost nothing, not that it had not run yet).
      const control = client(base, deadline, clients, SK);
      await control.opened;
      control.send({ type: 'subscribe', id: 'all', table: 'notes' });
      const controlAnswer = answerOf(control, await control.answer((m) => m.id === 'all'));
      const probes = [];
      for (const [i, guess] of guesses.entries()) {
        if (Date.now() >= deadline) break;
        const c = client(base, deadline, clients);
        await c.opened;
        c.send({ type: 'auth', access_token: extra.eve.token });
        c.send({ type: 'subscribe', id: 'g', table: 'notes', filter: `like.body=${like(`${guess}${'%'.repeat(SIZE.r3Wildcards)}!`)}` });
        const subscribe = answerOf(c, await c.answer((m) => m.id === 'g'));
        // The attacker's oracle: from another workspace's write to the pong of a ping sent once
        // the change has gone through realtime.
        const t0 = Date.now();
        await call(base, 'POST', '/api/v1/db/notes', {
          headers: sk,
          body: { workspace_id: 1, body: R3_SECRET, secret: `S${i}` },
          deadline,
        });
        const seen = await control.answer((m) => m.type === 'change' && m.row?.secret === `S${i}`);
        c.send({ type: 'ping' });
        const pong = await c.answer((m) => m.type === 'pong');
        probes.push({
          guess,
          subscribe,
          control: seen ? 'the change reached the secret key' : 'the change did not reach the secret key',
          pongAfterWrite: pong ? `${Date.now() - t0} ms` : 'no answer',
          changes: c.msgs.filter((m) => m.type === 'change').length,
        });
        c.ws.terminate();
      }
      return { control: controlAnswer, probes };
    },
  },
  {
    id: 'R4',
    label: `replays: ${SIZE.r4Connections * SIZE.r4PerConnection} anon since: 0 over a ${SIZE.r4Rows.toLocaleString('en')}-change log`,
    async setup({ base }) {
      await sql(base, `insert into pub (title) select 'row ' || g from generate_series(1, ${SIZE.r4Rows}) g`);
    },
    async run({ base, deadline, clients }) {
      const conns = [];
      for (let k = 0; k < SIZE.r4Connections; k++) {
        const c = client(base, deadline, clients);
        conns.push(c);
        await c.opened;
        for (let s = 0; s < SIZE.r4PerConnection; s++)
          c.send({ type: 'subscribe', id: `s${s}`, table: 'pub', since: 0, filter: 'eq.title=nomatch' });
      }
      const answers = [];
      for (const c of conns)
        for (let s = 0; s < SIZE.r4PerConnection; s++) answers.push(answerOf(c, await c.answer((m) => m.id === `s${s}`)));
      return { subscriptions: tally(answers) };
    },
  },
  {
    id: 'R5',
    label: `inbound queue: ${SIZE.r5Messages.toLocaleString('en')} subscribe messages of 62 KB on one connection`,
    async run({ base, deadline, clients }) {
      const filter = `in.id=(${Array(900).fill('1').join(',')},zz)`;
      const msg = JSON.stringify({ type: 'subscribe', id: 'x', table: 'pub', filter, pad: 'A'.repeat(60_000) });
      const c = client(base, deadline, clients);
      await c.opened;
      let sent = 0;
      while (sent < SIZE.r5Messages && Date.now() < deadline && c.send(msg)) {
        sent++;
        // Let the socket drain now and then: the bench's own memory is not what is measured.
        if (c.ws.bufferedAmount > 8 * 1024 * 1024) await new Promise((r) => setTimeout(r, 5));
      }
      // Until every message is answered, the socket closes, or the deadline.
      await c.answer(() => c.msgs.length >= sent);
      return { sent, answered: c.msgs.length, answers: tally(c.msgs.map((m) => m.code ?? m.type)), closed: c.closed };
    },
  },
  {
    id: 'R6',
    label: `${(SIZE.r6Connections * SIZE.r6PerConnection).toLocaleString('en')} anon ilike subscriptions, then ${SIZE.r6Writes} writes and reads`,
    async run({ base, deadline, clients }) {
      const conns = [];
      for (let k = 0; k < SIZE.r6Connections; k++) {
        const c = client(base, deadline, clients);
        conns.push(c);
        await c.opened;
        for (let s = 0; s < SIZE.r6PerConnection; s++)
          c.send({ type: 'subscribe', id: `s${s}`, table: 'pub', filter: `ilike.title=${like(`%${k}-${s}%`)}` });
      }
      const answers = [];
      for (const c of conns)
        for (let s = 0; s < SIZE.r6PerConnection; s++) answers.push(answerOf(c, await c.answer((m) => m.id === `s${s}`)));
      let worstRead = 0;
      let done = 0;
      const t0 = Date.now();
      for (let i = 0; i < SIZE.r6Writes && Date.now() < deadline; i++) {
        await call(base, 'POST', '/api/v1/db/pub', {
          headers: { ...sk, prefer: 'return=minimal' },
          body: { title: `write ${i}` },
          deadline,
        });
        const read = await call(base, 'GET', '/api/v1/db/pub?limit=1', { headers: { apikey: PK }, deadline });
        worstRead = Math.max(worstRead, read.ms);
        if (read.status === 200) done++;
      }
      return { subscriptions: tally(answers), writesAndReads: `${done} in ${Date.now() - t0} ms, worst read ${worstRead} ms` };
    },
  },
];

/**
 * Servers for the attacks: a new one for each attack, on a copy of the seeded data dir
 * (`fresh`); or, in the smoke run, the seeded server itself for all of them while it answers
 * (seven PGlite starts would be most of the smoke test's time). `release` stops a server unless
 * it is the shared one and still answers; resolves with how it ended, or null while it stays up.
 */
function attackServers(root, template, seeded) {
  let shared = seeded;
  const dirs = new Map();
  return {
    async take() {
      if (shared) return shared;
      if (seeded) throw new Error('the shared server stopped answering after an earlier attack');
      const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-attack-'));
      tempDirs.add(dataDir);
      cpSync(template, dataDir, { recursive: true });
      try {
        const server = await startServer(root, dataDir);
        dirs.set(server, dataDir);
        return server;
      } catch (err) {
        rmSync(dataDir, { recursive: true, force: true });
        tempDirs.delete(dataDir);
        throw err;
      }
    },
    async release(server, last) {
      if (server === shared && !last && server.proc.exitCode === null && (await get(`${server.base}/health`, HEALTH_TIMEOUT_MS)).ok)
        return null;
      if (server === shared) shared = null;
      const how = await stopServer(server);
      const dataDir = dirs.get(server);
      if (dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
        tempDirs.delete(dataDir);
        dirs.delete(server);
      }
      return how;
    },
  };
}

/** One attack: its set-up, then its window with `/health` polled throughout. */
async function runAttack(place, attack, last, log) {
  const out = { id: attack.id, label: attack.label };
  const clients = [];
  const extra = {};
  let server = null;
  try {
    server = await place.take();
    out.pid = server.proc.pid;
    await attack.setup?.({ base: server.base, extra });
    if (!(await settle(server.base))) out.note = 'the server was not quiet before the attack';
    const rssBefore = rssMiB(server.proc.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak ?? 0, rssMiB(server.proc.pid) ?? 0);
    }, 100);
    const poller = await poll(server.base);
    const deadline = Date.now() + WINDOW_MS;
    // The attack itself is bounded by the deadline; it may leave promises behind (abandoned).
    // `/health` is watched for the whole window, however soon the attack's steps end: what a
    // write sets off comes after it.
    const polled = sleep(Math.max(0, deadline - Date.now())).then(() => {
      clearInterval(sampler);
      return poller.stop();
    });
    const running = attack.run({ base: server.base, deadline, clients, extra }).catch((err) => {
      out.error = String(err?.stack ?? err).slice(0, 2000);
      return null;
    });
    // Its steps end by the deadline; 2 s more lets them report what they got by then.
    out.outcome = await Promise.race([
      running,
      sleep(Math.max(0, deadline + 2000 - Date.now())).then(() => ({ unfinished: 'still running 2 s after the window' })),
    ]);
    Object.assign(out, await polled);
    out.rss = { beforeMiB: rssBefore, peakMiB: rssPeak };
  } catch (err) {
    out.error = String(err?.message ?? err).slice(0, 2000);
  } finally {
    for (const c of clients) c.ws.terminate();
    await extra.close?.();
    if (server) out.server = (await place.release(server, last)) ?? 'answers (kept for the next attack)';
  }
  const rss = out.rss ? `, RSS ${out.rss.beforeMiB} → ${out.rss.peakMiB} MiB` : '';
  log(
    `  ${attack.id}  /health worst ${out.error ? '?' : shown(out).padEnd(8)} median ${out.medianMs ?? '?'} ms, ${out.noAnswer ?? '?'}/${out.polls ?? '?'} polls unanswered${rss}; server ${out.server ?? 'not started'}`,
  );
  log(`      ${attack.label}: ${out.error ? `!!!!!!!! ${out.error}` : JSON.stringify(out.outcome)}`);
  return out;
}

/**
 * Seeds a Plinth, measures its idle `/health`, then runs R1–R6, each on a server of its own
 * (the smoke run: one for all while it answers).
 * @example const attacks = await benchAttacks({ root });
 */
export async function benchAttacks({ root, log = console.log }) {
  const template = mkdtempSync(join(tmpdir(), 'plinth-bench-attacks-'));
  tempDirs.add(template);
  try {
    log(
      `\nAttacks of the security review, round 3 (PGlite${SMALL ? ', small sizes: a smoke run, its figures mean nothing' : ''}): /health every ${POLL_MS} ms (timeout ${HEALTH_TIMEOUT_MS} ms) during each attack, ${WINDOW_MS / 1000} s each, ${FRESH ? 'each on a server of its own' : 'on one server while it answers'}`,
    );
    const first = await startServer(root, template);
    let idle;
    let stopped = null;
    try {
      await sql(first.base, SCHEMA);
      await settle(first.base);
      const poller = await poll(first.base);
      await sleep(IDLE_MS); // idle: the definition of the figure, not a wait for something
      idle = await poller.stop();
    } finally {
      // Stopped cleanly, its data dir is copied for each attack (the smoke run keeps it up).
      if (FRESH || !idle) stopped = await stopServer(first);
    }
    if (stopped !== null && stopped !== 'stopped') throw new Error(`the seeded server ${stopped}: its data dir cannot be copied`);
    log(`  idle /health worst ${shown(idle)}, median ${idle.medianMs} ms over ${idle.polls} polls`);
    const attacks = [];
    const place = attackServers(root, template, FRESH ? null : first);
    const chosen = ONLY ? ATTACKS.filter((a) => ONLY.includes(a.id)) : ATTACKS;
    for (const [i, attack] of chosen.entries()) attacks.push(await runAttack(place, attack, i === chosen.length - 1, log));
    const measured = attacks.filter((a) => a.worstMs !== null && a.worstMs !== undefined);
    const worst = measured.length ? measured.reduce((w, a) => (a.worstMs > w.worstMs ? a : w)) : null;
    const errors = attacks.filter((a) => a.error).length;
    log(
      `  worst /health during R1–R6: ${worst ? `${shown(worst)} (${worst.id})` : '?'}   (goal < ${GOAL_MS} ms; idle ${shown(idle)})${errors ? `  !!!!!!!! ${errors} attack(s) could not run` : ''}`,
    );
    return {
      small: SMALL,
      windowSeconds: WINDOW_MS / 1000,
      pollMs: POLL_MS,
      healthTimeoutMs: HEALTH_TIMEOUT_MS,
      goalMs: GOAL_MS,
      idle,
      worstMs: worst?.worstMs ?? null,
      worstNoAnswer: worst ? worst.noAnswer > 0 : null,
      worstAttack: worst?.id ?? null,
      attacks,
    };
  } finally {
    rmSync(template, { recursive: true, force: true });
    tempDirs.delete(template);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));
  const root = fileURLToPath(new URL('..', import.meta.url));
  const result = await benchAttacks({ root });
  console.log(JSON.stringify(result, null, 2));
}
