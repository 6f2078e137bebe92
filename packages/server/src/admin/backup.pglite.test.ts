import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth, spawnPlinth, waitHealthy } from '../../test/process.js';

// A backup taken while writes run restores to a server that serves the same rows and files:
// every write acknowledged before the backup began is in it, nothing after it ended, the rows
// are a prefix of the writes (nothing half), and every file a restored row names downloads
// with one of the contents it was written with. Real processes: the server, `plinth backup`
// through it, `plinth restore` into another data dir, a server there.
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-backup-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const content = (i: number, version: number) => `file ${i}, version ${version}\n`.repeat(50);

describe('plinth backup and restore, while writes run', () => {
  it('the restored server serves every row acknowledged before the backup and each row’s file', async () => {
    const dir = join(tmp(), 'data');
    const s = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', dir]);
    let stop = false;
    const acked: number[] = [];
    /** Per file, the contents it had at some acknowledged moment (an upsert replaces one). */
    const versions = new Map<number, Set<string>>();
    let writer: Promise<void> = Promise.resolve();
    let backupFile = '';
    let before = 0;
    let after = 0;
    try {
      await waitHealthy(s.url, 60_000);
      const secret = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')).secret_key as string;
      const auth = { authorization: `Bearer ${secret}` };
      const setup = await fetch(`${s.url}/api/v1/sql`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'create table writes (id int primary key, file text not null)' }),
      });
      expect(setup.status).toBe(200);
      const bucket = await fetch(`${s.url}/api/v1/storage/buckets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'files' }),
      });
      expect(bucket.status).toBe(201);

      const upload = async (i: number, version: number) => {
        const res = await fetch(`${s.url}/api/v1/storage/object/files/f-${i}.txt`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'text/plain', 'x-upsert': 'true' },
          body: content(i, version),
        });
        expect(res.status).toBe(201);
        if (!versions.has(i)) versions.set(i, new Set());
        versions.get(i)?.add(content(i, version));
      };
      // One writer, one write at a time: the file, then its row; every third write also
      // replaces an earlier file (its old bytes become garbage the sweep deletes at once).
      writer = (async () => {
        for (let i = 1; !stop; i++) {
          await upload(i, 1);
          const row = await fetch(`${s.url}/api/v1/db/writes`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', prefer: 'return=minimal' },
            body: JSON.stringify({ id: i, file: `f-${i}.txt` }),
          });
          expect(row.status).toBe(201);
          acked.push(i);
          if (i % 3 === 0) await upload(i - 2, 2);
        }
      })();
      await expect.poll(() => acked.length, { timeout: 60_000 }).toBeGreaterThanOrEqual(20);

      before = acked.length;
      backupFile = join(tmp(), 'backups', 'while-writing.tar.gz');
      const backup = await runPlinth(['backup', '--out', backupFile, '--data-dir', dir]);
      after = acked.length;
      expect(backup.stderr).toBe(`project: embedded database in ${dir}\n`);
      expect(backup.code).toBe(0);
      expect(backup.stdout).toMatch(
        /^backup written to .*while-writing\.tar\.gz \([\d.]+ (KiB|MiB): the database, the keys and \d+ stored files; the server keeps it too, as plinth-backup-\d{8}-\d{6}-\d{3}\.tar\.gz\)\n$/,
      );
      // The server keeps it too, for the console to list and download.
      const listed = (await (await fetch(`${s.url}/api/v1/backups`, { headers: auth })).json()) as Array<{ name: string }>;
      expect(listed).toHaveLength(1);
      await expect.poll(() => acked.length, { timeout: 60_000 }).toBeGreaterThan(after + 3); // writes went on meanwhile
    } finally {
      stop = true;
      await writer.catch(() => undefined);
      s.proc.kill('SIGTERM');
      await s.exited;
    }

    // A restore into another project's data dir; a server there serves the backup.
    const restoredDir = join(tmp(), 'data');
    const restore = await runPlinth(['restore', backupFile, '--data-dir', restoredDir]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toMatch(/^restored .*while-writing\.tar\.gz \(made \d{4}-.*\) into .*data; start the server: plinth start\n$/);
    expect(readFileSync(join(restoredDir, 'keys.json'), 'utf8')).toBe(readFileSync(join(dir, 'keys.json'), 'utf8'));
    const r = spawnPlinth(['start', '--port', String(await freePort()), '--data-dir', restoredDir]);
    try {
      await waitHealthy(r.url, 60_000);
      const secret = JSON.parse(readFileSync(join(restoredDir, 'keys.json'), 'utf8')).secret_key as string;
      const auth = { authorization: `Bearer ${secret}` };
      const rows = (await (await fetch(`${r.url}/api/v1/db/writes?order=id&limit=1000`, { headers: auth })).json()) as Array<{
        id: number;
        file: string;
      }>;
      const ids = rows.map((row) => row.id);
      // A prefix of the writes: all acknowledged before the backup began, none after it ended.
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, k) => k + 1));
      expect(ids.length).toBeGreaterThanOrEqual(before);
      expect(ids.length).toBeLessThanOrEqual(after + 1); // + the write in flight as it ended
      for (const row of rows) {
        const file = await fetch(`${r.url}/api/v1/storage/object/files/${row.file}`, { headers: auth });
        expect(file.status, row.file).toBe(200);
        expect(versions.get(row.id)?.has(await file.text()), row.file).toBe(true);
      }
      // The data dir that was there is kept aside by a restore over it.
      const again = await runPlinth(['restore', backupFile, '--data-dir', restoredDir]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/plinth: the server \(pid \d+\) runs on .*: stop it first/);
    } finally {
      r.proc.kill('SIGTERM');
      await r.exited;
    }
    const over = await runPlinth(['restore', backupFile, '--data-dir', restoredDir]);
    expect(over.code, over.stderr).toBe(0);
    const aside = /what was there is in (\S+);/.exec(over.stdout)?.[1] ?? '';
    expect(existsSync(join(aside, 'pgdata', 'PG_VERSION'))).toBe(true);
  }, 300_000);

  it('a file that is no backup is one line, and nothing changes', async () => {
    const dir = join(tmp(), 'data');
    const junk = join(tmp(), 'junk.tar.gz');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(junk, 'not a backup at all');
    const r = await runPlinth(['restore', junk, '--data-dir', dir]);
    expect([r.code, r.stderr]).toEqual([
      1,
      expect.stringMatching(/^project: .*\nplinth: .*junk\.tar\.gz is not a Plinth backup \(not a gzip file, or a damaged one\)\n$/),
    ]);
    expect(existsSync(dir)).toBe(false);
  });

  it('a backup that unpacks to more than --max-size is one line naming the limit and the flag, and nothing changes', async () => {
    // Review round 3, I5: 64 MiB of zeros gzip to a few KiB (a small gzip bomb).
    const { gzipSync } = await import('node:zlib');
    const { writeFileSync } = await import('node:fs');
    const { TAR_END, tarHeader, tarPadding } = await import('../lib/index.js');
    const entry = (name: string, data: Buffer) => [
      tarHeader({ name, type: 'file', size: data.length, mode: 0o600, mtime: 0 }),
      data,
      tarPadding(data.length),
    ];
    const manifest = Buffer.from('{"format":"plinth-backup","version":1,"created_at":"2026-11-28T00:00:00.000Z","database":"pglite"}');
    const bomb = join(tmp(), 'bomb.tar.gz');
    writeFileSync(
      bomb,
      gzipSync(
        Buffer.concat([...entry('plinth-backup.json', manifest), ...entry('storage/objects/b/1', Buffer.alloc(64 * 2 ** 20)), TAR_END]),
      ),
    );
    const dir = join(tmp(), 'data');
    const r = await runPlinth(['restore', bomb, '--max-size', '1MiB', '--data-dir', dir]);
    expect([r.code, r.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^project: .*\nplinth: .*bomb\.tar\.gz unpacks to more than 1 MiB, the most a restore unpacks: .*--max-size 4MiB\)\n$/,
      ),
    ]);
    expect(existsSync(dir)).toBe(false);
    const bad = await runPlinth(['restore', bomb, '--max-size', 'lots', '--data-dir', dir]);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringMatching(/plinth: --max-size must be a size in bytes such as 52428800 or 50MiB, got "lots"\n$/),
    ]);
  });
});
