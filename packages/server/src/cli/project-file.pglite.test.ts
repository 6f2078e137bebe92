import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth, spawnIn, waitHealthy } from '../../test/process.js';

// A project whose auth settings and buckets are all in plinth.json, started by `plinth start`
// on an empty data dir (issue 33): it comes up complete, and the API refuses managed keys only.
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-file-'));
  dirs.push(d);
  return d;
};

const FILE = {
  auth: {
    min_password_length: 12,
    allowed_redirect_urls: ['http://localhost:3000/reset'],
    password_reset_url: 'http://localhost:3000/reset',
    providers: { github: { enabled: true, client_id: 'Iv1.abc', client_secret: 'env(GITHUB_SECRET)' } },
  },
  storage: { buckets: { avatars: { public: true, allowed_mime_types: ['image/*'] }, docs: {} } },
};

describe('plinth start with settings in plinth.json', () => {
  it('an empty data dir comes up with every setting and bucket; a managed key is 409, an unmanaged one is saved', async () => {
    const cwd = tmp();
    const port = await freePort();
    writeFileSync(join(cwd, 'plinth.json'), JSON.stringify({ port, ...FILE }));
    // The secret comes from the project's .env.
    writeFileSync(join(cwd, '.env'), 'GITHUB_SECRET=from-dotenv\n');
    const server = spawnIn(cwd, ['start'], { LOG_LEVEL: 'warn' });
    const out = () => server.output();
    try {
      await waitHealthy(`http://127.0.0.1:${port}`, 60_000).catch((err) => {
        throw new Error(`${err.message}: ${out()}`);
      });
      const sk = JSON.parse((await runPlinth(['keys', '--json'], { cwd })).stdout).secret_key;
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${sk}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
      const auth = await (await call('GET', '/api/v1/settings/auth')).json();
      expect(auth).toMatchObject({ min_password_length: 12, password_reset_url: 'http://localhost:3000/reset' });
      expect(auth.providers.github).toMatchObject({ enabled: true, client_id: 'Iv1.abc' });
      expect(auth.managed_by).toBe(join(cwd, 'plinth.json'));
      const buckets = await (await call('GET', '/api/v1/storage/buckets')).json();
      expect(buckets.map((b: { name: string; public: boolean }) => [b.name, b.public])).toEqual([
        ['avatars', true],
        ['docs', false],
      ]);
      const refused = await call('PATCH', '/api/v1/settings/auth', { min_password_length: 8 });
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({
        code: 'managed_by_config',
        message: `The setting min_password_length is managed by ${join(cwd, 'plinth.json')}; change it there.`,
      });
      const saved = await call('PATCH', '/api/v1/settings/auth', { session_duration_seconds: 7200 });
      expect(saved.status).toBe(200);
      expect((await saved.json()).session_duration_seconds).toBe(7200);
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);

  it('a secret written in the file, or a variable that is not set, stops the start with one line', async () => {
    const cwd = tmp();
    const literal = { auth: { providers: { github: { enabled: true, client_id: 'x', client_secret: 'hunter2' } } } };
    writeFileSync(join(cwd, 'plinth.json'), JSON.stringify(literal));
    const r = await runPlinth(['start', '--port', String(await freePort())], { cwd });
    expect([r.code, r.stderr]).toEqual([
      1,
      `plinth: config: ${join(cwd, 'plinth.json')}: auth.providers.github.client_secret must not hold the secret itself; write "env(NAME)" and set NAME in the environment or the project's .env\n`,
    ]);
    writeFileSync(join(cwd, 'plinth.json'), JSON.stringify({ auth: FILE.auth }));
    const unset = await runPlinth(['start', '--port', String(await freePort())], { cwd });
    expect(unset.code).toBe(1);
    expect(unset.stderr.split('\n').at(-2)).toBe(
      `plinth: config: ${join(cwd, 'plinth.json')}: auth.providers.github.client_secret reads the variable GITHUB_SECRET, which is not set; set it in the environment or the project's .env`,
    );
  }, 120_000);
});
