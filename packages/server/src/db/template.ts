/**
 * The embedded database a new project starts from: a data dir made once (PGlite's initdb and
 * every system migration) and copied for each new project, instead of making and migrating
 * one at every first start (initdb alone took 8.4 s on the 2-core CI machine, the migrations
 * 0.8 s more; the copy of its 1,166 files 0.3–1.3 s). It is made by `npm run build`
 * (scripts/pglite-template.mjs) and shipped in the plinth package; one that is missing is made
 * on first use.
 *
 * A template holds nothing of a project: no keys, no signing keys, no admin, no setup link (the
 * migrations insert none; each start makes its own when it finds none). It is keyed by what it
 * is made of: the migrations' names and text, PGlite's version, how initdb is run and the
 * format below, so a changed migration set never gets a template made before the change.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync, createGunzip } from 'node:zlib';
import { readTar, TAR_END, tarHeader, tarPadding } from '../lib/index.js';
import type { Migration } from './migrate.js';

/** Built, never committed: dist is the build's folder (from src/db and dist/db alike). */
export const TEMPLATE_ROOT = fileURLToPath(new URL('../../dist/pglite-template/', import.meta.url));
/** Raised when the way a template is made changes (what the builder does, not the migrations). */
const FORMAT = 1;
/** How initdb is run (its options are part of what a template is). */
const INIT_FILE = fileURLToPath(new URL('../../worker/pglite-init.mjs', import.meta.url));
/** Templates of other keys are removed once this old: a test run may still be copying one. */
const STALE_MS = 3_600_000;

let pgliteVersion: string | undefined;
/** The installed PGlite's version: a data dir made by one release is not handed to another. */
function installedPglite(): string {
  if (pgliteVersion) return pgliteVersion;
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite') return (pgliteVersion = pkg.version ?? 'unknown');
  }
  return (pgliteVersion = 'unknown');
}

/**
 * The key of the template made of these migrations.
 * @example templateKey(systemMigrations()) // '3f9c0a…' (16 hex digits)
 */
export function templateKey(migrations: Migration[]): string {
  const hash = createHash('sha256').update(`plinth-template ${FORMAT}\0pglite ${installedPglite()}\0`);
  hash.update(readFileSync(INIT_FILE));
  for (const m of migrations) hash.update(`${m.version}\0${m.name}\0${m.sql}\0`);
  return hash.digest('hex').slice(0, 16);
}

export interface TemplateOptions {
  migrations: Migration[];
  /** Makes a migrated data dir in `dataDir/pgdata` (and leaves nothing else running). */
  build(dataDir: string): Promise<void>;
  root?: string;
}

/**
 * The `pgdata` of the template for these migrations, made first when there is none (in a
 * folder of its own, renamed into place when complete: two processes making it at once both
 * end with one whole template). Throws when it cannot be made or kept (a read-only install):
 * the caller then makes the project's data dir the long way.
 * @example cpSync(await ensureTemplate({ migrations, build }), pgData, { recursive: true });
 */
export async function ensureTemplate(options: TemplateOptions): Promise<string> {
  const root = options.root ?? TEMPLATE_ROOT;
  const key = templateKey(options.migrations);
  const done = join(root, key, 'pgdata');
  if (existsSync(join(done, 'PG_VERSION'))) return done;
  mkdirSync(root, { recursive: true });
  const building = join(root, `${key}.build-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    // The plinth package ships its template packed (scripts/pack.mjs): unpacked once, here.
    const archive = templateArchive(root, key);
    if (existsSync(archive)) await unpackTemplate(archive, building);
    else await options.build(building);
    // What the build's open left beside pgdata (Plinth's lock) is not part of a template.
    for (const name of readdirSync(building)) if (name !== 'pgdata') rmSync(join(building, name), { recursive: true, force: true });
    rmSync(join(building, 'pgdata', 'postmaster.pid'), { force: true });
    try {
      renameSync(building, join(root, key));
    } catch (err) {
      // Another process finished the same template first: its copy serves.
      if (!existsSync(join(done, 'PG_VERSION'))) throw err;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  removeStale(root, key);
  return done;
}

/** Templates of other keys (and builds interrupted) an hour old or more; the shipped archives stay. */
function removeStale(root: string, key: string) {
  for (const name of readdirSync(root)) {
    if (name === key || name.endsWith('.tar.gz')) continue;
    const path = join(root, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

/** Where a packed template of this key lies: the package ships one (npm keeps no empty folder, and pgdata needs its own). */
export function templateArchive(root: string, key: string): string {
  return join(root, `${key}.tar.gz`);
}

/**
 * Packs a template's folder (`<key>`, holding `pgdata`) into a gzipped tar, empty folders
 * included (scripts/pack.mjs). 40 MB of files, most of them zeros of the WAL: ~3 MB packed.
 * @example packTemplate(dirname(await pgliteTemplate()), 'plinth/dist/pglite-template/<key>.tar.gz');
 */
export function packTemplate(dir: string, archive: string): void {
  const parts: Buffer[] = [];
  const walk = (path: string) => {
    const name = relative(dir, path).split(sep).join('/');
    const st = statSync(path);
    if (st.isDirectory()) {
      parts.push(tarHeader({ name: `${name}/`, type: 'dir', size: 0, mode: 0o700, mtime: Math.floor(st.mtimeMs / 1000) }));
      for (const entry of readdirSync(path).sort()) walk(join(path, entry));
    } else if (st.isFile()) {
      const bytes = readFileSync(path);
      parts.push(tarHeader({ name, type: 'file', size: bytes.length, mode: 0o600, mtime: Math.floor(st.mtimeMs / 1000) }));
      parts.push(bytes, tarPadding(bytes.length));
    }
  };
  for (const entry of readdirSync(dir).sort()) walk(join(dir, entry));
  parts.push(TAR_END);
  mkdirSync(dirname(archive), { recursive: true });
  const fd = openSync(archive, 'w', 0o644);
  try {
    writeSync(fd, gzipSync(Buffer.concat(parts)));
  } finally {
    closeSync(fd);
  }
}

/** Unpacks what packTemplate packed into `into` (which then holds `pgdata`). */
async function unpackTemplate(archive: string, into: string): Promise<void> {
  const base = resolve(into);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  for await (const entry of readTar(createReadStream(archive).pipe(createGunzip()))) {
    const path = resolve(base, entry.name);
    if (!path.startsWith(`${base}${sep}`)) throw new Error(`the template ${archive} has an entry outside its folder: ${entry.name}`);
    if (entry.type === 'dir') mkdirSync(path, { recursive: true, mode: 0o700 });
    else if (entry.type === 'file') {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      await pipeline(entry.body, createWriteStream(path, { mode: 0o600 }));
    }
  }
}
