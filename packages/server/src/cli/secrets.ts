/**
 * `plinth secrets set NAME=value… [--env-file F] | set NAME (value on stdin) | list | unset NAME…`:
 * the functions' secrets, what a function gets as `ctx.secrets` (docs/functions.md "Secrets").
 * - Without `--url`: the functions folder's `.env` (`functions/.env`, or
 *   `supabase/functions/.env` in a Supabase folder, where the Supabase CLI reads them), which
 *   `plinth dev` reloads the functions on and `plinth start` reads when a function is loaded.
 * - With `--url U --key K` (or PLINTH_SECRET_KEY), as `plinth functions deploy`: that server's
 *   admin API, which stores each secret sealed in its database (`plinth.function_secrets`) for
 *   every instance; no project folder is needed.
 * Values are write-only: `list` prints the names, nothing prints or logs a value. As with
 * `supabase secrets set`, a value may be given as NAME=value, but the command line is visible to
 * the machine's other users (`ps`) while it runs and stays in the shell's history: `--env-file`
 * or stdin keep it out of both.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseDotenv } from '../config/index.js';
import { functionsFolder } from '../functions/index.js';
import { type Args, flagValue, UsageError } from './args.js';
import { type CommandContext, shown } from './context.js';
import { fail } from './output.js';
import { adminRequest, type Remote, remoteOf } from './remote.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A refused change: one line. */
export class SecretsProblem extends Error {}

/** A value as a `.env` line keeps it (parseDotenv's reading: outer quotes dropped, no escapes). */
function line(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new SecretsProblem(`the value of ${name} has a line break; a secret is one line`);
  return `${name}=${/^[^\s"'#]*$/.test(value) ? value : `"${value}"`}`;
}

/**
 * The file's secrets after setting `values` and removing `unset` (other lines, comments
 * included, stay as they were).
 * @example updateSecrets('A=1\n', { B: '2' }, []) // 'A=1\nB=2\n'
 */
export function updateSecrets(text: string, values: Record<string, string>, unset: string[]): string {
  for (const name of [...Object.keys(values), ...unset])
    if (!NAME.test(name)) throw new SecretsProblem(`"${name}" is not a variable name (letters, digits and _, not starting with a digit)`);
  const done = new Set<string>();
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(raw);
    const name = m && !raw.trim().startsWith('#') ? m[1] : null;
    if (name && unset.includes(name)) continue;
    if (name && Object.hasOwn(values, name)) {
      if (!done.has(name)) out.push(line(name, values[name]));
      done.add(name);
      continue;
    }
    out.push(raw);
  }
  while (out.length && out[out.length - 1] === '') out.pop();
  for (const [name, value] of Object.entries(values)) if (!done.has(name)) out.push(line(name, value));
  return out.length ? `${out.join('\n')}\n` : '';
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

const SUBCOMMANDS = ['set', 'list', 'unset'];

/** The command line's mistakes, before a project or a server is looked for (one line, exit 2). */
export function check(args: Args): void {
  const [sub, ...rest] = args.positional;
  if (sub === undefined || !SUBCOMMANDS.includes(sub))
    throw new UsageError(`plinth secrets knows set, list and unset, not "${sub ?? ''}" (plinth secrets set NAME=value)`);
  if (args.flags['env-file'] !== undefined && sub !== 'set')
    throw new UsageError(`--env-file goes with plinth secrets set (plinth secrets set --env-file .env.production)`);
  if (args.flags.key !== undefined && args.flags.url === undefined)
    throw new UsageError(
      `--key is the secret key of the server named by --url: add --url https://… (without --url the secrets are the local functions/.env)`,
    );
  if (sub === 'set' && !rest.length && args.flags['env-file'] === undefined)
    throw new UsageError('plinth secrets set needs NAME=value (or NAME with the value on stdin, or --env-file F)');
  if (sub === 'unset' && !rest.length) throw new UsageError('plinth secrets unset needs the names to remove: plinth secrets unset NAME');
  for (const name of sub === 'unset' ? rest : [])
    if (!NAME.test(name)) throw new UsageError(`"${name}" is not a secret's name (letters, digits and _, not starting with a digit)`);
  if (sub === 'list' && rest.length) throw new UsageError(`plinth secrets list takes no names (it lists them all), not "${rest[0]}"`);
}

/** The values `set` was given: the `--env-file`'s, then NAME=value words over them, or one NAME's from stdin. */
async function givenValues(args: Args, words: string[], cwd: string): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  const envFile = flagValue(args, 'env-file');
  if (envFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(resolve(cwd, envFile), 'utf8');
    } catch (err) {
      fail(
        `cannot read --env-file ${envFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give the path of a .env file`,
        2,
      );
    }
    Object.assign(values, parseDotenv(text));
    if (!Object.keys(values).length) fail(`--env-file ${envFile} has no NAME=value lines`, 2);
  }
  for (const arg of words) {
    const eq = arg.indexOf('=');
    if (eq > 0) values[arg.slice(0, eq)] = arg.slice(eq + 1);
    else if (words.length === 1 && envFile === undefined) values[arg] = await readStdin();
    else fail(`"${arg}" has no value: write NAME=value, or set one NAME with its value on stdin`, 2);
  }
  for (const name of Object.keys(values))
    if (!NAME.test(name)) fail(`"${name}" is not a variable name (letters, digits and _, not starting with a digit)`, 2);
  return values;
}

/** The secrets' names on a server (its stored ones and its own folder's .env). */
async function remoteNames(t: Remote): Promise<string[]> {
  return ((await adminRequest(t, 'GET', '/function-secrets')) as Array<{ name: string }>).map((s) => s.name);
}

/** `set`, `list`, `unset` against a server's admin API (each value stored sealed there). */
async function onServer(t: Remote, sub: string, words: string[], values: Record<string, string>): Promise<void> {
  if (sub === 'list') {
    const names = await remoteNames(t);
    process.stdout.write(names.length ? `${names.join('\n')}\n` : `no secrets on ${t.url}: plinth secrets set NAME=value --url ${t.url}\n`);
  } else if (sub === 'set') {
    for (const [name, value] of Object.entries(values)) await adminRequest(t, 'PUT', `/function-secrets/${name}`, { value });
    process.stdout.write(`set ${Object.keys(values).join(', ')} on ${t.url}\n`);
  } else {
    const known = new Set(await remoteNames(t));
    const missing = words.filter((n) => !known.has(n));
    const none = (names: string[]) => `no secret ${names.join(', ')} on ${t.url} (plinth secrets list --url ${t.url} names them)`;
    if (missing.length) fail(none(missing));
    for (const name of words)
      await adminRequest(t, 'DELETE', `/function-secrets/${name}`, undefined, (e) => (e.code === 'not_found' ? none([name]) : undefined));
    process.stdout.write(`unset ${words.join(', ')} on ${t.url}\n`);
  }
}

export async function run(ctx: CommandContext): Promise<void> {
  const { args, config, cwd } = ctx;
  check(args);
  const [sub = '', ...words] = args.positional;
  const remote = remoteOf(ctx);
  const project = config.project;
  if (!remote && !project)
    fail(
      'plinth secrets needs a project folder (plinth.json, or a Supabase folder): run it there, or name a server with --url U --key K',
      2,
    );
  const values = sub === 'set' ? await givenValues(args, words, cwd) : {};
  if (remote) return onServer(remote, sub, words, values);
  if (!project) return;
  const folder = functionsFolder(project.root, Boolean(project.supabase));
  const file = join(folder.dir, '.env');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const save = (next: string) => {
    mkdirSync(folder.dir, { recursive: true });
    writeFileSync(file, next, { mode: 0o600 });
  };
  try {
    if (sub === 'list') {
      const names = Object.keys(parseDotenv(text)).sort();
      process.stdout.write(names.length ? `${names.join('\n')}\n` : `no secrets in ${shown(file, cwd)}: plinth secrets set NAME=value\n`);
    } else if (sub === 'set') {
      save(updateSecrets(text, values, []));
      process.stdout.write(`set ${Object.keys(values).join(', ')} in ${shown(file, cwd)}\n`);
    } else {
      const missing = words.filter((n) => !Object.hasOwn(parseDotenv(text), n));
      if (missing.length) fail(`no secret ${missing.join(', ')} in ${shown(file, cwd)} (plinth secrets list)`);
      save(updateSecrets(text, {}, words));
      process.stdout.write(`unset ${words.join(', ')} in ${shown(file, cwd)}\n`);
    }
  } catch (err) {
    if (err instanceof SecretsProblem) fail(err.message, 2);
    throw err;
  }
}
