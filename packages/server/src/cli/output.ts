/**
 * What the CLI writes besides a command's own output: failures as one line on stderr
 * (`plinth: <cause and fix>`) and the line naming the project a command acts on.
 */

/** Ends the process with one line on stderr: `plinth: <message>` (exit 2: the command line was wrong). */
export function fail(message: string, code = 1): never {
  process.stderr.write(`plinth: ${message}\n`);
  process.exit(code);
}

/** A line on stderr, so that stdout keeps only what a script reads (`--json`, generated types). */
export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}
