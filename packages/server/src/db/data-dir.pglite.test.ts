import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from './pglite.js';

// The embedded data dir holds the project's secrets (the WAL carries the token-signing key):
// no other local user may read or write it, whatever the umask and PGlite's 0666 files.
const root = mkdtempSync(join(tmpdir(), 'plinth-perm-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const mode = (p: string) => statSync(p).mode & 0o777;

/**
 * Every directory under `dir` (and itself) that lets group or others in. Files PGlite makes
 * while it runs (0666 or 0644) sit behind these directories, which is what keeps others out.
 */
function openToOthers(dir: string): string[] {
  const out: string[] = [];
  for (const name of ['.', ...(readdirSync(dir, { recursive: true }) as string[])]) {
    const p = join(dir, name);
    if (statSync(p).isDirectory() && mode(p) & 0o077) out.push(`${name} ${mode(p).toString(8)}`);
  }
  return out;
}

describe('embedded data dir permissions', () => {
  it('a new data dir is made 0700, its database files closed to others', async () => {
    const dir = join(root, 'fresh', 'data');
    const db = await openPglite(dir);
    try {
      await db.query('create table t (v int)');
      expect(mode(dir).toString(8)).toBe('700');
      expect(mode(join(dir, 'pgdata')).toString(8)).toBe('700');
      expect(openToOthers(join(dir, 'pgdata'))).toEqual([]);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('an existing data dir made world-readable is tightened at start', async () => {
    const dir = join(root, 'existing');
    const first = await openPglite(dir);
    await first.close();
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'pgdata'), 0o777);
    writeFileSync(join(dir, 'pgdata', 'extra.conf'), '', { mode: 0o666 });
    chmodSync(join(dir, 'pgdata', 'extra.conf'), 0o666);
    chmodSync(join(dir, 'pgdata', 'global'), 0o755);
    mkdirSync(join(dir, 'pgdata', 'loose'), { mode: 0o777 });
    const db = await openPglite(dir);
    try {
      expect(mode(dir).toString(8)).toBe('700');
      expect(openToOthers(join(dir, 'pgdata'))).toEqual([]);
      // Files left open before the start are tightened too (a copy restored from a backup).
      expect(mode(join(dir, 'pgdata', 'extra.conf')).toString(8)).toBe('600');
      expect(mode(join(dir, 'pgdata', 'PG_VERSION')).toString(8)).toBe('600');
    } finally {
      await db.close();
    }
  }, 60_000);
});
