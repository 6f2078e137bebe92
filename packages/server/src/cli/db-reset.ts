/**
 * `plinth db reset [--yes]`: the embedded database dropped and made again, the system and the
 * app's migrations applied, then the seeds. The keys (keys.json) and stored files stay; console
 * admins, users and every row go. Refused on PostgreSQL and while a server runs on the data dir.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { acquireDataDirLock, DataDirLockedError, migrateApp, migrateSystem, openDatabase } from '../db/index.js';
import type { CommandContext } from './context.js';
import { migrationsDirOf } from './migrate.js';
import { fail } from './output.js';
import { closingAfter, serverOf } from './running.js';
import { applySeeds } from './seed.js';

async function confirmed(dataDir: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`Delete every row of the embedded database in ${dataDir} and make it again? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export async function run(context: CommandContext): Promise<void> {
  const { args, config } = context;
  if (config.databaseUrl)
    fail(
      `plinth db reset works on the embedded database only, and ${config.databaseUrlVariable} names a PostgreSQL: reset it with its own tools (dropdb, createdb), then plinth migrate`,
    );
  const server = serverOf(config);
  if (server)
    fail(`the embedded database in ${config.dataDir} is held by the running server (pid ${server.pid}); stop it, then run plinth db reset`);
  if (args.flags.yes !== true) {
    if (!process.stdin.isTTY) fail('plinth db reset deletes every row: with no terminal to ask, add --yes', 2);
    if (!(await confirmed(config.dataDir))) fail('nothing was reset');
  }
  const pgdata = resolve(config.dataDir, 'pgdata');
  let release: () => void;
  try {
    release = acquireDataDirLock(config.dataDir, pgdata);
  } catch (err) {
    if (err instanceof DataDirLockedError) fail(`${err.message}; stop what holds it, then run plinth db reset`);
    throw err;
  }
  try {
    rmSync(pgdata, { recursive: true, force: true });
  } finally {
    release();
  }
  const db = await openDatabase(config);
  const { applied, seeds } = await closingAfter(db, async () => {
    await migrateSystem(db);
    const applied = await migrateApp(db, migrationsDirOf({ ...context, args: { ...args, positional: [] } }));
    const seeds = config.project ? await applySeeds(db, config.project).catch((err: Error) => fail(err.message)) : [];
    return { applied, seeds };
  });
  process.stdout.write(
    `reset the embedded database in ${config.dataDir}; migrations applied: ${applied.length ? applied.join(', ') : 'none'}; seeds: ${
      seeds.length ? seeds.join(', ') : 'none'
    }\n`,
  );
}
