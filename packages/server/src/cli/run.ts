/**
 * The CLI's one entry: parses the command line against the table (commands.ts), finds the
 * project the command acts on (context.ts), loads the command's module and runs it. Every
 * failure a user can meet ends as one line naming the cause and the fix (failures.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, findProject } from '../config/index.js';
import { type Args, parseArgs, UsageError } from './args.js';
import { COMMANDS } from './commands.js';
import { configFor, resolveProject } from './context.js';
import { fail, note } from './output.js';
import { makeProject } from './project-files.js';
import { isWorker } from './workers.js';

/** The configuration of this run once read, for the failure messages. */
let loaded: Config | null = null;

/**
 * `start` and `dev` outside any project, with nothing naming one (no --data-dir, no
 * DATABASE_URL): the working folder becomes the project, as `plinth init` would make it.
 */
async function madeHere(args: Args, cwd: string): Promise<void> {
  if (findProject(cwd) || args.flags['data-dir'] !== undefined || isWorker()) return;
  // The command line and the environment are checked first: a mistake there makes nothing.
  const probe = configFor(args, null);
  if (probe.databaseUrl || existsSync(join(cwd, 'plinth.json'))) return;
  const { wrote } = makeProject(cwd);
  note(`no Plinth project here: made one in ${cwd} (${wrote.join(', ')})`);
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const command = COMMANDS[args.command];
  const policy = typeof command.project === 'function' ? command.project(args.flags) : command.project;
  const cwd = process.cwd();
  const module = await command.load();
  module.check?.(args);
  if (policy === 'create') await madeHere(args, cwd);
  // A worker of `start --workers` says nothing: its primary named the project.
  const config = isWorker() ? configFor(args, findProject(cwd)) : resolveProject(args, policy, cwd);
  loaded = config;
  await module.run({ args, config, cwd });
}

/**
 * Every failure a user can meet is one line naming the cause and the fix (cli/failures.ts),
 * exit 2 for a wrong command line, 1 otherwise. Anything else is a bug: one line too, and
 * its stack only with LOG_LEVEL=debug.
 */
async function onFailure(err: unknown): Promise<void> {
  const { expectedFailure } = await import('./failures.js');
  const known = expectedFailure(err, { databaseUrl: loaded?.databaseUrl, port: loaded?.port, host: loaded?.host });
  const debug = async () => {
    if (process.env.LOG_LEVEL !== 'debug') return;
    const { createLogger } = await import('../app.js');
    createLogger('debug').error({ err }, 'plinth failed');
  };
  const unexpected = `unexpected error: ${(err as Error)?.message ?? String(err)} (LOG_LEVEL=debug prints its stack; please report it)`;
  if (isWorker()) {
    // The primary prints it, once for all the workers that met it.
    if (!known) await debug();
    process.send?.({ type: 'failed', message: known ?? unexpected, code: 1 }, () => process.exit(1));
    return;
  }
  if (known) fail(known, err instanceof UsageError ? 2 : 1);
  await debug();
  fail(unexpected);
}

/**
 * Runs the CLI on its arguments (`process.argv.slice(2)`).
 * @example runCli(['keys', '--json']);
 */
export function runCli(argv: string[]): void {
  main(argv).catch(onFailure);
}
