import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { type Finished, freePort, runPlinth } from '../../test/process.js';

// `plinth secrets set|list|unset --url U --key K` with the built CLI against a running server
// (docs/functions.md "Secrets"): values given as NAME=value, from --env-file or from stdin are
// stored sealed in that server's database and reach its functions; list shows names only; no
// value is ever printed, logged or kept in clear; every failure is one line with its fix.

let s: FunctionsServer;
let url: string;
const dirs: string[] = [];
const VALUES = ['pk_live_from_argv_1', 'whsec from the env file', 'sk-from-stdin-42', 'second env-file value'];

beforeAll(async () => {
  s = await functionsServer({
    'functions/secrets.ts': `export default (req: Request, ctx: any) =>
      new Response(String(ctx.secrets[new URL(req.url).searchParams.get('name') ?? ''] ?? 'unset'));`,
  });
  url = await s.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await s?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A folder that is no project: with --url the command needs none. */
const elsewhere = () => {
  const d = mkdtempSync(join(tmpdir(), 'plinth-secrets-cli-'));
  dirs.push(d);
  return d;
};

const seen = async (name: string) =>
  (await s.app.inject({ method: 'GET', url: `/api/v1/functions/secrets?name=${name}`, headers: s.service })).body;

const outputs: Finished[] = [];
const plinth = async (args: string[], options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}) => {
  const r = await runPlinth(['secrets', ...args], { cwd: options.cwd ?? elsewhere(), ...options });
  outputs.push(r);
  return r;
};
const remote = () => ['--url', url, '--key', s.keys.secretKey];

/** One line on stderr, the exit code, nothing on stdout, no stack. */
const oneLine = (r: Finished, code: number, pattern: RegExp) => {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(pattern);
};

describe('plinth secrets against a server (--url --key)', () => {
  it('sets from NAME=value, --env-file and stdin; the functions get them; list names them; unset removes one', async () => {
    const set = await plinth(['set', `PAY_KEY=${VALUES[0]}`, ...remote()]);
    expect(set).toMatchObject({ code: 0, stdout: `set PAY_KEY on ${url}\n` });
    await expect.poll(() => seen('PAY_KEY')).toBe(VALUES[0]);

    const cwd = elsewhere();
    writeFileSync(join(cwd, '.env.production'), `# for the server\nHOOK_SECRET="${VALUES[1]}"\nOTHER_KEY=${VALUES[3]}\n`);
    const fromFile = await plinth(['set', '--env-file', '.env.production', ...remote()], { cwd });
    expect(fromFile).toMatchObject({ code: 0, stdout: `set HOOK_SECRET, OTHER_KEY on ${url}\n` });
    await expect.poll(() => seen('HOOK_SECRET')).toBe(VALUES[1]);
    expect(await seen('OTHER_KEY')).toBe(VALUES[3]);

    // The key from the environment, the value from stdin: neither is on the command line.
    const fromStdin = await plinth(['set', 'SIGNING', '--url', url], {
      env: { PLINTH_SECRET_KEY: s.keys.secretKey },
      stdin: `${VALUES[2]}\n`,
    });
    expect(fromStdin).toMatchObject({ code: 0, stdout: `set SIGNING on ${url}\n` });
    await expect.poll(() => seen('SIGNING')).toBe(VALUES[2]);

    const listed = await plinth(['list', ...remote()]);
    expect(listed).toMatchObject({ code: 0, stdout: 'HOOK_SECRET\nOTHER_KEY\nPAY_KEY\nSIGNING\n' });

    expect(await plinth(['unset', 'PAY_KEY', ...remote()])).toMatchObject({ code: 0, stdout: `unset PAY_KEY on ${url}\n` });
    await expect.poll(() => seen('PAY_KEY')).toBe('unset');
    expect((await plinth(['list', ...remote()])).stdout).toBe('HOOK_SECRET\nOTHER_KEY\nSIGNING\n');
    oneLine(
      await plinth(['unset', 'PAY_KEY', 'SIGNING', ...remote()]),
      1,
      new RegExp(`^plinth: no secret PAY_KEY on ${url} \\(plinth secrets list --url ${url} names them\\)$`, 'm'),
    );
    // Nothing was removed by the refused unset.
    expect(await seen('SIGNING')).toBe(VALUES[2]);
  });

  it('never shows a value: not in any output, the log or the audit log, and the database holds it sealed', async () => {
    const { rows } = await s.db.query<{ name: string; sealed: string }>('select name, sealed from plinth.function_secrets');
    expect(rows.map((r) => r.name).sort()).toEqual(['HOOK_SECRET', 'OTHER_KEY', 'SIGNING']);
    const { rows: audit } = await s.db.query<{ action: string; entry: string }>(
      `select action, row_to_json(a)::text as entry from plinth.admin_audit a where action like 'function.secret.%'`,
    );
    expect(audit.map((a) => a.action)).toContain('function.secret.set');
    const everything = [
      ...outputs.map((r) => r.stdout + r.stderr),
      ...rows.map((r) => r.sealed),
      ...audit.map((a) => a.entry),
      s.logs.join('\n'),
    ].join('\n');
    for (const value of VALUES) expect(everything).not.toContain(value);
  });

  it('each failure is one line naming the cause and the fix, and changes nothing', async () => {
    oneLine(
      await plinth(['set', 'PAY_KEY=x', '--url', url, '--key', 'sk_not_this_servers_key_0123456789abcdef']),
      1,
      /^plinth: http:\/\/127\.0\.0\.1:\d+ refused the key \(401 \w+\): .*--key sk_/,
    );
    oneLine(
      await plinth(['list', '--url', url]),
      2,
      /^plinth: --url needs the server's secret key: add --key sk_… \(or set PLINTH_SECRET_KEY\)$/,
    );
    const closed = `http://127.0.0.1:${await freePort()}`;
    oneLine(
      await plinth(['list', '--url', closed, '--key', s.keys.secretKey]),
      1,
      /^plinth: http:\/\/127\.0\.0\.1:\d+ does not answer \(ECONNREFUSED\): is the server running, and the URL right\?$/,
    );
    oneLine(await plinth(['list', '--url', 'example.com', '--key', 'sk_x']), 2, /^plinth: --url must be the server's base URL/);
    oneLine(await plinth(['set', 'BAD-NAME=1', ...remote()]), 2, /^plinth: "BAD-NAME" is not a variable name/);
    // Node itself looks for an --env-file anywhere on its command line (nodejs/node#54232): a
    // missing one stops it before the CLI runs, with its own one line and exit code 9.
    oneLine(await plinth(['set', '--env-file', 'nowhere.env', ...remote()]), 9, /node: nowhere\.env: not found$/);
    oneLine(
      await plinth(['list', '--key', s.keys.secretKey]),
      2,
      /^plinth: --key is the secret key of the server named by --url: add --url/,
    );
    oneLine(await plinth(['unset', ...remote()]), 2, /^plinth: plinth secrets unset needs the names to remove/);
    expect(await seen('PAY_KEY')).toBe('unset');
    expect((await plinth(['list', ...remote()])).stdout).toBe('HOOK_SECRET\nOTHER_KEY\nSIGNING\n');
  });

  it("without --url, set --env-file writes the project's functions/.env (plinth dev's), not the server", async () => {
    const cwd = elsewhere();
    writeFileSync(join(cwd, 'plinth.json'), '{}\n');
    writeFileSync(join(cwd, 'local.env'), 'LOCAL_ONE=1\nLOCAL_TWO="two words"\n');
    const r = await plinth(['set', '--env-file', 'local.env', 'LOCAL_THREE=3'], { cwd });
    expect(r).toMatchObject({ code: 0, stdout: 'set LOCAL_ONE, LOCAL_TWO, LOCAL_THREE in functions/.env\n' });
    expect(readFileSync(join(cwd, 'functions/.env'), 'utf8')).toBe('LOCAL_ONE=1\nLOCAL_TWO="two words"\nLOCAL_THREE=3\n');
    expect((await plinth(['list'], { cwd })).stdout).toBe('LOCAL_ONE\nLOCAL_THREE\nLOCAL_TWO\n');
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    expect((await plinth(['list', ...remote()])).stdout).toBe('HOOK_SECRET\nOTHER_KEY\nSIGNING\n');
  });
});
