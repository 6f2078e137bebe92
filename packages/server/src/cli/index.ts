/** The command line's parts below main.ts: the flags each command takes, and expected failures as one line. */
export { type Args, flagValue, parseArgs, UsageError } from './args.js';
export { expectedFailure } from './failures.js';
export { isWorker, runPrimary, tellPrimary, type WorkerMessage } from './workers.js';
