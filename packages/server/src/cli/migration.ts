/** `plinth migration new <name>`: an empty `<migrations_dir>/<timestamp>_<name>.sql` to write the change in. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CommandContext } from './context.js';
import { migrationsDirOf } from './migrate.js';
import { fail } from './output.js';

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A UTC timestamp that sorts as the migrations are applied: 20261128151500. */
export function migrationStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * Writes `<dir>/<timestamp>_<name>.sql` with `text`; a bad name or an existing file is one line.
 * @example newMigrationFile('/app/migrations', 'add_posts', '-- add_posts\n') // '/app/migrations/20261128151500_add_posts.sql'
 */
export function newMigrationFile(dir: string, name: string, text: string): string {
  if (!NAME.test(name))
    fail(`"${name}" is not a migration name: use lowercase letters, digits, _ and - (e.g. plinth migration new add_posts)`, 2);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${migrationStamp()}_${name}.sql`);
  if (existsSync(file)) fail(`${file} exists already: wait a second, or pick another name`);
  writeFileSync(file, text, { flag: 'wx' });
  return file;
}

export async function run(context: CommandContext): Promise<void> {
  const [sub, name] = context.args.positional;
  if (sub !== 'new' || name === undefined) fail('plinth migration needs new and a name: plinth migration new add_posts', 2);
  const file = newMigrationFile(migrationsDirOf({ ...context, args: { ...context.args, positional: [] } }), name, `-- ${name}\n`);
  process.stdout.write(`${relative(process.cwd(), file) || file}\n`);
}
