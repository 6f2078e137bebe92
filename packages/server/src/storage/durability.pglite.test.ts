import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, spawnPlinth, waitHealthy } from '../../test/process.js';

// kill -9 of a real server while it takes uploads on the disk backend: every acknowledged
// upload is there after the restart, byte for byte, and what was cut off left no row.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('durability of uploads (real processes)', () => {
  it('after kill -9 during uploads, every acknowledged file is whole and no unacknowledged one half there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-storage-kill-'));
    dirs.push(dir);
    const port = await freePort();
    const s = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(s.url, 60_000);
    const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key as string;
    const auth = { authorization: `Bearer ${secret}` };
    const bucket = await fetch(`${s.url}/api/v1/storage/buckets`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'b' }),
    });
    expect(bucket.status).toBe(201);

    const acked = new Map<string, string>();
    let next = 0;
    let stop = false;
    const uploader = async () => {
      while (!stop) {
        const name = `f${next++}.bin`;
        const data = randomBytes(64 * 1024 + Math.floor(Math.random() * 256 * 1024));
        try {
          const res = await fetch(`${s.url}/api/v1/storage/object/b/${name}`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/octet-stream' },
            body: data,
          });
          if (res.status === 201) acked.set(name, md5(data));
        } catch {
          return; // the server died mid-request: not acknowledged
        }
      }
    };
    const uploaders = [uploader(), uploader(), uploader()];
    // Killed once enough uploads are acknowledged, however fast this machine is.
    const deadline = Date.now() + 60_000;
    while (acked.size < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    s.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(uploaders);
    await s.exited;
    expect(acked.size).toBeGreaterThanOrEqual(30);
    writeFileSync(join(dir, 'pgdata', 'postmaster.pid'), `${s.proc.pid}\n`);

    const restarted = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    try {
      await waitHealthy(restarted.url, 60_000);
      for (const [name, sum] of acked) {
        const res = await fetch(`${restarted.url}/api/v1/storage/object/b/${name}`, { headers: auth });
        expect(res.status, name).toBe(200);
        expect(md5(Buffer.from(await res.arrayBuffer())), name).toBe(sum);
      }
      // Every row has its bytes (no row was committed before its file was in place).
      const list = await fetch(`${restarted.url}/api/v1/storage/object/b?limit=1000`, { headers: auth });
      const rows = (await list.json()) as Array<{ name: string; etag: string }>;
      for (const row of rows) {
        const res = await fetch(`${restarted.url}/api/v1/storage/object/b/${row.name}`, { headers: auth });
        expect(res.status, row.name).toBe(200);
        expect(`"${md5(Buffer.from(await res.arrayBuffer()))}"`).toBe(row.etag);
      }
      // Files without a row (cut off between rename and commit) wait for the sweep; the count never falls short.
      const files = readdirSync(join(dir, 'storage', 'objects', 'b'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.length).toBeGreaterThanOrEqual(rows.length);
    } finally {
      restarted.proc.kill('SIGTERM');
      await restarted.exited;
    }
  }, 240_000);
});
