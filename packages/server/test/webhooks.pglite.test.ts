import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from './cluster.js';
import { freePort, type Spawned, spawnPlinth, waitHealthy } from './process.js';
import { type Receiver, startReceiver } from './receiver.js';

// The embedded database: kill -9 of the server while its webhook's deliveries stream out, then a
// restart on the same data dir: every change arrives, first arrivals in order. The restart does
// not wait for the dead process's lease (nothing else can hold one on a locked data dir).

const dirs: string[] = [];
const running: Spawned[] = [];
let receiver: Receiver | null = null;
afterAll(async () => {
  for (const s of running) s.proc.kill('SIGKILL');
  await receiver?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(dir: string): Promise<{ url: string; auth: Record<string, string> }> {
  const port = await freePort();
  const s = spawnPlinth(['start', '--port', String(port), '--data-dir', dir], { WEBHOOK_ALLOW_PRIVATE: 'true' });
  running.push(s);
  await waitHealthy(s.url, 90_000);
  const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key as string;
  return { url: s.url, auth: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('webhooks on the embedded database (real processes)', () => {
  it('kill -9 mid-stream, restart on the same data dir: every change arrives', async () => {
    const N = 1000;
    const dir = mkdtempSync(join(tmpdir(), 'plinth-webhooks-kill-'));
    dirs.push(dir);
    const r = await startReceiver();
    receiver = r;
    // A receiver taking 10 ms per request: the stream lasts seconds, so the kill lands in it.
    r.answer = () => ({ status: 200, delayMs: 10 });
    const first = await start(dir);
    const post = (base: { url: string; auth: Record<string, string> }, path: string, body: unknown) =>
      fetch(`${base.url}${path}`, { method: 'POST', headers: base.auth, body: JSON.stringify(body) });
    expect((await post(first, '/api/v1/sql', { query: 'create table feed (id int primary key, body text not null)' })).status).toBe(200);
    expect((await post(first, '/api/v1/webhooks', { name: 'feed', table: 'feed', url: r.url, events: ['insert'] })).status).toBe(201);
    for (let from = 1; from <= N / 2; from += 50) {
      const res = await post(first, '/api/v1/sql', {
        query: `insert into feed select g, 'row ' || g from generate_series(${from}, ${from + 49}) g`,
      });
      expect(res.status).toBe(200);
    }
    await until('some delivered', () => r.accepted().length >= 100, 60_000);
    running[0].proc.kill('SIGKILL');
    await running[0].exited;
    expect(r.accepted().length).toBeLessThan(N / 2);

    const second = await start(dir);
    for (let from = N / 2 + 1; from <= N; from += 50) {
      const res = await post(second, '/api/v1/sql', {
        query: `insert into feed select g, 'row ' || g from generate_series(${from}, ${from + 49}) g`,
      });
      expect(res.status).toBe(200);
    }
    const firstArrivals = () => {
      const seen = new Set<number>();
      const order: number[] = [];
      for (const x of r.accepted()) {
        const id = Number(x.json.record?.id);
        if (!seen.has(id)) {
          seen.add(id);
          order.push(id);
        }
      }
      return order;
    };
    await until('every change delivered', () => firstArrivals().length >= N, 120_000);
    expect(firstArrivals()).toEqual(range(N));
  });
});
