import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { createReadStream } from 'node:fs';
import { type FileHandle, copyFile, mkdir, open, opendir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BackendError, type ByteRange, type StorageBackend, type UploadStaging } from './types.js';

/**
 * `<bucket>/<uuid>`, or `<bucket>/<uuid>.t<16 hex>` for a stored image transform of that upload
 * (image-cache.ts): the only keys the service makes (names never become paths).
 */
const KEY = /^([a-z0-9][a-z0-9_.-]{0,62})\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:\.t[0-9a-f]{16})?)$/;

/**
 * Read in 1 MiB chunks: a file up to 1 MiB is one read and one socket write. Measured with 32
 * concurrent 1 MiB downloads on PostgreSQL, three alternating runs each: 1,092 req/s with 256 KiB
 * chunks, 1,176 with 1 MiB (+8 %; the reads and socket writes are most of a download's CPU).
 * Backpressure still holds at most a chunk or two per download in memory.
 */
const READ_CHUNK = 1024 * 1024;

/**
 * What is read whole into one Buffer instead of streamed: one open, one read, one close and one
 * socket write. Measured with 32 concurrent 1 MiB downloads as a user, streamed vs whole,
 * alternating: Node CPU per download 0.86 → 0.74 ms on PGlite (3 pairs), 0.69 → 0.63 ms on
 * PostgreSQL (4 pairs); at most 32 MiB in memory for 32 such downloads at once.
 */
const WHOLE_READ = 1024 * 1024;

/**
 * The file of a key under `objectsDir`: `<bucket>/<first two hex digits>/<uuid>` (the shard keeps
 * directories small). Throws for anything but a service-made key, and checks the resolved path
 * is inside the root all the same.
 * @example keyPath('/data/storage/objects', 'avatars/0b5c…') // '/data/storage/objects/avatars/0b/0b5c…'
 */
export function keyPath(objectsDir: string, key: string): string {
  const m = KEY.exec(key);
  if (!m) throw new Error(`storage: not a storage key: ${JSON.stringify(key).slice(0, 80)}`);
  const root = resolve(objectsDir);
  const path = resolve(root, m[1], m[2].slice(0, 2), m[2]);
  if (!path.startsWith(root + sep)) throw new Error('storage: a key resolved outside the storage root');
  return path;
}

/** fsync of a directory, so a rename or a new entry in it survives a crash. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

const wrap = (what: string, err: unknown) =>
  new BackendError(`storage: the disk failed to ${what}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });

/**
 * Local disk under the data dir (the default backend): `<root>/objects/…` holds the bytes,
 * `<root>/tmp/` the uploads under way. An upload is written to a temporary file, flushed
 * (fsync), renamed into place and its directory flushed, so a crash leaves either the whole
 * file or only a temporary one for the sweep.
 * @example const backend = createDiskBackend(join(config.dataDir, 'storage'));
 */
export async function createDiskBackend(root: string, options: { openIdleMs?: number } = {}): Promise<StorageBackend> {
  const objectsDir = join(root, 'objects');
  const tmpDir = join(root, 'tmp');
  await mkdir(objectsDir, { recursive: true });
  await mkdir(tmpDir, { recursive: true });
  const staging = await diskStaging(join(root, 'uploads'), (file, key) => place(file, key));
  const handles = handleCache((key) => keyPath(objectsDir, key), options.openIdleMs ?? OPEN_IDLE_MS);

  /** Moves a flushed temporary file to the key's place, creating and flushing directories. */
  async function place(tmp: string, key: string): Promise<void> {
    const dest = keyPath(objectsDir, key);
    const dir = dirname(dest);
    const created = await mkdir(dir, { recursive: true });
    await rename(tmp, dest);
    await syncDir(dir);
    // `created` is the top-most new directory: its parent and each new directory down to
    // `dir` gained an entry, and those entries must survive a crash too.
    if (created !== undefined) {
      const top = dirname(resolve(created));
      for (let d = dirname(dir); d.length >= top.length; d = dirname(d)) {
        await syncDir(d);
        if (d === top) break;
      }
    }
  }

  /** Fills a new temporary file and flushes it to the disk (fsync covers the file, whichever descriptor asks). */
  async function flushed(tmp: string, fill: () => Promise<void>): Promise<void> {
    try {
      await fill();
      const fh = await open(tmp, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  return {
    kind: 'disk',
    async put(key, body) {
      keyPath(objectsDir, key);
      const tmp = join(tmpDir, `${randomUUID()}.part`);
      await flushed(tmp, () => pipeline(body, createWriteStream(tmp, { flags: 'wx', mode: 0o600 })));
      try {
        await place(tmp, key);
      } catch (err) {
        await rm(tmp, { force: true });
        throw wrap('store a file', err);
      }
    },
    async get(key, range?: ByteRange, size?: number): Promise<Readable | Buffer | null> {
      const start = range?.start ?? 0;
      const length = range ? range.end - range.start + 1 : size;
      if (length !== undefined && length <= WHOLE_READ) {
        let handle: Handle | null;
        try {
          handle = await handles.acquire(key);
        } catch (err) {
          throw wrap('open a file', err);
        }
        if (!handle) return null;
        try {
          return await readWhole(handle.fh, start, length);
        } catch (err) {
          throw wrap('read a file', err);
        } finally {
          handles.release(handle);
        }
      }
      let fh: FileHandle;
      try {
        fh = await open(keyPath(objectsDir, key), 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw wrap('open a file', err);
      }
      return fh.createReadStream({ highWaterMark: READ_CHUNK, ...(range ? { start: range.start, end: range.end } : {}) });
    },
    async copy(from, to) {
      const src = keyPath(objectsDir, from);
      const tmp = join(tmpDir, `${randomUUID()}.part`);
      try {
        await flushed(tmp, () => copyFile(src, tmp));
        await place(tmp, to);
      } catch (err) {
        await rm(tmp, { force: true });
        throw wrap('copy a file', err);
      }
    },
    async remove(keys) {
      for (const key of keys) {
        handles.forget(key);
        try {
          await rm(keyPath(objectsDir, key), { force: true });
        } catch (err) {
          throw wrap('delete a file', err);
        }
      }
    },
    async *list() {
      for (const bucket of await readdir(objectsDir)) {
        for (const shard of await readdir(join(objectsDir, bucket)).catch(() => [] as string[])) {
          const dir = await opendir(join(objectsDir, bucket, shard)).catch(() => null);
          if (!dir) continue;
          for await (const entry of dir) {
            const key = `${bucket}/${entry.name}`;
            if (!entry.isFile() || !KEY.test(key)) continue;
            const s = await stat(join(objectsDir, bucket, shard, entry.name)).catch(() => null);
            if (s) yield { key, modified: s.mtimeMs };
          }
        }
      }
    },
    async cleanIncomplete(before) {
      let n = 0;
      for (const name of await readdir(tmpDir)) {
        const s = await stat(join(tmpDir, name)).catch(() => null);
        if (s && s.mtimeMs < before) {
          await rm(join(tmpDir, name), { force: true });
          n++;
        }
      }
      return n;
    },
    staging,
    async close() {
      await handles.closeAll();
    },
  };
}

const UPLOAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Resumable uploads' bytes on the disk: `<root>/uploads/<id>.part`, in the storage directory
 * that every instance sharing this backend mounts. The offset is the database's
 * (`storage.uploads.received`), not the file's size: a write is cut back to it first, so bytes a
 * crashed instance wrote past what it recorded are written again.
 */
async function diskStaging(dir: string, place: (file: string, key: string) => Promise<void>): Promise<UploadStaging> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const fileOf = (id: string) => {
    if (!UPLOAD_ID.test(id)) throw new Error('storage: not an upload id');
    return join(dir, `${id}.part`);
  };
  const unsupported = () => Promise.reject(new Error('storage: the disk stages uploads in files, not parts'));
  return {
    kind: 'file',
    partSize: 0,
    async start(id) {
      try {
        await (await open(fileOf(id), 'wx', 0o600)).close();
      } catch (err) {
        throw wrap('start an upload', err);
      }
      return '';
    },
    async openAt(id, offset) {
      let fh: FileHandle;
      try {
        fh = await open(fileOf(id), 'r+');
        await fh.truncate(offset);
      } catch (err) {
        throw wrap('open an upload', err);
      }
      let at = offset;
      return {
        async write(data) {
          let done = 0;
          while (done < data.length) {
            const { bytesWritten } = await fh.write(data, done, data.length - done, at);
            done += bytesWritten;
            at += bytesWritten;
          }
        },
        async close() {
          await fh.close();
        },
      };
    },
    part: unsupported,
    async read(id) {
      const path = fileOf(id);
      try {
        await stat(path);
      } catch (err) {
        throw wrap('read an upload', err);
      }
      return createReadStream(path, { highWaterMark: READ_CHUNK });
    },
    async adopt(id, key) {
      const file = fileOf(id);
      try {
        const fh = await open(file, 'r+');
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
        await place(file, key);
      } catch (err) {
        throw wrap('store an upload', err);
      }
    },
    async discard(id) {
      await rm(fileOf(id), { force: true });
    },
    async *list(before) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const id = name.replace(/\.part$/, '');
        const s = await stat(join(dir, name)).catch(() => null);
        if (s && s.mtimeMs < before) {
          if (UPLOAD_ID.test(id) && name.endsWith('.part')) yield { id, handle: '' };
          else await rm(join(dir, name), { force: true }); // what an older release kept (`<id>.json`)
        }
      }
    },
  };
}

/** `length` bytes from `start` of an open file. A file is never rewritten under its key, so a short read means it was cut: an error. */
async function readWhole(fh: FileHandle, start: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, start + got);
    if (bytesRead === 0) throw new Error(`storage: a file ended after ${got} of ${length} bytes`);
    got += bytesRead;
  }
  return buf;
}

interface Handle {
  key: string;
  fh: FileHandle;
  /** Reads under way on it: it is closed once none is and it left the cache. */
  users: number;
  cached: boolean;
  closed: boolean;
  lastUsed: number;
}

/** How many files stay open for whole reads, and how long one unused stays open. */
const OPEN_FILES = 64;
const OPEN_IDLE_MS = 5_000;

/**
 * Descriptors of files read whole, kept open for the next download of the same key: an open and
 * a close cost about as much as the 1 MiB read itself. 32 concurrent 1 MiB downloads on
 * PostgreSQL, four alternating runs each: Node CPU per download 0.61 → 0.55 ms (medians),
 * 1,270 → 1,570 req/s (means). Safe because a key's bytes never change (an upload writes a new
 * key) and its row decides who reads it; a key removed here is closed at once, and one deleted by
 * another process (a sibling worker's remove) is held at most OPEN_IDLE_MS (tests may set another).
 */
function handleCache(pathOf: (key: string) => string, idleMs: number) {
  const open_ = new Map<string, Handle>();
  const opening = new Map<string, Promise<Handle | null>>();
  const closeQuietly = async (h: Handle): Promise<void> => {
    if (h.closed || h.users > 0) return;
    h.closed = true;
    await h.fh.close().catch(() => undefined);
  };
  const drop = (h: Handle) => {
    if (!h.cached) return;
    h.cached = false;
    open_.delete(h.key);
    // After the current callback: a reader that awaited this very open resumes before, and holds it.
    setImmediate(() => void closeQuietly(h));
  };
  const idle = setInterval(() => {
    const before = Date.now() - idleMs;
    for (const h of open_.values()) if (h.users === 0 && h.lastUsed < before) drop(h);
  }, idleMs);
  idle.unref();

  async function openKey(key: string): Promise<Handle | null> {
    let fh: FileHandle;
    try {
      fh = await open(pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const h: Handle = { key, fh, users: 0, cached: true, closed: false, lastUsed: Date.now() };
    open_.set(key, h);
    // The least recently used go first (a Map keeps insertion order; a use re-inserts).
    for (const old of open_.values()) {
      if (open_.size <= OPEN_FILES) break;
      drop(old);
    }
    return h;
  }

  return {
    /** The open file of `key` (null when there is none), held until `release`. */
    async acquire(key: string): Promise<Handle | null> {
      let h = open_.get(key) ?? null;
      if (h) {
        open_.delete(key);
        open_.set(key, h);
      } else {
        let pending = opening.get(key);
        if (!pending) {
          pending = openKey(key).finally(() => opening.delete(key));
          opening.set(key, pending);
        }
        h = await pending;
        if (!h) return null;
      }
      h.users++;
      h.lastUsed = Date.now();
      return h;
    },
    release(h: Handle): void {
      h.users--;
      if (!h.cached) void closeQuietly(h);
    },
    forget(key: string): void {
      const h = open_.get(key);
      if (h) drop(h);
    },
    async closeAll(): Promise<void> {
      clearInterval(idle);
      const all = [...open_.values()];
      open_.clear();
      await Promise.all(
        all.map((h) => {
          h.cached = false;
          return closeQuietly(h);
        }),
      );
    },
  };
}

/** The temporary files of uploads under way (tests: an aborted upload leaves none). */
export async function diskTempFiles(root: string): Promise<string[]> {
  return readdir(join(root, 'tmp')).catch(() => []);
}
