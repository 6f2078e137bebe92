/**
 * `plinth backup [--out F]`: a backup of the embedded project in one file (the database, the
 * keys, the storage files): through the running server (POST /api/v1/backups, then its
 * download), or from the data dir when none runs. PostgreSQL is backed up with pg_dump.
 */
import { createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { flagValue } from './args.js';
import { type CommandContext, hasDatabase, shown } from './context.js';
import { fail } from './output.js';
import { callServer, closingAfter, serverOf } from './running.js';

const size = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

type Storage = { backend: 'disk'; files: number } | { backend: 's3'; bucket: string };
const what = (storage: Storage) =>
  storage.backend === 'disk'
    ? `the database, the keys and ${storage.files} stored ${storage.files === 1 ? 'file' : 'files'}`
    : `the database and the keys; the files stay in the S3 bucket ${storage.bucket}: back it up with its provider's tools`;

export async function run({ args, config, cwd }: CommandContext): Promise<void> {
  if (config.databaseUrl) {
    fail(
      `the project is on PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom --file=app.dump "$${config.databaseUrlVariable}" (docs/operations.md, "Backups", has the roles and the restore)`,
    );
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const out = resolve(cwd, flagValue(args, 'out') ?? `plinth-backup-${stamp}.tar.gz`);
  mkdirSync(dirname(out), { recursive: true });
  const server = serverOf(config);
  if (server) {
    const made = await callServer(config, server, 'POST', '/api/v1/backups');
    if (made.status !== 201) fail(`the server made no backup: ${String(made.body.message ?? `HTTP ${made.status}`)}`);
    const { name, size: bytes, storage } = made.body as { name: string; size: number; storage: Storage };
    const file = await callServer(config, server, 'GET', `/api/v1/backups/${name}`);
    if (file.status !== 200 || !file.response.body) fail(`the server did not send its backup ${name}: HTTP ${file.status}`);
    const part = `${out}.part-${process.pid}`;
    try {
      await pipeline(Readable.fromWeb(file.response.body as WebReadableStream<Uint8Array>), createWriteStream(part, { mode: 0o600 }));
      renameSync(part, out);
    } catch (err) {
      rmSync(part, { force: true });
      fail(`cannot write ${shown(out, cwd)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    process.stdout.write(`backup written to ${shown(out, cwd)} (${size(bytes)}: ${what(storage)}; the server keeps it too, as ${name})\n`);
    return;
  }
  if (!hasDatabase(config.dataDir)) fail(`no database in ${config.dataDir} yet: nothing to back up (plinth start makes it)`);
  const { openDatabase } = await import('../db/index.js');
  const { writeBackup } = await import('../admin/index.js');
  const db = await openDatabase(config);
  const manifest = await closingAfter(db, () => writeBackup({ db, dataDir: config.dataDir, storage: config.storage }, out));
  process.stdout.write(`backup written to ${shown(out, cwd)} (${size(manifest.size)}: ${what(manifest.storage as Storage)})\n`);
}
