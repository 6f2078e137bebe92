import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../test/cluster.js';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { freePort, spawnPlinth, waitHealthy } from '../../test/process.js';

// plinth start --workers N (docs/operations.md): N processes on one port, PostgreSQL only; a dead worker
// is replaced and logged; SIGTERM stops them all.
let target: TestDbTarget;
beforeAll(async () => {
  target = await freshDbTarget();
});
afterAll(() => target?.cleanup());

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('plinth start --workers', () => {
  it('refuses more than one worker on the embedded database, and a wrong count, in one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-workers-'));
    try {
      for (const [args, env, line] of [
        [['--workers', '2'], {}, /^plinth: --workers 2 \(WORKERS\) needs DATABASE_URL: .*\n$/],
        [[], { WORKERS: '2' }, /^plinth: --workers 2 \(WORKERS\) needs DATABASE_URL/],
        [['--workers', 'lots'], {}, /^plinth: config: --workers must be a number of processes from 1 to 64, or auto/],
        [[], { WORKERS: '0' }, /^plinth: config: WORKERS must be a number of processes from 1 to 64, or auto/],
      ] as const) {
        const p = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir, ...args], env);
        expect(await p.exited).toBe(1);
        expect(p.stderr()).toMatch(line);
        expect(p.stderr().trim().split('\n')).toHaveLength(1);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves one port from N processes, replaces a worker that dies, and stops them all on SIGTERM', async () => {
    const port = await freePort();
    const p = spawnPlinth(['start', '--port', String(port), '--workers', '2'], {
      DATABASE_URL: target.databaseUrl ?? '',
      PLINTH_SECRET_KEY: `sk_workers_${'9f8e7d6c'.repeat(5)}`,
    });
    try {
      await waitHealthy(p.url, 60_000);
      await until('the banner', () => p.stdout().includes('Workers:'));
      expect(p.stdout()).toMatch(/Workers: {5}2 processes \(pids \d+, \d+\)/);
      expect(p.stdout().match(/Plinth is running/g)).toHaveLength(1);
      const workers = childrenOf(p.proc.pid ?? 0);
      expect(workers).toHaveLength(2);

      // Metrics count every worker's requests, whichever worker answers the scrape.
      const headers = { authorization: `Bearer sk_workers_${'9f8e7d6c'.repeat(5)}` };
      const scrapeHealth = async () => {
        const text = await (await fetch(`${p.url}/metrics`, { headers })).text();
        const line = text.split('\n').find((l) => l.startsWith('plinth_http_requests_total{method="GET",route="/health",status="200"}'));
        return line ? Number(line.split(' ').at(-1)) : 0;
      };
      const before = await scrapeHealth();
      for (let i = 0; i < 20; i++) expect((await fetch(`${p.url}/health`, { headers: { connection: 'close' } })).status).toBe(200);
      expect((await scrapeHealth()) - before).toBe(20);

      process.kill(workers[0], 'SIGKILL');
      await until('a new worker', () => {
        const now = childrenOf(p.proc.pid ?? 0);
        return now.length === 2 && !now.includes(workers[0]);
      });
      // The primary's log line reaches this process through a pipe, maybe after the new worker shows.
      await expect.poll(() => p.stdout()).toMatch(new RegExp(`worker ${workers[0]} died \\(SIGKILL\\); starting another`));
      await waitHealthy(p.url, 30_000);
      for (let i = 0; i < 10; i++) expect((await fetch(`${p.url}/health`, { headers: { connection: 'close' } })).status).toBe(200);

      const all = childrenOf(p.proc.pid ?? 0);
      p.proc.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(all.filter(alive)).toEqual([]);
    } finally {
      if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
    }
  }, 120_000);
});
