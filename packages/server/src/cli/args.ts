/**
 * The CLI's command line: each command's flags are declared, so a mistyped flag, a flag
 * without its value or an unknown command is one line naming it, never a silent default. The
 * commands themselves are the table in commands.ts.
 */
import { COMMANDS } from './commands.js';

/** A mistake on the command line: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `value`: needs one; `optional`: takes the next word unless it is another flag; `bool`: none. */
export type FlagKind = 'value' | 'optional' | 'bool';

/** What parseArgs needs of a command: its flags and how many words it takes. */
export interface CommandShape {
  flags: Record<string, FlagKind>;
  /** How many positional words the command takes at most. */
  positional: number;
}

export interface Args {
  command: string;
  positional: string[];
  flags: Record<string, string | true>;
}

// A flag is `--name` or `--name=value`; anything else (a query such as "-- comment\nselect 1",
// a negative number) is a positional word.
const FLAG = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s;

/**
 * Parses `plinth <command> [words] [--flags]` against COMMANDS; throws UsageError.
 * @example parseArgs(['start', '--port', '9000']) // { command: 'start', positional: [], flags: { port: '9000' } }
 */
export function parseArgs(argv: string[], commands: Record<string, CommandShape> = COMMANDS): Args {
  const [first = 'help', ...rest] = argv;
  const command = first === '--help' || first === '-h' ? 'help' : first;
  const spec = Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (!spec) throw new UsageError(`unknown command "${command}"; the commands are ${Object.keys(commands).join(', ')} (plinth help)`);
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i];
    if (word === '--help' || word === '-h') return { command: 'help', positional: [command], flags: {} };
    const m = FLAG.exec(word);
    if (!m) {
      positional.push(word);
      continue;
    }
    const [, name, inline] = m;
    const kind = spec.flags[name];
    if (!kind) {
      const known = Object.keys(spec.flags).map((f) => `--${f}`);
      throw new UsageError(
        `unknown option --${name} for plinth ${command}${known.length ? `; it takes ${known.join(', ')}` : '; it takes no options'}`,
      );
    }
    if (kind === 'bool') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const next = rest[i + 1];
    const value = inline ?? (next !== undefined && !FLAG.test(next) ? rest[++i] : undefined);
    if (value === undefined || value === '') {
      if (kind === 'optional') {
        flags[name] = true;
        continue;
      }
      throw new UsageError(`--${name} needs a value, e.g. ${EXAMPLES[name] ?? `--${name} <value>`}`);
    }
    flags[name] = value;
  }
  if (positional.length > spec.positional) {
    throw new UsageError(`plinth ${command} does not take "${positional[spec.positional]}" (plinth help)`);
  }
  return { command, positional, flags };
}

const EXAMPLES: Record<string, string> = {
  port: '--port 8080',
  url: '--url http://localhost:8080',
  key: '--key sk_…',
  workers: '--workers 4 (or auto: one per core)',
  'data-dir': '--data-dir ./data',
  out: '--out src/database.ts',
};

/** The value of a flag that takes one, or undefined. */
export function flagValue(args: Args, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}
