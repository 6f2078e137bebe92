/** `plinth db reset` and `plinth db diff`: the subcommands of `plinth db` (db-reset.ts, db-diff.ts). */
import type { CommandContext } from './context.js';
import { fail } from './output.js';

export async function run(context: CommandContext): Promise<void> {
  const [sub] = context.args.positional;
  if (sub === 'reset') return (await import('./db-reset.js')).run(context);
  if (sub === 'diff') return (await import('./db-diff.js')).run(context);
  fail(
    `plinth db ${sub ?? ''}: it takes reset or diff (plinth db reset [--yes], plinth db diff [name] [--dry-run])`.replace('db :', 'db:'),
    2,
  );
}
