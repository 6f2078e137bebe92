/**
 * Where a project's functions are, by name: `functions/<name>.ts` or `functions/<name>/index.ts`
 * in a Plinth project folder, `supabase/functions/<name>/index.ts` in a Supabase one (Supabase's
 * layout: `_shared` and other names starting with `_` or `.` are not functions). Nothing here
 * reads a file's content: a project without a functions folder costs a failed `stat`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
