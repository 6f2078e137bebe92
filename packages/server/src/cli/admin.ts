/**
 * `plinth admin create|set-password --email E [--password P]`: console admins. While the
 * embedded server holds the database the change goes through it (POST /api/v1/admins), as
 * `plinth sql` does; otherwise it is written to the database directly (admin/cli.ts).
 */
import { ADMIN_USAGE, adminCommand, askPassword, CliError } from '../admin/index.js';
import type { Args } from './args.js';
import type { CommandContext } from './context.js';
import { fail } from './output.js';
import { callServer, serverOf } from './running.js';

export function check(args: Args): void {
  const action = args.positional[0];
  if ((action !== 'create' && action !== 'set-password') || typeof args.flags.email !== 'string') fail(ADMIN_USAGE);
}

export async function run({ args, config }: CommandContext): Promise<void> {
  const action = args.positional[0];
  const email = String(args.flags.email);
  const server = serverOf(config);
  if (!server) {
    const line = await adminCommand(args.positional, args.flags, process.env, undefined, config).catch((err) =>
      err instanceof CliError ? fail(err.message) : Promise.reject(err),
    );
    process.stdout.write(`${line}\n`);
    return;
  }
  const password =
    typeof args.flags.password === 'string'
      ? args.flags.password
      : await askPassword(process.stdin, process.stdout).catch((err) =>
          err instanceof CliError ? fail(err.message) : Promise.reject(err),
        );
  const path = action === 'create' ? '/api/v1/admins' : '/api/v1/admins/password';
  const { status, body } = await callServer(config, server, 'POST', path, { email, password });
  const who = email.trim().toLowerCase();
  if (status === 404 && action === 'set-password') fail(`no admin ${who}: create it with plinth admin create --email …`);
  if (status >= 400) fail(String(body.message ?? `the server answered HTTP ${status}`));
  if (action === 'set-password') process.stdout.write(`password of ${who} set; its console sessions ended\n`);
  else process.stdout.write(status === 201 ? `admin ${who} created\n` : `admin ${who} existed: its password is set\n`);
}
