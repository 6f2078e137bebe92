/**
 * The command line below main.ts: the table of commands (commands.ts), their flags (args.ts),
 * the project each acts on (context.ts), failures as one line (failures.ts, loaded on failure).
 * Light on purpose: a command's own modules load only when it runs.
 */
export { type Args, flagValue, parseArgs, UsageError } from './args.js';
export { COMMANDS } from './commands.js';
export { runCli } from './run.js';
