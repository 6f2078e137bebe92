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

describe('ADMIN_EMAIL and ADMIN_PASSWORD at start (issue 19)', () => {
  it('a start with a new ADMIN_PASSWORD ends that admin’s sessions, as set-password does; the same password again ends none', async () => {
    const dir = tmp();
    const port = await freePort();
    const start = async (password: string) => {
      const p = spawnPlinth(['start', '--port', String(port), '--data-dir', dir], {
        ADMIN_EMAIL: 'boss@example.com',
        ADMIN_PASSWORD: password,
      });
      await waitHealthy(p.url, 60_000);
      return p;
    };
    const stop = async (p: Awaited<ReturnType<typeof start>>) => {
      p.proc.kill('SIGTERM');
      await p.exited;
    };
    const me = (url: string, cookie: string) =>
      fetch(`${url}/api/v1/admin/me`, { headers: { cookie, 'x-plinth-admin': '1' } }).then((r) => r.status);

    let p = await start('the first passphrase');
    const res = await login(p.url, 'boss@example.com', 'the first passphrase');
    expect(res.status).toBe(200);
    const cookie = `plinth_admin=${/plinth_admin=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1]}`;
    expect(await me(p.url, cookie)).toBe(200);
    await stop(p);

    p = await start('the first passphrase');
    try {
      expect(await me(p.url, cookie)).toBe(200);
    } finally {
      await stop(p);
    }

    p = await start('a second passphrase');
    try {
      expect(await me(p.url, cookie)).toBe(401);
      expect((await login(p.url, 'boss@example.com', 'the first passphrase')).status).toBe(400);
      expect((await login(p.url, 'boss@example.com', 'a second passphrase')).status).toBe(200);
    } finally {
      await stop(p);
    }
  }, 240_000);
});

describe('plinth keys rotate-signing (issue 19)', () => {
  it('rotates through the running server, revokes, and without a server on the data dir itself', async () => {
    const dir = tmp();
    const port = await freePort();
    const startServer = async () => {
      const p = spawnPlinth(['start', '--port', String(port), '--data-dir', dir]);
      await waitHealthy(p.url, 60_000);
      return p;
    };
    const kids = async (url: string) =>
      ((await (await fetch(`${url}/v1/auth/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    let server = await startServer();
    try {
      const keys = JSON.parse((await plinth(['keys', '--json', '--data-dir', dir])).stdout) as { public_key: string };
      const signup = await fetch(`${server.url}/v1/auth/signup`, {
        method: 'POST',
        headers: { apikey: keys.public_key, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'user@example.com', password: 'correct horse battery' }),
      });
      const token = ((await signup.json()) as { session: { access_token: string } }).session.access_token;
      const user = () =>
        fetch(`${server.url}/v1/auth/user`, { headers: { apikey: keys.public_key, authorization: `Bearer ${token}` } }).then(
          (r) => r.status,
        );
      const [first] = await kids(server.url);

      const rotated = await plinth(['keys', 'rotate-signing', '--data-dir', dir]);
      expect(rotated.code, rotated.stderr).toBe(0);
      const kid = /^signing key (\S+) signs from now on; the old keys \((\S+)\) stay in the JWKS until \S+Z$/.exec(rotated.stdout.trim());
      expect(kid?.[2]).toBe(first);
      expect(await kids(server.url)).toEqual([kid?.[1], first]);
      expect(await user()).toBe(200);

      const revoked = await plinth(['keys', 'rotate-signing', '--revoke', '--data-dir', dir]);
      expect(revoked.stdout).toMatch(
        /^signing key \S+ signs from now on; the old keys \(.+\) are removed: 1 sessions ended, every user signs in again\n$/,
      );
      expect((await kids(server.url)).length).toBe(1);
      expect(await user()).toBe(401);
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
    const offline = await plinth(['keys', 'rotate-signing', '--data-dir', dir]);
    expect(offline.code, offline.stderr).toBe(0);
    const made = /^signing key (\S+) signs/.exec(offline.stdout)?.[1];
    server = await startServer();
    try {
      expect((await kids(server.url))[0]).toBe(made);
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
    const wrong = await plinth(['keys', 'rotate', '--data-dir', dir]);
    expect([wrong.code, wrong.stderr.trim()]).toEqual([
      2,
      'plinth: plinth keys takes no "rotate"; did you mean plinth keys rotate-signing?',
    ]);
  }, 240_000);
});
