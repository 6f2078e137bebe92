import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

export interface Spawned {
  proc: ChildProcess;
  url: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts `plinth <args>` from the built dist as a real process. */
export function spawnPlinth(args: string[], env: Record<string, string> = {}): Spawned {
  if (!existsSync(MAIN)) throw new Error('Build first: npm run build (the process tests run dist/main.js)');
  let out = '';
  let err = '';
  const proc = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.on('data', (d) => {
    out += d;
  });
  proc.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const port = args[args.indexOf('--port') + 1];
  return { proc, url: `http://127.0.0.1:${port}`, stdout: () => out, stderr: () => err, exited };
}

/** A `plinth` process run in a folder, as a terminal runs it: its stdout and stderr as one text. */
export interface InFolder {
  proc: ChildProcess;
  /** Everything it printed so far, both streams interleaved as they came. */
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `plinth <args>` from the built dist in `cwd` (the project it finds there), with only
 * PATH and `env` in its environment.
 * @example const s = spawnIn(dir, ['start']); await waitHealthy(url, 60_000); s.proc.kill('SIGTERM'); await s.exited;
 */
export function spawnIn(cwd: string, args: string[], env: Record<string, string> = {}): InFolder {
  let out = '';
  const proc = spawn(process.execPath, [MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.on('data', (d) => {
    out += d;
  });
  proc.stderr?.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

/** Polls `GET /health` until 200, or throws after `timeoutMs`. Returns the elapsed ms. */
export async function waitHealthy(url: string, timeoutMs: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return Date.now() - start;
    } catch {
      // not up yet
    }
    if (Date.now() - start > timeoutMs) throw new Error(`not healthy within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a finished `plinth` command printed, and how it exited. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `plinth <args>` from the built dist to its end: in `cwd` (whose `.env` it reads), with
 * only `env` and PATH in its environment, `stdin` written to it.
 * @example const { code, stderr } = await runPlinth(['keys', '--json'], { cwd: dir });
 */
export function runPlinth(args: string[], options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}): Promise<Finished> {
  if (!existsSync(MAIN)) throw new Error('Build first: npm run build (the process tests run dist/main.js)');
  const proc = spawn(process.execPath, [MAIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d) => {
    stdout += d;
  });
  proc.stderr?.on('data', (d) => {
    stderr += d;
  });
  proc.stdin?.end(options.stdin ?? '');
  return new Promise<Finished>((resolve) => proc.on('close', (code) => resolve({ code, stdout, stderr })));
}
