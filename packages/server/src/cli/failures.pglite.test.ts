import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runPlinth } from '../../test/process.js';

// Every failure a user can meet at the command line is one line on stderr naming the cause and
// the fix, a non-zero exit, and no stack trace (issue 10 §2). Real processes of the built CLI.
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-fail-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const plinth = (args: string[], env: Record<string, string> = {}, cwd = tmp()) => runPlinth(args, { cwd, env });

/**
 * Exactly one line, `plinth: …`, matching `pattern`; nothing on stdout but, for start, the line
 * naming the project it was starting; the exit code given.
 */
function expectOneLine(r: { code: number | null; stdout: string; stderr: string }, code: number, pattern: RegExp) {
  expect(r.stderr).toMatch(/^plinth: [^\n]+\n$/);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\bat .+:\d+:\d+/); // no stack frame
  expect(r.stdout.replace(/^project: [^\n]+\n/, '')).toBe('');
  expect(r.code).toBe(code);
}

/**
 * A PostgreSQL that refuses every login as a real one does: the startup message is answered
 * with an ErrorResponse (severity FATAL, SQLSTATE 28P01), then the connection is closed.
 */
function refusingPostgres(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      socket.once('data', () => {
        const fields = ['SFATAL', 'VFATAL', 'C28P01', 'Mpassword authentication failed for user "app"'];
        const body = Buffer.from(`${fields.join('\0')}\0\0`);
        const head = Buffer.alloc(5);
        head.write('E', 0);
        head.writeInt32BE(body.length + 4, 1);
        socket.end(Buffer.concat([head, body]));
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, port: typeof a === 'object' && a ? a.port : 0 });
    });
  });
}

describe('CLI failures are one line', () => {
  let occupied: Server;
  let busyPort: number;
  let refusing: { server: Server; port: number };
  beforeAll(async () => {
    busyPort = await freePort();
    occupied = createServer();
    await new Promise<void>((r) => occupied.listen(busyPort, '0.0.0.0', r));
    refusing = await refusingPostgres();
  });
  afterAll(() => {
    occupied?.close();
    refusing?.server.close();
  });

  it('a port already in use names the port and suggests --port', async () => {
    const r = await plinth(['start', '--port', String(busyPort), '--data-dir', tmp()]);
    expectOneLine(r, 1, new RegExp(`port ${busyPort} is already in use.*--port`));
  }, 60_000);

  it.each([
    ['PORT=abc', { PORT: 'abc' }, /^plinth: config: PORT must be a non-negative integer, got "abc"/],
    ['PORT=70000', { PORT: '70000' }, /^plinth: config: PORT must be a port number/],
    ['an unknown SMS_PROVIDER', { SMS_PROVIDER: 'carrier-pigeon' }, /^plinth: config: SMS_PROVIDER must be one of twilio, 46elks/],
    ['a malformed DATABASE_URL', { DATABASE_URL: 'postgres//app:hunter2@db' }, /^plinth: config: DATABASE_URL is not a URL/],
    [
      'a DATABASE_URL of another scheme',
      { DATABASE_URL: 'mysql://app:hunter2@db/app' },
      /^plinth: config: DATABASE_URL must start with postgres:\/\//,
    ],
  ])(
    '%s: config: naming the variable',
    async (_name, env, pattern) => {
      const r = await plinth(['start', '--data-dir', tmp()], env);
      expectOneLine(r, 1, pattern);
      expect(r.stderr + r.stdout).not.toContain('hunter2');
    },
    60_000,
  );

  it('an unreachable DATABASE_URL names the host and the cause', async () => {
    const port = await freePort(); // nothing listens there
    const r = await plinth(['start', '--port', String(await freePort())], { DATABASE_URL: `postgres://app:hunter2@127.0.0.1:${port}/app` });
    expectOneLine(
      r,
      1,
      new RegExp(`cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/app \\(DATABASE_URL\\): connection refused \\(ECONNREFUSED\\)`),
    );
    expect(r.stderr + r.stdout).not.toContain('hunter2');
  }, 60_000);

  it('a wrong password names the host and the variable, never the password', async () => {
    const r = await plinth(['start', '--port', String(await freePort())], {
      DATABASE_URL: `postgres://app:hunter2@127.0.0.1:${refusing.port}/app`,
    });
    expectOneLine(
      r,
      1,
      new RegExp(
        `PostgreSQL at 127\\.0\\.0\\.1:${refusing.port}/app refused the login: password authentication failed for user "app"; check the user and password in DATABASE_URL`,
      ),
    );
    expect(r.stderr + r.stdout).not.toContain('hunter2');
  }, 60_000);

  it('a HOST that is no address of this machine', async () => {
    const r = await plinth(['start', '--port', String(await freePort()), '--data-dir', tmp()], { HOST: '192.0.2.1' });
    expectOneLine(r, 1, /cannot listen on HOST=192\.0\.2\.1 \(EADDRNOTAVAIL\): it is no address of this machine/);
  }, 60_000);

  it('gen types from a URL where nothing answers names the URL', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await plinth(['gen', 'types', '--url', url, '--key', 'sk_whatever', '--out', join(tmp(), 'db.ts')]);
    expectOneLine(r, 1, new RegExp(`cannot read the tables of ${url}: it does not answer`));
  }, 60_000);

  it.each([
    ['--data-dir without a value', ['start', '--data-dir'], /--data-dir needs a value, e\.g\. --data-dir \.\/data/],
    ['--data-dir followed by another flag', ['keys', '--data-dir', '--json'], /--data-dir needs a value/],
    ['--out without a value', ['gen', 'types', '--out'], /--out needs a value, e\.g\. --out src\/database\.ts/],
    ['--port without a value', ['start', '--port'], /--port needs a value/],
    ['--port that is no number', ['start', '--port', 'eighty'], /--port must be a port number \(0–65535\), got "eighty"/],
    [
      'an unknown command',
      ['strat'],
      /unknown command "strat"; the commands are init, start, dev, keys, status, sql, migrate, migration, functions, secrets, db, gen, admin, backup, restore, help/,
    ],
    [
      'an unknown flag',
      ['start', '--prot', '8080'],
      /unknown option --prot for plinth start; it takes --port, --migrate, --workers, --data-dir/,
    ],
    ['gen of something else', ['gen', 'client'], /plinth gen makes types only/],
    ['sql without a query', ['sql'], /plinth sql needs a query/],
    ['gen types --url that is no URL', ['gen', 'types', '--url', 'localhost:8080', '--key', 'sk_x'], /--url must be the server's base URL/],
    ['gen types --key without --url', ['gen', 'types', '--key', 'sk_x'], /--key goes with --url/],
    ['sql with --json and --csv', ['sql', 'select 1', '--json', '--csv'], /takes --json or --csv, not both/],
    ['restore without a file', ['restore'], /plinth restore needs the backup file/],
  ])(
    '%s: exit 2',
    async (_name, args, pattern) => {
      expectOneLine(await plinth(args), 2, pattern);
    },
    60_000,
  );
});
