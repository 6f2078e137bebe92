import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { createArgon2Hasher } from '../auth/index.js';
import { type Config, loadConfig } from '../config/index.js';
import { DataDirLockedError, migrateSystem, openDatabase } from '../db/index.js';
import { ApiError } from '../http/index.js';
import { systemClock } from '../lib/index.js';
import { adminPassword, createAdminService } from './admins.js';
import { createAdminSessions } from './sessions.js';

export const ADMIN_USAGE = 'usage: plinth admin create --email E [--password P] | plinth admin set-password --email E [--password P]';

type Flags = Record<string, string | boolean>;

/** A one-line failure for the CLI (main.ts prints `plinth: <message>` and exits). */
export class CliError extends Error {}

/**
 * Reads a password: on a terminal it asks twice without echo; from a pipe it reads one line
 * (`echo "$PW" | plinth admin create --email a@b.c`), so scripts need not put it in argv.
 */
export async function askPassword(input: NodeJS.ReadStream, output: NodeJS.WriteStream): Promise<string> {
  if (!input.isTTY) {
    const rl = createInterface({ input, terminal: false });
    for await (const line of rl) {
      rl.close();
      return line.replace(/\r$/, '');
    }
    throw new CliError('no password: pass --password, pipe it on stdin, or run in a terminal to be asked');
  }
  const ask = async (prompt: string) => {
    output.write(prompt);
    let muted = true;
    const sink = new Writable({
      write(chunk, _enc, cb) {
        if (!muted) output.write(chunk);
        cb();
      },
    });
    const rl = createInterface({ input, output: sink, terminal: true });
    const answer = await new Promise<string>((resolve) => rl.question('', resolve));
    muted = false;
    rl.close();
    output.write('\n');
    return answer;
  };
  const first = await ask('Password (12 to 128 characters): ');
  if ((await ask('Once more: ')) !== first) throw new CliError('the two passwords differ; nothing was changed');
  return first;
}

/**
 * `plinth admin create --email E [--password P]` and `plinth admin set-password --email E`:
 * console admins, written straight to the database (DATABASE_URL, or the data dir when no
 * server holds it). Returns the line to print; throws CliError with a one-line cause.
 * @example await adminCommand(['create'], { email: 'ops@example.com', password: 'a long passphrase' }, process.env)
 */
export async function adminCommand(
  positional: string[],
  flags: Flags,
  env: Record<string, string | undefined>,
  io: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream } = { stdin: process.stdin, stdout: process.stdout },
  /** The project's configuration, when the CLI has found it (else read from `env`). */
  projectConfig?: Config,
): Promise<string> {
  const action = positional[0];
  if ((action !== 'create' && action !== 'set-password') || typeof flags.email !== 'string') throw new CliError(ADMIN_USAGE);
  const config: Config =
    projectConfig ?? loadConfig(env, { dataDir: typeof flags['data-dir'] === 'string' ? flags['data-dir'] : undefined });
  const password = typeof flags.password === 'string' ? flags.password : await askPassword(io.stdin, io.stdout);
  try {
    adminPassword(password);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const db = await openDatabase(config).catch((err) => {
    if (err instanceof DataDirLockedError) {
      throw new CliError(`${err.message} Stop it first, or set ADMIN_EMAIL and ADMIN_PASSWORD for its next start.`);
    }
    throw new CliError(`cannot open the database: ${(err as Error).message}`);
  });
  try {
    await migrateSystem(db);
    const admins = createAdminService({
      db,
      clock: systemClock,
      hasher: createArgon2Hasher(config.auth.argon2),
      sessions: createAdminSessions({ db, clock: systemClock }),
    });
    if (action === 'create') {
      const { admin, created } = await admins.upsert(flags.email, password);
      return created ? `admin ${admin.email} created` : `admin ${admin.email} existed: its password is set`;
    }
    if (!(await admins.setPassword(flags.email, password))) {
      throw new CliError(`no admin ${String(flags.email).trim().toLowerCase()}: create it with plinth admin create --email …`);
    }
    return `password of ${String(flags.email).trim().toLowerCase()} set; its console sessions ended`;
  } catch (err) {
    if (err instanceof ApiError) throw new CliError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}
