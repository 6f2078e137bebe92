/**
 * The CLI's command line: each command's flags are declared, so a mistyped flag, a flag
 * without its value or an unknown command is one line naming it, never a silent default.
 */

/** A mistake on the command line: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `value`: needs one; `optional`: takes the next word unless it is another flag; `bool`: none. */
type FlagKind = 'value' | 'optional' | 'bool';

interface CommandSpec {
  flags: Record<string, FlagKind>;
  /** How many positional words the command takes at most. */
  positional: number;
}

const DATA_DIR = { 'data-dir': 'value' } as const;

export const COMMANDS: Record<string, CommandSpec> = {
  start: { flags: { port: 'value', migrate: 'optional', workers: 'value', ...DATA_DIR }, positional: 0 },
  keys: { flags: { json: 'bool', revoke: 'bool', ...DATA_DIR }, positional: 1 },
  sql: { flags: { ...DATA_DIR }, positional: Number.POSITIVE_INFINITY },
  migrate: { flags: { ...DATA_DIR }, positional: 1 },
  gen: { flags: { out: 'value', ...DATA_DIR }, positional: 1 },
  admin: { flags: { email: 'value', password: 'value', ...DATA_DIR }, positional: 1 },
  help: { flags: {}, positional: 1 },
};

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
export function parseArgs(argv: string[]): Args {
  const [first = 'help', ...rest] = argv;
  const command = first === '--help' || first === '-h' ? 'help' : first;
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command "${command}"; the commands are ${Object.keys(COMMANDS).join(', ')} (plinth help)`);
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
  workers: '--workers 4 (or auto: one per core)',
  'data-dir': '--data-dir ./data',
  out: '--out src/database.ts',
};

/** The value of a flag that takes one, or undefined. */
export function flagValue(args: Args, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}
