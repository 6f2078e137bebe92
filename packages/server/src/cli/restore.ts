/**
 * `plinth restore F`: puts a backup (plinth backup) back as the project's embedded database,
 * keys and files. The server must be stopped; the data dir there before is kept aside, renamed
 * `<data dir>.before-restore-<time>`, never deleted. A backup unpacks to at most `--max-size`
 * (10 GiB by default; a gzip bomb stops there), and it brings its own keys and admins: restoring
 * one trusts whoever made it (docs/operations.md).
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { acquireDataDirLock } from '../db/index.js';
import { RESTORE_MAX_BYTES, restoreBackup } from '../admin/index.js';
import { ConfigError, size } from '../config/index.js';
import { type Args, UsageError } from './args.js';
import { type CommandContext, shown } from './context.js';
import { fail } from './output.js';
import { serverOf } from './running.js';

export function check(args: Args): void {
  if (!args.positional[0]) throw new UsageError('plinth restore needs the backup file: plinth restore plinth-backup-….tar.gz');
  maxBytes(args);
}

/** `--max-size`: a size such as 10GiB or 500MB (bytes without a unit); the default is RESTORE_MAX_BYTES. */
function maxBytes(args: Args): number {
  const value = args.flags['max-size'];
  if (value === undefined) return RESTORE_MAX_BYTES;
  try {
    return size({ '--max-size': String(value) }, '--max-size', RESTORE_MAX_BYTES);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message.replace(/^config: /, ''));
    throw err;
  }
}

export async function run({ args, config, cwd }: CommandContext): Promise<void> {
  const file = args.positional[0];
  if (config.databaseUrl) {
    fail(`the project is on PostgreSQL: restore a pg_dump with pg_restore (docs/operations.md, "Backups")`);
  }
  if (!existsSync(resolve(cwd, file))) fail(`no file ${file}`);
  const server = serverOf(config);
  if (server) fail(`the server (pid ${server.pid}) runs on ${config.dataDir}: stop it first, then restore, then start it again`);
  const dataDir = config.dataDir;
  const temp = `${dataDir}.restore-${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  let manifest: Awaited<ReturnType<typeof restoreBackup>>;
  try {
    manifest = await restoreBackup(resolve(cwd, file), temp, { maxBytes: maxBytes(args) });
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    fail((err as Error).message);
  }
  let aside: string | null = null;
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    // Refuses (one line) when another process holds it; released before the move, which is at once.
    const release = (() => {
      try {
        return acquireDataDirLock(dataDir, resolve(dataDir, 'pgdata'));
      } catch (err) {
        rmSync(temp, { recursive: true, force: true });
        throw err;
      }
    })();
    release();
    aside = `${dataDir}.before-restore-${new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}`;
    renameSync(dataDir, aside);
  } else if (existsSync(dataDir)) rmSync(dataDir, { recursive: true });
  renameSync(temp, dataDir);
  process.stdout.write(
    `restored ${shown(file, cwd)} (made ${manifest.created_at}) into ${shown(dataDir, cwd)}${aside ? `; what was there is in ${shown(aside, cwd)}` : ''}; start the server: plinth start\n`,
  );
}
