/** `plinth init`: makes the working folder a project (plinth.json, migrations/, .gitignore) and says what to run next. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findProject, PROJECT_FILE } from '../config/index.js';
import { type Args, flagValue, UsageError } from './args.js';
import type { CommandContext } from './context.js';
import { fail } from './output.js';
import { makeProject } from './project-files.js';

export function check(args: Args): void {
  const portFlag = flagValue(args, 'port');
  if (portFlag !== undefined && (!/^\d+$/.test(portFlag) || Number(portFlag) > 65535)) {
    throw new UsageError(`--port must be a port number (0–65535), got "${portFlag}"`);
  }
}

export async function run({ args, cwd }: CommandContext): Promise<void> {
  if (existsSync(join(cwd, PROJECT_FILE))) fail(`${join(cwd, PROJECT_FILE)} exists already: this folder is a Plinth project`);
  const portFlag = flagValue(args, 'port');
  const outer = findProject(cwd);
  const { settings, wrote } = makeProject(cwd, {
    port: portFlag === undefined ? undefined : Number(portFlag),
    dataDir: flagValue(args, 'data-dir'),
  });
  const lines = [
    `Made a Plinth project in ${cwd}: ${wrote.join(', ')}`,
    ...(outer ? [`(inside the project ${outer.root}: commands run here act on this one now)`] : []),
    `  the embedded database will be in ${settings.data_dir}/ (or set ${settings.database_url_env} to a PostgreSQL URL), port ${settings.port}`,
    '',
    'Next:',
    `  npx plinth dev                              # the backend on http://localhost:${settings.port}, applying ${settings.migrations_dir}/*.sql as you add them`,
    '  npx plinth gen types --out src/database.ts  # the types of your tables, for createClient<Database>()',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
