/**
 * `plinth functions new <name>`: a function to start from (`functions/<name>.ts`, or
 * `supabase/functions/<name>/index.ts` in a Supabase folder, Supabase's own template);
 * `plinth functions list`: the project's functions with their files, URLs and schedules (docs/functions.md).
 * `deploy [name]`, `rollback <name> [--to N]`, `delete <name>`, `versions <name>`, `logs <name>`:
 * the admin API of a running server (functions/routes.ts), this project's own or `--url` with
 * `--key` (the secret key); `serve`: `plinth dev` (functions served and reloaded on save).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FUNCTION_NAME, type FunctionsFolder, folderSchedules, functionsFolder, listFunctions } from '../functions/index.js';
import { iso, nextRun, parseCron } from '../lib/index.js';
import { flagValue } from './args.js';
import { type CommandContext, shown } from './context.js';
import { fail } from './output.js';
import { adminRequest, type Remote, remoteOf } from './remote.js';
import { projectKeys, serverOf } from './running.js';

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

/** The server the admin subcommands talk to (`--url`, else this project's running one), and its secret key. */
async function target(ctx: CommandContext): Promise<Remote> {
  const remote = remoteOf(ctx);
  if (remote) return remote;
  const running = serverOf(ctx.config);
  if (!running)
    fail(
      `no server is running on ${shown(ctx.config.dataDir, ctx.cwd)}: start it (plinth dev) or name one with --url https://… --key sk_…`,
    );
  const key = flagValue(ctx.args, 'key') ?? process.env.PLINTH_SECRET_KEY ?? ctx.config.secretKey ?? undefined;
  return { url: running.url, key: key ?? (await projectKeys(ctx.config)).secretKey };
}

/** One request of the functions admin API; an error answer is one line naming its cause and the fix. */
const admin = (t: Remote, method: string, path: string, body?: unknown) => adminRequest(t, method, `/functions${path}`, body);

/** The schedules of the project file and the functions' config.json (a wrong one fails with its line). */
function projectSchedules(ctx: CommandContext, folder: FunctionsFolder): Record<string, string> {
  const project = ctx.config.project;
  if (!project) return {};
  const fromProject: Record<string, string> = {};
  for (const [n, f] of Object.entries(project.settings.functions ?? {})) if (f.schedule) fromProject[n] = f.schedule;
  try {
    return folderSchedules(folder, fromProject, project.root);
  } catch (err) {
    fail((err as Error).message.replace(/^config: /, ''));
  }
}

/**
 * `plinth functions deploy [name]`: each function (or the one named) bundled here and sent as its
 * next version, with its schedule (config.json or plinth.json), which the server runs from then on.
 */
async function deploy(ctx: CommandContext, folder: FunctionsFolder, name: string | undefined): Promise<void> {
  const all = listFunctions(folder);
  const schedules = projectSchedules(ctx, folder);
  const chosen = name === undefined ? all : all.filter((f) => f.name === name);
  if (chosen.length === 0)
    fail(
      name === undefined
        ? `no functions in ${shown(folder.dir, ctx.cwd)} to deploy: plinth functions new <name> writes one`
        : `no function ${name} in ${shown(folder.dir, ctx.cwd)} (plinth functions list names them)`,
    );
  const t = await target(ctx);
  const { BundleError, bundleCode, DEPLOYED_RUNTIME } = await import('../functions/index.js');
  for (const f of chosen) {
    let code: Uint8Array;
    try {
      ({ code } = await bundleCode(f.file, f.name, DEPLOYED_RUNTIME));
    } catch (err) {
      if (err instanceof BundleError) fail(`${f.name} did not build: ${err.message.split('\n')[0]} (fix it, then deploy again)`);
      throw err;
    }
    const schedule = schedules[f.name] ?? null;
    const out = (await admin(t, 'PUT', `/${f.name}`, { bundle: Buffer.from(code).toString('utf8'), layout: folder.layout, schedule })) as {
      version: number;
      started: boolean;
    };
    process.stdout.write(`${f.name}  version ${out.version}  deployed to ${t.url}${schedule ? `  schedule ${schedule}` : ''}\n`);
    if (!out.started)
      fail(
        `${f.name} version ${out.version} is live but did not start (its calls answer 500 function_error): the server's log has the cause; fix it and deploy again, or plinth functions rollback ${f.name}`,
      );
  }
}

interface CallRow {
  at: string;
  version: number | null;
  trigger: string;
  status: number;
  code: string | null;
  duration_ms: number;
  logs: string;
}

/**
 * The lines of `plinth functions logs`: one per call, oldest first, its console output indented.
 * @example callLines([{ at: '2026-01-01T00:00:00.000Z', version: 2, trigger: 'request', status: 200, code: null, duration_ms: 3.1, logs: 'hi' }])
 */
export function callLines(calls: CallRow[]): string[] {
  const out: string[] = [];
  for (const c of [...calls].reverse()) {
    out.push(
      `${c.at}  ${c.version === null ? 'file' : `v${c.version}`}  ${c.status}${c.code ? ` ${c.code}` : ''}  ${c.duration_ms} ms  ${c.trigger}`,
    );
    for (const line of c.logs ? c.logs.split('\n') : []) out.push(`    ${line}`);
  }
  return out;
}

async function manage(ctx: CommandContext, sub: string, name: string | undefined): Promise<void> {
  if (name === undefined) fail(`plinth functions ${sub} needs a function's name: plinth functions ${sub} hello`, 2);
  if (!FUNCTION_NAME.test(name)) fail(`"${name}" is not a function name: letters, digits, - and _ (plinth functions list names them)`, 2);
  const t = await target(ctx);
  if (sub === 'rollback') {
    const raw = flagValue(ctx.args, 'to');
    const to = raw === undefined ? undefined : Number(raw);
    if (to !== undefined && (!Number.isInteger(to) || to < 1))
      fail(`--to is a version number, not "${raw}" (plinth functions versions ${name})`, 2);
    const out = (await admin(t, 'POST', `/${name}/rollback`, to === undefined ? {} : { to })) as { version: number; from: number };
    process.stdout.write(`${name}  version ${out.version} is live (was ${out.from})\n`);
  } else if (sub === 'delete') {
    await admin(t, 'DELETE', `/${name}`);
    process.stdout.write(`${name}  deployed versions deleted (a file of the project folder of that name serves again)\n`);
  } else if (sub === 'versions') {
    const rows = (await admin(t, 'GET', `/${name}/versions`)) as Array<{
      version: number;
      created_at: string;
      size: number;
      live: boolean;
    }>;
    if (rows.length === 0) process.stdout.write(`${name} has no deployed versions (plinth functions deploy ${name})\n`);
    for (const r of rows) process.stdout.write(`v${r.version}  ${r.created_at}  ${r.size} bytes${r.live ? '  live' : ''}\n`);
  } else {
    const calls = (await admin(t, 'GET', `/${name}/calls`)) as CallRow[];
    const lines = callLines(calls);
    process.stdout.write(lines.length ? `${lines.join('\n')}\n` : `no recent calls of ${name} on ${t.url}\n`);
  }
}

export async function run(ctx: CommandContext): Promise<void> {
  const { args, config, cwd } = ctx;
  const [sub, name] = args.positional;
  if (sub === 'serve') {
    // The simplest honest serve: plinth dev serves the folder's functions and reloads them on save.
    const dev = await import('./dev.js');
    return dev.run(ctx);
  }
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
    const lines = functionLines(folder, cwd, projectSchedules(ctx, folder));
    process.stdout.write(
      lines.length ? `${lines.join('\n')}\n` : `no functions in ${shown(folder.dir, cwd)}: plinth functions new <name> writes one\n`,
    );
  } else if (sub === 'deploy') await deploy(ctx, folder, name);
  else if (sub === 'rollback' || sub === 'delete' || sub === 'versions' || sub === 'logs') await manage(ctx, sub, name);
  else
    fail(`plinth functions knows new, list, serve, deploy, rollback, delete, versions and logs, not "${sub}" (plinth help lists them)`, 2);
}
