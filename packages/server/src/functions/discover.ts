/**
 * Where a project's functions are, by name: `functions/<name>.ts` or `functions/<name>/index.ts`
 * in a Plinth project folder, `supabase/functions/<name>/index.ts` in a Supabase one (Supabase's
 * layout: `_shared` and other names starting with `_` or `.` are not functions). Nothing here
 * reads a file's content: a project without a functions folder costs a failed `stat`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CronError, parseCron } from '../lib/index.js';

/** A function's name as it appears in the URL (Supabase's slugs: letters, digits, `-` and `_`). */
export const FUNCTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

const EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];

export interface FunctionsFolder {
  /** The folder the functions live in. */
  dir: string;
  /** `supabase`: Supabase's layout (`<name>/index.ts`, Deno.serve, `npm:` specifiers). */
  layout: 'plinth' | 'supabase';
}

/**
 * The functions folder of a project root.
 * @example functionsFolder('/app', false) // { dir: '/app/functions', layout: 'plinth' }
 */
export function functionsFolder(root: string, supabase: boolean): FunctionsFolder {
  return supabase ? { dir: join(root, 'supabase', 'functions'), layout: 'supabase' } : { dir: join(root, 'functions'), layout: 'plinth' };
}

/**
 * The entry file of the function `name`, or null when there is none.
 * @example findFunction({ dir: '/app/functions', layout: 'plinth' }, 'hello') // '/app/functions/hello.ts'
 */
export function findFunction(folder: FunctionsFolder, name: string): string | null {
  if (!FUNCTION_NAME.test(name)) return null;
  const candidates = EXTENSIONS.map((e) => join(folder.dir, name, `index${e}`));
  if (folder.layout === 'plinth') candidates.unshift(...EXTENSIONS.map((e) => join(folder.dir, `${name}${e}`)));
  for (const file of candidates) if (isFile(file)) return file;
  return null;
}

/**
 * Every function of the folder, by name, sorted.
 * @example listFunctions(functionsFolder('/app', false)) // [{ name: 'hello', file: '/app/functions/hello.ts' }]
 */
export function listFunctions(folder: FunctionsFolder): Array<{ name: string; file: string }> {
  if (!existsSync(folder.dir)) return [];
  const names = new Set<string>();
  for (const entry of readdirSync(folder.dir, { withFileTypes: true })) {
    if (entry.isDirectory()) names.add(entry.name);
    else if (folder.layout === 'plinth') {
      const ext = EXTENSIONS.find((e) => entry.name.endsWith(e) && !entry.name.endsWith(`.d${e}`));
      if (ext) names.add(entry.name.slice(0, -ext.length));
    }
  }
  const out: Array<{ name: string; file: string }> = [];
  for (const name of [...names].sort()) {
    const file = findFunction(folder, name);
    if (file) out.push({ name, file });
  }
  return out;
}

/**
 * The schedules of the functions' own `config.json` (`functions/<name>/config.json`, or
 * `supabase/functions/<name>/config.json`: `{"schedule": "*\/5 * * * *"}`), beside those of the
 * project file (`fromProject`, plinth.json's `functions.<name>.schedule`). A wrong file, a wrong
 * expression or a schedule given in both places throws an Error `config: …` (one line at start).
 * @example folderSchedules(functionsFolder('/app', false), {}, '/app') // { cleanup: '0 3 * * *' }
 */
export function folderSchedules(folder: FunctionsFolder, fromProject: Record<string, string>, root: string): Record<string, string> {
  const out: Record<string, string> = { ...fromProject };
  if (!existsSync(folder.dir)) return out;
  for (const entry of readdirSync(folder.dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !FUNCTION_NAME.test(entry.name)) continue;
    const file = join(folder.dir, entry.name, 'config.json');
    if (!isFile(file)) continue;
    const where = relative(root, file);
    const bad = (what: string) => new Error(`config: ${where}: ${what}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw bad(`not JSON (${(err as Error).message}); write {"schedule": "*/5 * * * *"}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw bad('must be an object such as {"schedule": "0 3 * * *"}');
    for (const [k, v] of Object.entries(parsed)) {
      if (k !== 'schedule') throw bad(`"${k}" is not a function setting of config.json (schedule; the rest is the module's config export)`);
      if (typeof v !== 'string') throw bad('schedule must be a cron expression such as "*/5 * * * *"');
      try {
        parseCron(v);
      } catch (err) {
        if (err instanceof CronError) throw bad(`schedule: ${err.message}`);
        throw err;
      }
      if (fromProject[entry.name] !== undefined)
        throw bad(`schedule: plinth.json's functions.${entry.name}.schedule gives one too; keep one of the two`);
      out[entry.name] = v;
    }
  }
  return out;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
