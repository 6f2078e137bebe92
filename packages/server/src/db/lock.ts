import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Raised when another live process holds the data dir. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another Plinth process (pid ${pid}). ` +
        'Stop that process, or start this one with another --data-dir.',
    );
    this.name = 'DataDirLockedError';
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes Plinth's own lock on an embedded data dir. PGlite has none: two processes on one
 * dir corrupt it, and a crash leaves a `postmaster.pid` on which PGlite then hangs. A lock
 * whose process is gone is stale: it and PGlite's pid file are cleared.
 * @example const release = acquireDataDirLock('./data'); … release();
 */
export function acquireDataDirLock(dataDir: string, pgDataDir: string): () => void {
  // 0700, and an existing dir tightened: the embedded database and the keys are the project's
  // secrets (the WAL holds the token-signing key), and PGlite writes its files 0666.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const lockPath = join(dataDir, 'plinth.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      // We hold the lock now, so any postmaster.pid is left by a dead process.
      const pidFile = join(pgDataDir, 'postmaster.pid');
      if (existsSync(pidFile)) rmSync(pidFile, { force: true });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (readFileSync(lockPath, 'utf8').trim() === String(process.pid)) rmSync(lockPath, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let pid = Number.NaN;
      try {
        pid = Number(readFileSync(lockPath, 'utf8').trim());
      } catch {
        // vanished between open and read: try again
      }
      if (pid === process.pid) throw new DataDirLockedError(dataDir, pid);
      if (alive(pid)) throw new DataDirLockedError(dataDir, pid);
      rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`Could not take the lock on ${dataDir}.`);
}

/**
 * Takes group and other permissions off a directory tree (files 0600, directories 0700):
 * PGlite creates its files 0666 whatever the umask. The 0700 data dir above them is what
 * keeps other users out; this also covers a copy of the tree made elsewhere (a backup).
 * @example closeToOthers('./data/pgdata');
 */
export function closeToOthers(path: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    if (st.mode & 0o077) chmodSync(path, 0o700);
    for (const name of readdirSync(path)) closeToOthers(join(path, name));
  } else if (st.mode & 0o077) chmodSync(path, st.mode & 0o700);
}
