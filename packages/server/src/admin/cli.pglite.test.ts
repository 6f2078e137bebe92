import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth, spawnPlinth, waitHealthy } from '../../test/process.js';

// `plinth admin create|set-password` and the setup link of a first start, as real processes
// on an embedded data dir (this file runs in the PGlite suite only).

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-admin-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const plinth = (args: string[], stdin?: string) => runPlinth(args, { stdin });

async function login(url: string, email: string, password: string) {
  return fetch(`${url}/api/v1/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

describe('plinth admin', () => {
  it('a first start prints a one-time setup link; after `admin create` a start prints none and the admin signs in', async () => {
    const dir = tmp();
    const port = await freePort();
    const first = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    await waitHealthy(first.url, 60_000);
    expect(first.stdout()).toMatch(new RegExp(`First admin: http://localhost:${port}/console/setup\\?token=[\\w-]{43}`));
    first.proc.kill('SIGTERM');
    await first.exited;

    const short = await plinth(['admin', 'create', '--email', 'ops@example.com', '--password', 'short', '--data-dir', dir]);
    // Every command names the project it acts on first.
    expect([short.code, short.stderr]).toEqual([
      1,
      `project: embedded database in ${dir}\nplinth: An admin password must be 12 to 128 characters long.\n`,
    ]);
    const made = await plinth([
      'admin',
      'create',
      '--email',
      'Ops@Example.com',
      '--password',
      'a long admin passphrase',
      '--data-dir',
      dir,
    ]);
    expect([made.code, made.stdout.trim()]).toEqual([0, 'admin ops@example.com created']);
    // The password from a pipe, as a script would give it.
    const piped = await plinth(['admin', 'set-password', '--email', 'ops@example.com', '--data-dir', dir], 'another long passphrase\n');
    expect([piped.code, piped.stdout.trim()]).toEqual([0, 'password of ops@example.com set; its console sessions ended']);
    const unknown = await plinth([
      'admin',
      'set-password',
      '--email',
      'nobody@example.com',
      '--password',
      'another long passphrase',
      '--data-dir',
      dir,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^plinth: no admin nobody@example.com: create it with plinth admin create/m);
    const usage = await plinth(['admin', 'delete', '--data-dir', dir]);
    expect([usage.code, usage.stderr]).toEqual([1, expect.stringMatching(/^plinth: usage: plinth admin create --email E/)]);

    const second = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
    try {
      await waitHealthy(second.url, 60_000);
      expect(second.stdout()).not.toContain('/console/setup');
      // While the server holds the data dir, the CLI goes through it (POST /api/v1/admins), as plinth sql does.
      const through = (args: string[], stdin?: string) => plinth(['admin', ...args, '--data-dir', dir], stdin);
      const two = await through(['create', '--email', 'Two@Example.com', '--password', 'a long admin passphrase']);
      expect([two.code, two.stdout]).toEqual([0, 'admin two@example.com created\n']);
      const again = await through(['create', '--email', 'two@example.com'], 'yet another passphrase\n');
      expect([again.code, again.stdout]).toEqual([0, 'admin two@example.com existed: its password is set\n']);
      const weak = await through(['set-password', '--email', 'two@example.com', '--password', 'short']);
      expect([weak.code, weak.stderr]).toEqual([
        1,
        expect.stringMatching(/^plinth: An admin password must be 12 to 128 characters long\.$/m),
      ]);
      const none = await through(['set-password', '--email', 'nobody@example.com', '--password', 'another long passphrase']);
      expect([none.code, none.stderr]).toEqual([
        1,
        expect.stringMatching(/^plinth: no admin nobody@example.com: create it with plinth admin create/m),
      ]);
      expect((await login(second.url, 'two@example.com', 'yet another passphrase')).status).toBe(200);
      expect((await login(second.url, 'ops@example.com', 'another long passphrase')).status).toBe(200);
      expect((await login(second.url, 'ops@example.com', 'a long admin passphrase')).status).toBe(400);
    } finally {
      second.proc.kill('SIGTERM');
      await second.exited;
    }
  }, 180_000);
});
