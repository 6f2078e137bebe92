/**
 * The backup of an embedded project: one gzipped tar file holding
 * - `plinth-backup.json`: what it is (format, time, database, the storage it holds or names);
 * - `pgdata.tar`: PGlite's own dump of the database folder (`Db.dumpDataDir`), taken while it serves;
 * - `keys.json`: the project keys a first start made (so apps keep working after a restore);
 * - `storage/objects/…`: the files of the disk storage backend (an S3 bucket is named, not copied).
 * Consistent while writes run: file deletions are held (storage's sweeper) from before the
 * database is copied until the files are, so every file a row of the copy names is in the
 * archive; files written after the copy are orphans the sweep removes after a restore.
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { StorageConfig } from '../config/index.js';
import type { Db } from '../db/index.js';
import { readTar, TAR_END, tarHeader, tarPadding } from '../lib/index.js';

export const BACKUP_FORMAT = 'plinth-backup';
const MANIFEST = 'plinth-backup.json';

/**
 * What a restore unpacks at most unless told more (`plinth restore --max-size`): the archive's
 * bytes once un-gzipped, counted as they come, so a gzip bomb (a few KiB that unpack to
 * terabytes) stops here, not when the disk is full. A project's data folder of 40 MB backs up
 * to 4.8 MiB (docs/operations.md); 10 GiB leaves room for the disk backend's files.
 */
export const RESTORE_MAX_BYTES = 10 * 2 ** 30;
const MAX_MANIFEST = 64 * 1024;

/** A size for people: `10 GiB`, `512 MiB`, `300 KiB`, `12 bytes`. */
export function bytesText(n: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (n >= size) return `${Number((n / size).toFixed(1))} ${unit}`;
  }
  return `${n} bytes`;
}

/** The archive is larger than the restore may unpack (`limit`, bytes). */
export class RestoreTooLargeError extends Error {
  constructor(
    file: string,
    readonly limit: number,
    packed: boolean,
  ) {
    super(
      `${file} ${packed ? 'is' : 'unpacks to'} more than ${bytesText(limit)}, the most a restore unpacks: if you made this backup and trust it, raise the limit (plinth restore ${file} --max-size ${bytesText(limit * 4).replace(' ', '')})`,
    );
  }
}

/** The chunks of `source`, refused once they add up to more than `max` bytes. */
async function* capped(source: AsyncIterable<Buffer>, max: number, file: string): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > max) throw new RestoreTooLargeError(file, max, false);
    yield chunk;
  }
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: 1;
  created_at: string;
  database: 'pglite';
  /** The files: copied from the disk backend, or only named (an S3 bucket). */
  storage: { backend: 'disk'; files: number; bytes: number } | { backend: 's3'; bucket: string; included: false };
}

export interface BackupSource {
  db: Db;
  dataDir: string;
  storage: StorageConfig;
  /** Holds file deletions until the returned function is called (the running server's sweeper); none offline. */
  hold?: () => Promise<() => void>;
}

/** Every file under `dir` (relative `/` paths with their size), or none when it does not exist. */
async function filesUnder(dir: string): Promise<Array<{ path: string; size: number }>> {
  const out: Array<{ path: string; size: number }> = [];
  const walk = async (d: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const name of names.sort()) {
      const p = join(d, name);
      const st = await lstat(p).catch(() => null);
      if (st?.isDirectory()) await walk(p);
      else if (st?.isFile()) out.push({ path: relative(dir, p).split(sep).join('/'), size: st.size });
    }
  };
  await walk(dir);
  return out;
}

async function* fileEntry(name: string, bytes: Buffer | Uint8Array): AsyncGenerator<Buffer> {
  yield tarHeader({ name, type: 'file', size: bytes.length, mode: 0o600, mtime: Date.now() / 1000 });
  yield Buffer.from(bytes);
  yield tarPadding(bytes.length);
}

/**
 * Writes a backup of the embedded project to `file` (0600; written beside it and renamed, so a
 * failure leaves no half file) and returns its manifest.
 * @example const manifest = await writeBackup({ db, dataDir, storage: config.storage, hold: () => storage.sweeper.hold() }, 'backup.tar.gz');
 */
export async function writeBackup(source: BackupSource, file: string): Promise<BackupManifest & { size: number }> {
  const dump = source.db.dumpDataDir;
  if (source.db.kind !== 'pglite' || !dump) throw new Error('writeBackup: only the embedded database can be backed up this way');
  const release = (await source.hold?.()) ?? (() => undefined);
  const temp = `${file}.part-${process.pid}`;
  try {
    const database = await dump.call(source.db);
    const objectsDir = join(source.dataDir, 'storage', 'objects');
    const files = source.storage.backend === 'disk' ? await filesUnder(objectsDir) : [];
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: 1,
      created_at: new Date().toISOString(),
      database: 'pglite',
      storage:
        source.storage.backend === 's3'
          ? { backend: 's3', bucket: source.storage.s3?.bucket ?? '', included: false }
          : { backend: 'disk', files: files.length, bytes: files.reduce((n, f) => n + f.size, 0) },
    };
    const keys = join(source.dataDir, 'keys.json');
    async function* entries(): AsyncGenerator<Buffer> {
      yield* fileEntry(MANIFEST, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
      yield* fileEntry('pgdata.tar', database);
      if (existsSync(keys)) yield* fileEntry('keys.json', readFileSync(keys));
      for (const f of files) {
        // The size listed is the size written: a file's bytes never change once it is in place.
        const stream = createReadStream(join(objectsDir, f.path));
        const opened = await new Promise<boolean>((done) => {
          stream.once('open', () => done(true));
          stream.once('error', () => done(false));
        });
        if (!opened) continue; // gone since the listing (deleted before the hold): not needed by the copy
        yield tarHeader({ name: `storage/objects/${f.path}`, type: 'file', size: f.size, mode: 0o600, mtime: Date.now() / 1000 });
        let written = 0;
        for await (const chunk of stream) {
          written += chunk.length;
          yield chunk as Buffer;
        }
        if (written !== f.size) throw new Error(`backup: ${f.path} changed while it was copied`);
        yield tarPadding(f.size);
      }
      yield TAR_END;
    }
    mkdirSync(dirname(resolve(file)), { recursive: true });
    await pipeline(Readable.from(entries()), createGzip(), createWriteStream(temp, { mode: 0o600 }));
    renameSync(temp, file);
    const { size } = await lstat(file);
    return { ...manifest, size };
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  } finally {
    release();
  }
}

/** A path inside `root` for an archive's entry name, or null for one that would leave it. */
function inside(root: string, name: string): string | null {
  if (!name || name.split('/').some((part) => part === '..' || part === '')) return null;
  const p = resolve(root, name);
  return p.startsWith(resolve(root) + sep) ? p : null;
}

/** Writes an entry's bytes to a new file (0600). */
async function writeEntry(path: string, body: AsyncIterable<Buffer>): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  await pipeline(Readable.from(body), createWriteStream(path, { mode: 0o600, flags: 'wx' }));
}

/**
 * Unpacks a backup into an empty (or missing) data dir: the database folder, the keys and the
 * storage files. Throws, with a one-line message, on a file that is no Plinth backup, and
 * (`RestoreTooLargeError`) on one that is, or unpacks to, more than `maxBytes`
 * (`RESTORE_MAX_BYTES` by default). A backup brings its own keys and its own admins: restoring
 * one trusts whoever made it (docs/operations.md).
 * @example const manifest = await restoreBackup('backup.tar.gz', '/app/data');
 */
export async function restoreBackup(file: string, dataDir: string, options: { maxBytes?: number } = {}): Promise<BackupManifest> {
  const max = options.maxBytes ?? RESTORE_MAX_BYTES;
  if (statSync(file).size > max) throw new RestoreTooLargeError(file, max, true);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let manifest: BackupManifest | null = null;
  let database = false;
  const source = capped(createReadStream(file).pipe(createGunzip()), max, file);
  try {
    for await (const entry of readTar(source)) {
      if (entry.type !== 'file') continue;
      if (!manifest) {
        if (entry.name !== MANIFEST) throw new Error(`${file} is not a Plinth backup (it does not start with ${MANIFEST})`);
        // Read into memory, so bounded (one is about 200 bytes): a huge one is no manifest.
        if (entry.size > MAX_MANIFEST) throw new Error(`${file} is not a Plinth backup (its ${MANIFEST} is ${bytesText(entry.size)})`);
        const chunks: Buffer[] = [];
        for await (const c of entry.body) chunks.push(c);
        const m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest;
        if (m.format !== BACKUP_FORMAT || m.version !== 1)
          throw new Error(`${file} is a backup of another format (${m.format} ${m.version})`);
        manifest = m;
        continue;
      }
      if (entry.name === 'pgdata.tar') {
        for await (const inner of readTar(entry.body)) {
          const path = inside(join(dataDir, 'pgdata'), inner.name);
          if (inner.type === 'dir' && path) mkdirSync(path, { recursive: true, mode: 0o700 });
          else if (inner.type === 'file' && path) await writeEntry(path, inner.body);
        }
        database = true;
      } else if (entry.name === 'keys.json' || entry.name.startsWith('storage/objects/')) {
        const path = inside(dataDir, entry.name);
        if (path) await writeEntry(path, entry.body);
      }
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR')
      throw new Error(`${file} is not a Plinth backup (not a gzip file, or a damaged one)`);
    throw err;
  }
  if (!manifest || !database) throw new Error(`${file} is not a complete Plinth backup (no database in it)`);
  return manifest;
}
