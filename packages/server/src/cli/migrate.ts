/** `plinth migrate [DIR]`: applies the project's migrations (or DIR's) once each, in name order. */
import { resolve } from 'node:path';
import { migrateApp, migrateSystem, openDatabase } from '../db/index.js';
import type { CommandContext } from './context.js';
import { fail } from './output.js';
import { closingAfter, serverOf } from './running.js';

/** The folder of the app's migrations: DIR, else the project's migrations_dir, else ./migrations. */
export function migrationsDirOf(context: CommandContext): string {
  const { args, config } = context;
  if (args.positional[0] !== undefined) return resolve(args.positional[0]);
  const project = config.project;
  return project ? resolve(project.root, project.settings.migrations_dir) : resolve('migrations');
}

export async function run(context: CommandContext): Promise<void> {
  const { args, config } = context;
  const dir = migrationsDirOf(context);
  const server = serverOf(config);
  if (server) {
    const restart = ['plinth start --migrate', args.positional[0]].filter(Boolean).join(' ');
    fail(
      `the embedded database in ${config.dataDir} is held by the running server (pid ${server.pid}); stop it, then run plinth migrate, or restart it with ${restart} (plinth dev applies new files as they appear)`,
    );
  }
  const db = await openDatabase(config);
  const applied = await closingAfter(db, async () => {
    await migrateSystem(db);
    return migrateApp(db, dir);
  });
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'nothing to apply\n');
}
