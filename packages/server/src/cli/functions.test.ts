import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findFunction, functionsFolder } from '../functions/index.js';
import { COMMANDS } from './commands.js';
import { functionLines, newFunction } from './functions.js';
import { updateSecrets } from './secrets.js';
import { parseDotenv } from '../config/index.js';

const dirs: string[] = [];
const project = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-fn-cli-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('plinth functions', () => {
  it('new writes functions/<name>.ts, which list then shows with its URL; a second new of the name is refused', () => {
    const root = project();
    const folder = functionsFolder(root, false);
    expect(functionLines(folder, root)).toEqual([]);
    const file = newFunction(folder, 'send-email');
    expect(file).toBe(join(root, 'functions', 'send-email.ts'));
    expect(readFileSync(file, 'utf8')).toContain('export default async (req: Request, ctx: Ctx)');
    expect(findFunction(folder, 'send-email')).toBe(file);
    mkdirSync(join(root, 'functions', 'hook'));
    newFunction({ ...folder, dir: join(root, 'functions', 'hook') }, 'index');
    expect(functionLines(folder, root)).toEqual([
      'hook  functions/hook/index.ts  /api/v1/functions/hook',
      'send-email  functions/send-email.ts  /api/v1/functions/send-email',
    ]);
    // The project file's schedules, with their next run; one naming no file is shown as such.
    const now = Date.parse('2026-06-01T10:07:00Z');
    expect(functionLines(folder, root, { 'send-email': '*/15 * * * *', cleanup: '0 3 * * *' }, now)).toEqual([
      'hook  functions/hook/index.ts  /api/v1/functions/hook',
      'send-email  functions/send-email.ts  /api/v1/functions/send-email  schedule "*/15 * * * *" (next 2026-06-01T10:15:00.000Z)',
      'cleanup  (no file: its runs fail until one is written)  schedule "0 3 * * *" (next 2026-06-02T03:00:00.000Z)',
    ]);
    expect(() => newFunction(folder, 'send-email')).toThrow(/exists already/);
    expect(() => newFunction(folder, '../etc')).toThrow(/not a function name/);
  });

  it("new in a Supabase folder writes supabase/functions/<name>/index.ts from Supabase's template", () => {
    const root = project();
    const folder = functionsFolder(root, true);
    const file = newFunction(folder, 'hello-world');
    expect(file).toBe(join(root, 'supabase', 'functions', 'hello-world', 'index.ts'));
    expect(readFileSync(file, 'utf8')).toContain('Deno.serve(async (req) =>');
    expect(functionLines(folder, root)).toEqual(['hello-world  supabase/functions/hello-world/index.ts  /functions/v1/hello-world']);
  });

  it('is a command of the table, with its help line', () => {
    expect(COMMANDS.functions.help[0]).toMatch(/^functions new\|list\|serve\|deploy\|rollback\|delete\|versions\|logs /);
  });
});

describe('plinth secrets', () => {
  it("set adds or replaces a line of the functions folder's .env, quoting where the reading needs it; unset removes; others lines stay", () => {
    const before = '# for the functions\nSTRIPE_KEY=sk_old\nOTHER=1\n';
    const after = updateSecrets(before, { STRIPE_KEY: 'sk_new', GREETING: 'hello world' }, []);
    expect(after).toBe('# for the functions\nSTRIPE_KEY=sk_new\nOTHER=1\nGREETING="hello world"\n');
    expect(parseDotenv(after)).toEqual({ STRIPE_KEY: 'sk_new', OTHER: '1', GREETING: 'hello world' });
    expect(updateSecrets(after, {}, ['OTHER', 'GREETING'])).toBe('# for the functions\nSTRIPE_KEY=sk_new\n');
    expect(() => updateSecrets('', { 'BAD-NAME': 'x' }, [])).toThrow(/not a variable name/);
    expect(() => updateSecrets('', { KEY: 'two\nlines' }, [])).toThrow(/line break/);
  });
});
