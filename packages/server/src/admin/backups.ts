import type { BackupInfo } from '@plinth/shared';
import { createReadStream, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StorageConfig } from '../config/index.js';
import type { Db } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { writeBackup } from './backup-archive.js';

/** How many backups the server keeps in `<data dir>/backups` (older ones are deleted by the next). */
export const BACKUPS_KEPT = 5;
const NAME = /^plinth-backup-\d{8}-\d{6}-\d{3}\.tar\.gz$/;

export const BackupParams = Type.Object({ name: Type.String({ maxLength: 100 }) }, { additionalProperties: false });

export type { BackupInfo };

export interface BackupDeps {
  db: Db;
  dataDir: string;
  storage: StorageConfig;
  /** Holds storage's file deletions while a backup copies the files. */
  hold: () => Promise<() => void>;
}

/** `plinth-backup-20260501-120000-000.tar.gz` for a time. */
function nameAt(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-05-01T12:00:00.000Z
  return `plinth-backup-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${iso.slice(20, 23)}.tar.gz`;
}

/**
 * Backups of the embedded project kept by the server (docs/api.md "Backups", docs/operations.md): made on
 * request, the last five kept in `<data dir>/backups`, listed and downloaded by the secret key or
 * an admin (the console). On PostgreSQL every route answers 409 `backups_unavailable`.
 * - `POST /api/v1/backups` → 201 `{name, size, created_at, storage}`
 * - `GET /api/v1/backups` → `[{name, size, created_at}]`, newest first
 * - `GET /api/v1/backups/{name}` → the file (`application/gzip`, as an attachment)
 * @example const h = createBackupHandlers({ db, dataDir, storage: config.storage, hold });
 */
export function createBackupHandlers(deps: BackupDeps) {
  const dir = join(deps.dataDir, 'backups');
  let making: Promise<unknown> = Promise.resolve();
  const embeddedOnly = () => {
    if (deps.db.kind !== 'pglite') {
      throw new ApiError(
        'backups_unavailable',
        'Backups through Plinth are of the embedded database; back up PostgreSQL with pg_dump (docs/operations.md, "Backups").',
      );
    }
  };
  const list = (): BackupInfo[] =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((n) => NAME.test(n))
          .sort()
          .reverse()
          .map((name) => {
            const st = statSync(join(dir, name));
            return { name, size: st.size, created_at: st.mtime.toISOString() };
          })
      : [];
  return {
    async create(_req: FastifyRequest, reply: FastifyReply) {
      embeddedOnly();
      // One at a time: each holds the storage sweep and copies the whole project.
      const run = making.then(async () => {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        let at = Date.now();
        while (existsSync(join(dir, nameAt(at)))) at++;
        const name = nameAt(at);
        const manifest = await writeBackup({ db: deps.db, dataDir: deps.dataDir, storage: deps.storage, hold: deps.hold }, join(dir, name));
        for (const old of list().slice(BACKUPS_KEPT)) rmSync(join(dir, old.name), { force: true });
        return { name, size: manifest.size, created_at: manifest.created_at, storage: manifest.storage };
      });
      making = run.catch(() => undefined);
      const made = await run;
      reply.code(201);
      return made;
    },
    async list() {
      embeddedOnly();
      return list();
    },
    async download(req: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) {
      embeddedOnly();
      const { name } = req.params;
      if (!NAME.test(name) || !existsSync(join(dir, name))) {
        throw new ApiError('not_found', `No backup ${name.slice(0, 100)}; GET /api/v1/backups lists them.`);
      }
      reply
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('content-length', String(statSync(join(dir, name)).size))
        .header('cache-control', 'no-store');
      return reply.send(createReadStream(join(dir, name)));
    },
  };
}
