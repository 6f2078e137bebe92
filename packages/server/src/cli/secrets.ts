/**
 * `plinth secrets set NAME=value… | set NAME (value on stdin) | list | unset NAME…`: the
 * functions' secrets, kept in the functions folder's `.env` (`functions/.env`, or
 * `supabase/functions/.env` in a Supabase folder, where the Supabase CLI reads them); what a
 * function gets as `ctx.secrets` (docs/functions.md). Values are write-only here: `list`
 * prints the names, nothing prints a value. A running `plinth dev` reloads the functions when the
 * file changes; `plinth start` reads it when a function is first loaded.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDotenv } from '../config/index.js';
import { functionsFolder } from '../functions/index.js';
import { type CommandContext, shown } from './context.js';
import { fail } from './output.js';

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

export async function run({ args, config, cwd }: CommandContext): Promise<void> {
  const [sub, ...rest] = args.positional;
  const project = config.project;
  if (!project) fail('plinth secrets needs a project folder (plinth.json, or a Supabase folder): run it there', 2);
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
      if (!rest.length) fail('plinth secrets set needs NAME=value (or NAME, with the value on stdin)', 2);
      const values: Record<string, string> = {};
      for (const arg of rest) {
        const eq = arg.indexOf('=');
        if (eq > 0) values[arg.slice(0, eq)] = arg.slice(eq + 1);
        else if (rest.length === 1) values[arg] = await readStdin();
        else fail(`"${arg}" has no value: write NAME=value, or set one NAME with its value on stdin`, 2);
      }
      save(updateSecrets(text, values, []));
      process.stdout.write(`set ${Object.keys(values).join(', ')} in ${shown(file, cwd)}\n`);
    } else if (sub === 'unset') {
      if (!rest.length) fail('plinth secrets unset needs the names to remove', 2);
      const missing = rest.filter((n) => !Object.hasOwn(parseDotenv(text), n));
      if (missing.length) fail(`no secret ${missing.join(', ')} in ${shown(file, cwd)} (plinth secrets list)`);
      save(updateSecrets(text, {}, rest));
      process.stdout.write(`unset ${rest.join(', ')} in ${shown(file, cwd)}\n`);
    } else fail(`plinth secrets knows set, list and unset, not "${sub ?? ''}"`, 2);
  } catch (err) {
    if (err instanceof SecretsProblem) fail(err.message, 2);
    throw err;
  }
}
