/** `plinth db reset`: the subcommands of `plinth db` (db-reset.ts). */
import type { CommandContext } from './context.js';
import { fail } from './output.js';

export async function run(context: CommandContext): Promise<void> {
  const [sub] = context.args.positional;
  if (sub === 'reset') return (await import('./db-reset.js')).run(context);
  fail(`plinth db ${sub ?? ''}: it takes reset (plinth db reset [--yes])`.replace('db :', 'db:'), 2);
}
