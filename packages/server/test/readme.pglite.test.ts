import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './process.js';

// README.md as a newcomer meets it: on a fresh clone (of the committed tree), its quick start
// `npm ci && npm start` and then its walk-through, taken from README.md itself so the two
// cannot drift, run verbatim with bash, twice (every block must run again as it is); then the
// command blocks of docs/api.md and docs/storage.md. Then the server stops on SIGTERM and on
// SIGINT sent to the `npm start` process, as a process manager or a terminal would. (README's
// "Plinth in your app's folder" is run by package.pglite.test.ts.)
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'plinth-readme-'));
const clone = join(work, 'plinth');
const app = join(work, 'my-app');
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** Every ```sh block of a file of docs/. */
function docBlocks(file: string): string[] {
  return [...readFileSync(join(ROOT, 'docs', file), 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** The ```sh blocks of a `## ` section of README.md. */
function shellBlocks(section: string): string[] {
  const start = README.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`README.md has no section "${section}"`);
  const end = README.indexOf('\n## ', start + 4);
  const text = README.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

function bash(script: string, cwd: string, env: Record<string, string>, timeoutMs = 120_000) {
  const proc = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
  });
  proc.stderr.on('data', (d) => {
    out += d;
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

/** `npm start` as a process of its own (as a process manager runs it); resolves once it printed its banner. */
async function npmStart(env: Record<string, string>) {
  const command = 'npm start';
  const proc = spawn('npm', ['start'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
  });
  proc.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 240_000;
  while (!/Secret key:/.test(out)) {
    if (proc.exitCode !== null) throw new Error(`${command} exited ${proc.exitCode}:\n${out}`);
    if (Date.now() > deadline) throw new Error(`${command} printed no banner in 240 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, out: () => out, exited };
}

/** What a new TCP connection to the port meets: 'connected', or the error code. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('README.md on a fresh clone', () => {
  it('the quick start serves, the walk-through runs twice, the SDK installs, npm start stops on SIGTERM and SIGINT', async () => {
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    const port = await freePort();
    // The environment of a new terminal: nothing of this test run's PLINTH_*, DATABASE_URL, LOG_LEVEL.
    // (and not the node_modules/.bin that npx put on this process's PATH).
    const PATH = (process.env.PATH ?? '')
      .split(':')
      .filter((p) => !p.includes('node_modules'))
      .join(':');
    const env = { PATH, HOME: process.env.HOME ?? work, PORT: String(port), npm_config_fund: 'false' };

    // The quick start's first line, `npm ci && npm start`: npm ci by bash, npm start as its own
    // process, so that the signals below reach npm as they would from a process manager.
    const quickStart = shellBlocks('Quick start')[0].split('\n')[0];
    expect(quickStart).toMatch(/^npm ci && npm start\s+#/);
    const install = await bash('npm ci', clone, env, 300_000);
    expect(install.code, install.out).toBe(0);
    const first = await npmStart(env);
    // The banner's API line is the base URL the walk-through's $API (and createClient) take.
    expect(first.out()).toMatch(new RegExp(`^ {2}API: +http://localhost:${port}$`, 'm'));

    const walk = shellBlocks('Five minutes with Plinth');
    expect(walk.length).toBeGreaterThanOrEqual(3);
    const script = walk.join('\n');
    for (const run of [1, 2]) {
      const r = await bash(script, clone, env);
      expect(r.code, `run ${run}:\n${r.out}`).toBe(0);
      expect(r.out, `run ${run}`).not.toMatch(/internal_error|TypeError|Something went wrong/);
      expect(r.out, `run ${run}`).toMatch(/^\[\]/m); // anon sees nothing
      expect(r.out, `run ${run}`).toMatch(/"title":"write the README"/);
      expect(r.out, `run ${run}`).toMatch(/"user_id":"[0-9a-f-]{36}"/); // the secret key's view
      expect(r.out, `run ${run}`).toMatch(/^hello, file$/m); // the user's file, uploaded and read back
      expect(r.out, `run ${run}`).toMatch(/"access_token":"ey[^"]+".*"email":"grace-\d*@example\.com"/s); // magic link
      if (run === 2) expect(r.out).toMatch(/"code":"email_exists"/);
    }

    // The docs' command blocks in the same clone and terminal: docs/api.md's after the
    // walk-through's (they use its $API, $PK, $SK, $TOKEN and todos table); docs/storage.md's
    // sets up its own, and runs twice (it can be run again as it is). Not run: docs/api.md's
    // `npx openapi-typescript` (a tool from the npm registry, for the user's own project) and
    // the placeholder-key snippets docs/console.md shows the console's format with.
    const apiBlocks = docBlocks('api.md').filter((b) => !b.includes('npx openapi-typescript'));
    expect(apiBlocks.length).toBeGreaterThanOrEqual(5);
    const api = await bash([...walk, ...apiBlocks].join('\n'), clone, env);
    expect(api.code, api.out).toBe(0);
    expect(api.out).not.toMatch(/internal_error|Something went wrong/);
    expect(api.out).toMatch(/content-range: 0-\d+\/\d+/i);
    const [storage] = docBlocks('storage.md');
    for (const run of [1, 2]) {
      const r = await bash(storage, clone, env);
      expect(r.code, `docs/storage.md, run ${run}:\n${r.out}`).toBe(0);
      expect(r.out).toMatch(/"name":"[0-9a-f-]{36}\/me\.png"/);
      expect(r.out).toMatch(/^the same bytes came back$/m);
      if (run === 2) expect(r.out).toMatch(/"code":"bucket_exists"/);
    }

    // The SDK, installed the way the README says, in an app beside the clone.
    mkdirSync(app);
    const sdk = await bash(shellBlocks('The SDK in your app')[0], app, env);
    expect(sdk.code, sdk.out).toBe(0);
    expect(sdk.out).toMatch(/^function$/m);

    // SIGTERM to the npm process, as a process manager sends it: the server stops, the port
    // and the data dir are free.
    first.proc.kill('SIGTERM');
    await first.exited;
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(existsSync(join(clone, 'data', 'plinth.lock'))).toBe(false);
    expect(existsSync(join(clone, 'data', 'server.json'))).toBe(false);

    // Again (the data and keys are reused), stopped with SIGINT this time.
    const second = await npmStart(env);
    expect(second.out()).toContain(first.out().match(/Secret key: +(sk_\S+)/)?.[1]);
    second.proc.kill('SIGINT');
    await second.exited;
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(existsSync(join(clone, 'data', 'plinth.lock'))).toBe(false);
  }, 600_000);
});
