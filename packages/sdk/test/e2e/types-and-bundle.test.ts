import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTypes } from '../../src/gen/types.js';
import { type E2eServer, email, startServer } from './server.js';

// Item 11: the generator's output for the real server's OpenAPI compiles against the SDK's
// types. Item 12: the single-file bundle the server hosts is self-contained and importable.

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SDK_INDEX = join(ROOT, 'packages/sdk/src/index.js');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

let s: E2eServer;
let dir: string;

beforeAll(async () => {
  s = await startServer();
  dir = mkdtempSync(join(tmpdir(), 'plinth-e2e-'));
  const res = await s.t.sql(`
    create type mood as enum ('happy', 'sad');
    create table todos (
      id bigint generated always as identity primary key,
      title text not null,
      done boolean not null default false,
      tags text[],
      meta jsonb,
      mood mood,
      due timestamptz,
      user_id uuid default auth.uid()
    );
    create view open_todos as select id, title from todos where not done;`);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await s?.t.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function tsc(project: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(TSC, ['--noEmit', '-p', project], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * Type-checks `<name>.ts` (a small app) with the generated `database.types.ts` beside it,
 * with the settings of packages/sdk/tsconfig.typetest.json, from a directory outside the repository.
 */
async function compile(name: string, body: string[]): Promise<{ code: number; output: string }> {
  const sdk = relative(dir, SDK_INDEX).split('\\').join('/');
  const source = [
    `import { createClient } from '${sdk.startsWith('.') ? sdk : `./${sdk}`}';`,
    "import type { Database } from './database.types.js';",
    '',
    'type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;',
    'declare function assert<T extends true>(): void;',
    "const client = createClient<Database>('http://127.0.0.1:1', 'pk_test');",
    '',
    'export async function use() {',
    ...body.map((line) => `  ${line}`),
    '}',
    '',
  ].join('\n');
  writeFileSync(join(dir, `${name}.ts`), source);
  const project = join(dir, `tsconfig.${name}.json`);
  writeFileSync(
    project,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.base.json'),
      compilerOptions: { noEmit: true, composite: false, declaration: false, sourceMap: false, types: [], rootDir: '/' },
      files: ['database.types.ts', `${name}.ts`],
    }),
  );
  return tsc(project);
}

async function generate(): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/openapi.json`, { headers: { apikey: s.publicKey } });
  expect(res.status).toBe(200);
  const source = generateTypes((await res.json()) as object);
  writeFileSync(join(dir, 'database.types.ts'), source);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  return source;
}

const WRONG_COLUMN = "await client.from('todos').select('id,titel');";

describe('gen types (item 11)', () => {
  it('generates types from GET /api/v1/openapi.json that compile with createClient<Database>, and reject a wrong column', async () => {
    const source = await generate();
    // The schema of this test, as the app will see it.
    expect(source).toContain('      todos: {');
    expect(source).toContain("          mood: 'happy' | 'sad' | null;");
    expect(source).toMatch(/Insert: \{[^}]*\n {10}title: string;\n/);
    expect(source).toMatch(/ {6}open_todos: \{\n {8}Row: \{/);

    const uses = [
      "const { data } = await client.from('todos').select('id,title,done,tags,mood');",
      "if (data) assert<Equal<typeof data, { id: number; title: string; done: boolean; tags: string[] | null; mood: 'happy' | 'sad' | null }[]>>();",
      "await client.from('todos').insert({ title: 'only the required column' });",
      "const { data: open } = await client.from('open_todos').select('title');",
      'if (open) assert<Equal<typeof open, { title: string | null }[]>>();',
    ];
    const ok = await compile('app', [...uses, '// @ts-expect-error titel is not a column of todos', WRONG_COLUMN]);
    expect(ok.output).toBe('');
    expect(ok.code).toBe(0);

    const wrong = await compile('app', [...uses, WRONG_COLUMN]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.output).toContain('app.ts');
    expect(wrong.output).toContain('titel');
  });

  it('does not let an insert set a GENERATED ALWAYS identity column, which the server refuses', async () => {
    await generate();
    // What the server answers for such an insert: a typed app would only learn it at run time.
    const res = await s.t.app.inject({ method: 'POST', url: '/api/v1/db/todos', headers: s.t.as.service, payload: { id: 7, title: 'x' } });
    expect(res.statusCode).toBe(400);
    const checked = await compile('identity', [
      '// @ts-expect-error id is generated always: the database assigns it',
      "await client.from('todos').insert({ id: 7, title: 'x' });",
    ]);
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
  });
});

describe('the hosted bundle (item 12)', () => {
  it('GET /sdk/plinth.js is JavaScript any origin may import, with no import statements', async () => {
    const res = await fetch(`${s.url}/sdk/plinth.js`, { headers: { origin: 'https://some-app.example.org' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const code = await res.text();
    expect(code).toMatch(/export\s*\{[^}]*\bcreateClient\b/);
    expect(code).not.toMatch(/(^|[;}\n])\s*import\s*[\w{*'"]/);
    expect(code).not.toMatch(/\bimport\s*\(/);
    expect(code).not.toMatch(/\brequire\s*\(/);
  });

  it('the served file alone is a working SDK: imported from disk, it signs up against the server', async () => {
    const code = await (await fetch(`${s.url}/sdk/plinth.js`)).text();
    const file = join(dir, 'plinth.mjs');
    writeFileSync(file, code);
    const sdk = (await import(pathToFileURL(file).href)) as typeof import('../../src/index.js');
    const client = sdk.createClient(s.url, s.publicKey);
    const addr = email('bundle');
    const { data, error } = await client.auth.signUp({ email: addr, password: 'correct horse battery' });
    expect(error).toBeNull();
    expect(data!.session!.user.email).toBe(addr);
    expect((await client.auth.getUser()).data!.user.email).toBe(addr);
    client.auth.dispose();
  });
});
