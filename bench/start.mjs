// Start figures of `npm run bench` (issue 32): how long `plinth start` on the embedded
// database (PGlite) takes to answer GET /health with 200, from the moment the process is
// spawned: on a fresh data dir (a new project: a copy of the migrated template,
// packages/server/src/db/template.ts), and restarted on the same dir; beside them PGlite's own
// initdb, which a fresh start ran before the template (worker/pglite-init.mjs alone).
// BENCH_START_ROUNDS (default BENCH_ROUNDS, 3) of each start, medians reported; initdb once
// (~9 s, and what it is for is its size beside the starts). The server is the bench's
// (packages/server/dist/main.js, as the installed package runs it; `plinth start` in a clone
// first checks the build, ~0.1 s more). Goals on the 2-core CI machine, quiet: fresh ≤ 3 s,
// restart ≤ 2 s.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROUNDS = Math.max(1, Number(process.env.BENCH_START_ROUNDS ?? process.env.BENCH_ROUNDS ?? 3));
const GOALS = { freshMs: 3000, restartMs: 2000 };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** A port nobody listens on now (loopback). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Spawns the server on a data dir; resolves with the milliseconds to its first /health 200. */
async function timeStart({ tools, server, dataDir, label }) {
  const port = await freePort();
  const t0 = performance.now();
  const child = tools.start(label, server, ['start', '--data-dir', dataDir, '--port', String(port)], { PORT: String(port) });
  try {
    for (;;) {
      if (child.proc.exitCode !== null || child.proc.signalCode !== null)
        throw new Error(`${label} exited (${child.proc.exitCode ?? child.proc.signalCode}) before /health answered:\n${child.tail()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - t0;
      } catch {}
      if (performance.now() - t0 > 120_000) throw new Error(`${label}: no /health 200 within 120 s:\n${child.tail()}`);
      await sleep(10);
    }
  } finally {
    const code = await tools.stop(child);
    if (code !== 0) tools.problems.push(`${label} exited with ${code} on SIGTERM`);
  }
}

/** PGlite's initdb alone, in a process of its own as a start without a template runs it. */
function timeInitdb(root, dir) {
  const t0 = performance.now();
  execFileSync(process.execPath, [join(root, 'packages/server/worker/pglite-init.mjs'), join(dir, 'pgdata')], { stdio: 'ignore' });
  return performance.now() - t0;
}

/**
 * @example const start = await benchStart({ root, server, tools: { start, stop, problems, tempDirs } });
 */
export async function benchStart({ root, server, tools }) {
  console.log(`\n=== start (embedded database): spawn to the first GET /health 200, ${ROUNDS} rounds ===`);
  // The template a built clone (npm run build) or the installed package has; made now if missing.
  const made = performance.now();
  execFileSync(process.execPath, [join(root, 'scripts/pglite-template.mjs')], { stdio: 'ignore' });
  const templateMs = performance.now() - made;
  const dirs = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'plinth-bench-start-'));
    tools.tempDirs.add(d);
    dirs.push(d);
    return d;
  };
  try {
    const fresh = [];
    const restart = [];
    const initdb = [];
    let dataDir = '';
    for (let i = 0; i < ROUNDS; i++) {
      dataDir = join(tmp(), 'data');
      fresh.push(await timeStart({ tools, server, dataDir, label: `Plinth fresh start ${i + 1}` }));
    }
    for (let i = 0; i < ROUNDS; i++) restart.push(await timeStart({ tools, server, dataDir, label: `Plinth restart ${i + 1}` }));
    initdb.push(timeInitdb(root, tmp()));
    const res = {
      freshMs: Math.round(median(fresh)),
      restartMs: Math.round(median(restart)),
      initdbMs: Math.round(initdb[0]),
      runs: { fresh: fresh.map(Math.round), restart: restart.map(Math.round), initdb: initdb.map(Math.round) },
      templateCheckMs: Math.round(templateMs),
      goals: GOALS,
    };
    const runs = (xs) => xs.map((x) => (x / 1000).toFixed(2)).join(' / ');
    console.log(`  fresh data dir to /health 200: ${seconds(res.freshMs)} (runs ${runs(fresh)})   (goal ≤ ${seconds(GOALS.freshMs)})`);
    console.log(
      `  restart to /health 200:        ${seconds(res.restartMs)} (runs ${runs(restart)})   (goal ≤ ${seconds(GOALS.restartMs)})`,
    );
    console.log(`  PGlite initdb alone:           ${seconds(res.initdbMs)}   (what every fresh start ran before the template, once)`);
    return res;
  } finally {
    for (const d of dirs) {
      rmSync(d, { recursive: true, force: true });
      tools.tempDirs.delete(d);
    }
  }
}
