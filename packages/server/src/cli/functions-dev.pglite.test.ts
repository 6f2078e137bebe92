import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth, spawnIn, waitHealthy } from '../../test/process.js';

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

      writeFileSync(join(cwd, 'functions/hello.ts'), "export default () => new Response('saved');\n");
      const body = async () => (await fetch(`${base}/api/v1/functions/hello`, { headers: { apikey: keys.public_key } })).text();
      await expect.poll(body, { timeout: 30_000 }).toBe('saved');
      expect(dev.output()).toMatch(/functions changed/);
    } finally {
      dev.proc.kill('SIGTERM');
      await dev.exited;
    }
  }, 120_000);
});
