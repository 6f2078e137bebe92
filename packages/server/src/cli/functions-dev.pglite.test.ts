import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, MAIN, runPlinth, spawnIn, waitHealthy } from '../../test/process.js';

// The loop as a user runs it, with the built CLI: plinth init, plinth functions new and list,
// plinth dev serving the function and reloading it on save.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('plinth functions and plinth dev', () => {
  it('functions new writes a function that plinth dev serves with the public key, and a save is served on the next call', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'plinth-fn-dev-'));
    dirs.push(cwd);
    const port = await freePort();
    expect((await runPlinth(['init', '--port', String(port)], { cwd })).code).toBe(0);
    const made = await runPlinth(['functions', 'new', 'hello'], { cwd });
    expect(made).toMatchObject({ code: 0, stdout: 'functions/hello.ts\n' });
    expect((await runPlinth(['functions', 'list'], { cwd })).stdout).toBe('hello  functions/hello.ts  /api/v1/functions/hello\n');
    expect((await runPlinth(['functions', 'new', 'hello'], { cwd })).stderr).toMatch(/the function hello exists already/);

    const dev = spawnIn(cwd, ['dev']);
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitHealthy(base, 60_000).catch((err) => {
        throw new Error(`${err.message}: ${dev.output()}`);
      });
      const keys = JSON.parse((await runPlinth(['keys', '--json'], { cwd })).stdout) as { public_key: string };
      const hello = await fetch(`${base}/api/v1/functions/hello`, {
        method: 'POST',
        headers: { apikey: keys.public_key },
        body: '{"name":"Ada"}',
      });
      expect(hello.status).toBe(200);
      expect(await hello.json()).toEqual({ message: 'Hello Ada!', user: null });

      writeFileSync(
        join(cwd, 'functions/hello.ts'),
        "export default (_req, ctx) => new Response('saved ' + (ctx.secrets.GREETING ?? 'none'));\n",
      );
      const body = async () => (await fetch(`${base}/api/v1/functions/hello`, { headers: { apikey: keys.public_key } })).text();
      await expect.poll(body, { timeout: 30_000 }).toBe('saved none');
      // A secret set from stdin (not in the shell's history), write-only: list names it, and the running dev reloads.
      expect((await runPlinth(['secrets', 'set', 'GREETING'], { cwd, stdin: 'hi there\n' })).code).toBe(0);
      const listed = await runPlinth(['secrets', 'list'], { cwd });
      expect(listed.stdout).toBe('GREETING\n');
      await expect.poll(body, { timeout: 30_000 }).toBe('saved hi there');
      await expect.poll(() => dev.output()).toMatch(/functions changed/);
    } finally {
      dev.proc.kill('SIGTERM');
      await dev.exited;
    }
  }, 120_000);

  it('a project without functions loads no esbuild (issue 10: idle memory), and one with a function does on its first call', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'plinth-fn-idle-'));
    dirs.push(cwd);
    writeFileSync(join(cwd, 'plinth.json'), '{}');
    const dist = join(MAIN, '..');
    // In the built server, as plinth start runs it: esbuild is CommonJS, so loading it shows in require's cache.
    const script = `
      import { createRequire } from 'node:module';
      const { buildApp } = await import(${JSON.stringify(join(dist, 'app.js'))});
      const { loadConfig, DEFAULT_PROJECT } = await import(${JSON.stringify(join(dist, 'config/index.js'))});
      const root = process.env.FN_ROOT;
      const project = { root, file: root + '/plinth.json', settings: { ...DEFAULT_PROJECT } };
      const p = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }, { dataDir: root + '/data', port: 0, project }, root) });
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/esbuild/'));
      const before = await p.app.inject({ url: '/api/v1/functions/hello', headers: { apikey: p.keys.publicKey } });
      const idle = loaded();
      require('node:fs').mkdirSync(root + '/functions');
      require('node:fs').writeFileSync(root + '/functions/hello.ts', 'export default () => new Response("hi")');
      const after = await p.app.inject({ url: '/api/v1/functions/hello', headers: { apikey: p.keys.publicKey } });
      console.log(JSON.stringify({ before: before.statusCode, idle, after: after.body, loaded: loaded() }));
      await p.close();`.replace(/require\('node:fs'\)/g, "(await import('node:fs'))");
    writeFileSync(join(cwd, 'probe.mjs'), script);
    const { stdout } = await promisify(execFile)(process.execPath, [join(cwd, 'probe.mjs')], {
      timeout: 60_000,
      env: { ...process.env, FN_ROOT: cwd },
    });
    expect(JSON.parse(stdout.trim().split('\n').pop() ?? '')).toEqual({ before: 404, idle: false, after: 'hi', loaded: true });
  }, 120_000);
});
