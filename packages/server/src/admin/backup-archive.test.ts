import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TAR_END, tarHeader, tarPadding } from '../lib/index.js';
import { RESTORE_MAX_BYTES, RestoreTooLargeError, restoreBackup } from './backup-archive.js';

// Review round 3, I5: a restore unpacks at most a limit of bytes, counted as the archive is
// un-gzipped, so a gzip bomb (a small file that unpacks to far more) stops there.
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-restore-cap-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tar(files: Array<[string, Buffer]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, data] of files) {
    parts.push(tarHeader({ name, type: 'file', size: data.length, mode: 0o600, mtime: 1_700_000_000 }), data, tarPadding(data.length));
  }
  parts.push(TAR_END);
  return Buffer.concat(parts);
}

const MANIFEST = Buffer.from(
  JSON.stringify({
    format: 'plinth-backup',
    version: 1,
    created_at: '2026-11-28T00:00:00.000Z',
    database: 'pglite',
    storage: { backend: 'disk', files: 1, bytes: 0 },
  }),
);

/** A backup (a tiny database folder, keys) with one storage file of `fileBytes` zeros: it gzips to a few KiB. */
function backup(fileBytes: number): string {
  const file = join(tmp(), 'backup.tar.gz');
  const archive = tar([
    ['plinth-backup.json', MANIFEST],
    ['pgdata.tar', tar([['PG_VERSION', Buffer.from('17\n')]])],
    ['keys.json', Buffer.from('{"public_key":"pk_x","secret_key":"sk_x"}')],
    ['storage/objects/bucket/1', Buffer.alloc(fileBytes)],
  ]);
  writeFileSync(file, gzipSync(archive));
  return file;
}

/** Every byte written under `dir`. */
function written(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(join(dir, name));
    if (st.isFile()) n += st.size;
  }
  return n;
}

describe('restore size limit', () => {
  it('a gzip bomb stops at the limit of the unpacked bytes, though its file is far smaller', async () => {
    const bomb = backup(64 * 2 ** 20); // 64 MiB of zeros
    expect(statSync(bomb).size).toBeLessThan(2 ** 20); // the file itself is under the 1 MiB limit
    const into = join(tmp(), 'data');
    const refused = restoreBackup(bomb, into, { maxBytes: 2 ** 20 });
    await expect(refused).rejects.toBeInstanceOf(RestoreTooLargeError);
    await expect(refused).rejects.toThrow(/unpacks to more than 1 MiB, the most a restore unpacks: .*--max-size 4MiB/);
    // It stopped there: no more than the limit was written.
    expect(written(into)).toBeLessThanOrEqual(2 ** 20);
  });

  it('a manifest too large to be one is refused before it is read into memory', async () => {
    const file = join(tmp(), 'big-manifest.tar.gz');
    writeFileSync(file, gzipSync(tar([['plinth-backup.json', Buffer.alloc(2 ** 20, 32)]])));
    await expect(restoreBackup(file, join(tmp(), 'data'))).rejects.toThrow(/is not a Plinth backup \(its plinth-backup\.json is 1 MiB\)/);
  });

  it('a file larger than the limit is refused before anything is unpacked', async () => {
    const file = backup(1000);
    const into = join(tmp(), 'data');
    await expect(restoreBackup(file, into, { maxBytes: 100 })).rejects.toThrow(/ is more than 100 bytes, the most a restore unpacks/);
    expect(existsSync(into)).toBe(false);
  });

  it('within the limit (10 GiB by default, or raised) the backup is restored', async () => {
    expect(RESTORE_MAX_BYTES).toBe(10 * 2 ** 30);
    const file = backup(4 * 2 ** 20);
    const into = join(tmp(), 'data');
    const manifest = await restoreBackup(file, into, { maxBytes: 8 * 2 ** 20 });
    expect(manifest.format).toBe('plinth-backup');
    expect(statSync(join(into, 'storage/objects/bucket/1')).size).toBe(4 * 2 ** 20);
    expect(readFileSync(join(into, 'pgdata', 'PG_VERSION'), 'utf8')).toBe('17\n');
    const again = join(tmp(), 'data');
    await restoreBackup(file, again);
    expect(readFileSync(join(again, 'keys.json'), 'utf8')).toContain('sk_x');
  });
});
