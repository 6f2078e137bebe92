import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, spawnPlinth, waitHealthy } from '../test/process.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-proc-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function sql(url: string, secret: string, query: string) {
  const res = await fetch(`${url}/api/v1/sql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: (await res.json()) as { results: Array<{ rows: Array<Record<string, unknown>> }>; code?: string } };
}

// The embedded database's process behaviour (this file runs in the PGlite suite only).
describe('embedded data dir (real processes)', () => {
  it('prints URLs and keys, refuses a second process on the same dir, reuses keys on restart', async () => {
    const dir = tmp();
    const port = await freePort();
    const a = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(a.url, 20_000);
    expect(a.stdout()).toContain(`/api/v1`);
    expect(a.stdout()).toContain('/console');
    const keys = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8'));
    expect(a.stdout()).toContain(keys.public_key);
    expect(a.stdout()).toContain(keys.secret_key);

    const b = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    expect(await b.exited).toBe(1);
    expect(b.stderr()).toMatch(/in use by another Plinth process \(pid \d+\)/);

    // keys while the server runs, from the 0600 file
    const k = spawnPlinth(['keys', '--json', '--data-dir', dir]);
    expect(await k.exited).toBe(0);
    expect(JSON.parse(k.stdout())).toEqual(keys);

    a.proc.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    const again = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(again.url, 20_000);
    expect(again.stdout()).toContain(keys.secret_key);
    again.proc.kill('SIGTERM');
    await again.exited;
  }, 90_000);

  it('does not freeze while a slow query runs: /health answers within 100 ms during pg_sleep(5)', async () => {
    const dir = tmp();
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    try {
      await waitHealthy(s.url, 20_000);
      const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
      const slow = sql(s.url, secret, 'select pg_sleep(5)');
      await new Promise((r) => setTimeout(r, 300));
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const res = await fetch(`${s.url}/health`);
        times.push(performance.now() - t0);
        expect(res.status).toBe(200);
      }
      expect(Math.max(...times)).toBeLessThan(100);
      expect((await slow).status).toBe(200);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
  }, 60_000);

  it('after kill -9 during a write load, restarts within 10 s with every acknowledged write', async () => {
    const dir = tmp();
    const port = await freePort();
    const s = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(s.url, 20_000);
    const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key;
    expect((await sql(s.url, secret, 'create table acks (id int primary key)')).status).toBe(200);
    const acked: number[] = [];
    let next = 0;
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const id = next++;
        try {
          const r = await sql(s.url, secret, `insert into acks values (${id})`);
          if (r.status === 200) acked.push(id);
        } catch {
          return; // the server died mid-request: not acknowledged
        }
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    await new Promise((r) => setTimeout(r, 1500));
    s.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await s.exited;
    expect(acked.length).toBeGreaterThan(10);
    // The killed process left its lock (and PGlite its pid file) behind.
    writeFileSync(join(dir, 'pgdata', 'postmaster.pid'), `${s.proc.pid}\n`);

    const restarted = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    try {
      const elapsed = await waitHealthy(restarted.url, 10_000);
      expect(elapsed).toBeLessThan(10_000);
      const r = await sql(restarted.url, secret, 'select id from acks');
      const present = new Set(r.body.results[0].rows.map((row) => Number(row.id)));
      const lost = acked.filter((id) => !present.has(id));
      expect(lost).toEqual([]);
    } finally {
      restarted.proc.kill('SIGTERM');
      await restarted.exited;
    }
  }, 90_000);

  it('plinth sql goes through the running server; plinth migrate applies each file once, in order', async () => {
    const dir = tmp();
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    await waitHealthy(s.url, 20_000);
    const viaServer = spawnPlinth([
      'sql',
      'create table cli_t (v int); insert into cli_t values (7); select v from cli_t',
      '--data-dir',
      dir,
    ]);
    expect(await viaServer.exited).toBe(0);
    expect(viaServer.stdout()).toContain('SELECT 1');
    const migrateBusy = spawnPlinth(['migrate', join(dir, 'none'), '--data-dir', dir]);
    expect(await migrateBusy.exited).toBe(1);
    expect(migrateBusy.stderr()).toMatch(/held by a running server/);
    s.proc.kill('SIGTERM');
    await s.exited;

    const migrations = join(dir, 'migrations');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(migrations);
    writeFileSync(join(migrations, '002_more.sql'), 'insert into m_t values (2);');
    writeFileSync(join(migrations, '001_init.sql'), 'create table m_t (v int); insert into m_t values (1);');
    const first = spawnPlinth(['migrate', migrations, '--data-dir', dir]);
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain('applied: 001_init.sql, 002_more.sql');
    const second = spawnPlinth(['migrate', migrations, '--data-dir', dir]);
    expect(await second.exited).toBe(0);
    expect(second.stdout()).toContain('nothing to apply');
    writeFileSync(join(migrations, '001_init.sql'), 'create table m_t (v int);');
    const changed = spawnPlinth(['migrate', migrations, '--data-dir', dir]);
    expect(await changed.exited).toBe(1);
    expect(changed.stderr()).toMatch(/001_init.sql was changed after it was applied/);
    const direct = spawnPlinth(['sql', 'select v from m_t order by v', '--data-dir', dir]);
    expect(await direct.exited).toBe(0);
    expect(direct.stdout()).toContain('SELECT 2');
  }, 90_000);

  it('plinth gen types writes the table types, from the running server or from the data dir', async () => {
    const dir = tmp();
    const seed = spawnPlinth([
      'sql',
      'create table todos (id bigserial primary key, title text not null, done boolean default false)',
      '--data-dir',
      dir,
    ]);
    expect(await seed.exited).toBe(0);
    const offline = spawnPlinth(['gen', 'types', '--data-dir', dir]);
    expect(await offline.exited).toBe(0);
    expect(offline.stdout()).toMatch(/todos/);
    expect(offline.stdout()).toMatch(/title: string/);
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    try {
      await waitHealthy(s.url, 20_000);
      const out = join(dir, 'db.ts');
      const online = spawnPlinth(['gen', 'types', '--out', out, '--data-dir', dir]);
      expect(await online.exited).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe(offline.stdout());
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
  }, 90_000);
});
