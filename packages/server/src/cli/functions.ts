/**
 * `plinth functions new <name>`: a function to start from (`functions/<name>.ts`, or
 * `supabase/functions/<name>/index.ts` in a Supabase folder, Supabase's own template);
 * `plinth functions list`: the project's functions with their files, URLs and schedules (docs/functions.md).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FUNCTION_NAME, type FunctionsFolder, functionsFolder, listFunctions } from '../functions/index.js';
import { iso, nextRun, parseCron } from '../lib/index.js';
import { type CommandContext, shown } from './context.js';
import { fail } from './output.js';

/** A refused `new` (bad name, existing function): one line, and the exit code. */
export class UsageProblem extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const PLINTH_TEMPLATE = (name: string) => `/**
 * ${name}: GET or POST /api/v1/functions/${name} (docs/functions.md). The caller is verified
 * (a project key or a user's access token); export const config = { verify_jwt: false } opens it.
 */
interface Ctx {
  user: { id: string; email: string | null } | null;
  role: 'anon' | 'authenticated' | 'service';
  secrets: Record<string, string | undefined>;
  waitUntil(promise: Promise<unknown>): void;
}

export default async (req: Request, ctx: Ctx): Promise<Response> => {
  const { name = 'world' } = req.method === 'POST' ? await req.json().catch(() => ({})) : {};
  return Response.json({ message: \`Hello \${name}!\`, user: ctx.user?.id ?? null });
};
`;

const SUPABASE_TEMPLATE = (
  name: string,
) => `// ${name}: POST /functions/v1/${name} (served by Plinth as by supabase functions serve; docs/functions.md)
import 'jsr:@supabase/functions-js/edge-runtime.d.ts';

Deno.serve(async (req) => {
  const { name } = await req.json();
  const data = { message: \`Hello \${name}!\` };
  return new Response(JSON.stringify(data), { headers: { 'Content-Type': 'application/json' } });
});
`;

/**
 * Writes a new function from the template of the folder's layout; a bad name or an existing
 * function is one line.
 * @example newFunction({ dir: '/app/functions', layout: 'plinth' }, 'hello') // '/app/functions/hello.ts'
 */
export function newFunction(folder: FunctionsFolder, name: string): string {
  if (!FUNCTION_NAME.test(name))
    throw new UsageProblem(
      `"${name}" is not a function name: use letters, digits, - and _, starting with a letter or digit (e.g. plinth functions new send-email)`,
      2,
    );
  if (listFunctions(folder).some((f) => f.name === name))
    throw new UsageProblem(`the function ${name} exists already (plinth functions list)`);
  const file = folder.layout === 'supabase' ? join(folder.dir, name, 'index.ts') : join(folder.dir, `${name}.ts`);
  if (existsSync(file)) throw new UsageProblem(`${file} exists already`, 1);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, folder.layout === 'supabase' ? SUPABASE_TEMPLATE(name) : PLINTH_TEMPLATE(name), { flag: 'wx' });
  return file;
}

/**
 * One line per function: its name, file and path.
 * @example functionLines({ dir: '/app/functions', layout: 'plinth' }, '/app') // ['hello  functions/hello.ts  /api/v1/functions/hello']
 */
export function functionLines(folder: FunctionsFolder, cwd: string, schedules: Record<string, string> = {}, now = Date.now()): string[] {
  const prefix = folder.layout === 'supabase' ? '/functions/v1/' : '/api/v1/functions/';
  // A schedule's expression and its next run (from the project file; the runs' state is the server's).
  const when = (name: string) => {
    const cron = schedules[name];
    if (!cron) return '';
    const next = nextRun(parseCron(cron), now);
    return `  schedule "${cron}" (next ${next === null ? 'never' : iso(next)})`;
  };
  const found = listFunctions(folder);
  const lines = found.map((f) => `${f.name}  ${shown(f.file, cwd)}  ${prefix}${f.name}${when(f.name)}`);
  // A schedule whose function has no file fails each run (function_not_found): say so here.
  for (const name of Object.keys(schedules).sort())
    if (!found.some((f) => f.name === name)) lines.push(`${name}  (no file: its runs fail until one is written)${when(name)}`);
  return lines;
}

export async function run({ args, config, cwd }: CommandContext): Promise<void> {
  const [sub, name] = args.positional;
  const project = config.project;
  if (!project) fail('plinth functions needs a project folder (plinth.json, or a Supabase folder): run it there, or plinth init first', 2);
  const folder = functionsFolder(project.root, Boolean(project.supabase));
  if (sub === 'new') {
    if (name === undefined) fail('plinth functions new needs a name: plinth functions new hello', 2);
    try {
      process.stdout.write(`${shown(newFunction(folder, name), cwd)}\n`);
    } catch (err) {
      if (err instanceof UsageProblem) fail(err.message, err.exitCode);
      throw err;
    }
  } else if (sub === 'list' || sub === undefined) {
    const schedules: Record<string, string> = {};
    for (const [n, f] of Object.entries(project.settings.functions ?? {})) if (f.schedule) schedules[n] = f.schedule;
    const lines = functionLines(folder, cwd, schedules);
    process.stdout.write(
      lines.length ? `${lines.join('\n')}\n` : `no functions in ${shown(folder.dir, cwd)}: plinth functions new <name> writes one\n`,
    );
  } else fail(`plinth functions knows new and list, not "${sub}" (plinth functions new hello, plinth functions list)`, 2);
}
