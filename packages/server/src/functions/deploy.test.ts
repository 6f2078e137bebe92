import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { run as functionsCommand } from '../cli/functions.js';
import { bundleCode, DEPLOYED_RUNTIME } from './bundle.js';
import { CALLS_KEPT } from './calls.js';

// Deployed functions (docs/functions.md "Deploying"): bundles stored as numbered versions through
// the admin API, the live one overriding the folder's file, rolled back and deleted; only the
// secret key (or a console admin) may; each call's status, duration and console output kept.

let s: FunctionsServer;

beforeAll(async () => {
  s = await functionsServer({
    'functions/secret.ts': `export default (_req: Request, ctx: any) => new Response(String(ctx.secrets.PAY_KEY));`,
    'functions/greet.ts': `export default () => new Response('from the folder');`,
    'src/greet-v1.ts': `export default () => new Response('deployed one');`,
    'src/greet-v2.ts': `export default () => { console.log('v2 says', { n: 2 }); console.warn('careful'); return new Response('deployed two'); };`,
    'src/chatty.ts': `
      export default () => { for (let i = 0; i < 60; i++) console.log('line ' + i + ' ' + 'x'.repeat(40)); return new Response('ok'); };`,
    'src/no-handler.ts': `export const nothing = 1;`,
    'src/throws.ts': `export default () => { console.log('about to fail'); throw new Error('kaboom'); };`,
  });
});
afterAll(async () => {
  await s?.stop();
});

const bundleOf = async (file: string, name: string) =>
  Buffer.from((await bundleCode(join(s.root, file), name, DEPLOYED_RUNTIME)).code).toString('utf8');

const adminCall = (method: string, path: string, payload?: unknown, headers: Record<string, string> = s.service) =>
  s.app.inject({
    method: method as 'GET',
    url: `/api/v1/admin/functions${path}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

const deploy = async (name: string, file: string) => {
  const res = await adminCall('PUT', `/${name}`, { bundle: await bundleOf(file, name), layout: 'plinth' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { name: string; version: number; sha256: string };
};

const text = async (name: string) => {
  const res = await s.app.inject({ method: 'GET', url: `/api/v1/functions/${name}`, headers: s.anon });
  return `${res.statusCode} ${res.body}`;
};

describe('deploying', () => {
  it('a deployed version overrides the folder file; each deploy is the next version; rollback and delete are one call each', async () => {
    expect(await text('greet')).toBe('200 from the folder');
    expect((await deploy('greet', 'src/greet-v1.ts')).version).toBe(1);
    expect(await text('greet')).toBe('200 deployed one');
    expect((await deploy('greet', 'src/greet-v2.ts')).version).toBe(2);
    expect(await text('greet')).toBe('200 deployed two');

    const versions = await adminCall('GET', '/greet/versions');
    expect(versions.json().map((v: { version: number; live: boolean }) => [v.version, v.live])).toEqual([
      [2, true],
      [1, false],
    ]);

    const back = await adminCall('POST', '/greet/rollback', {});
    expect(back.json()).toEqual({ name: 'greet', version: 1, from: 2 });
    expect(await text('greet')).toBe('200 deployed one');
    const again = await adminCall('POST', '/greet/rollback', {});
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('not_found');
    const to2 = await adminCall('POST', '/greet/rollback', { to: 2 });
    expect(to2.json()).toEqual({ name: 'greet', version: 2, from: 1 });
    expect(await text('greet')).toBe('200 deployed two');
    const to9 = await adminCall('POST', '/greet/rollback', { to: 9 });
    expect([to9.statusCode, to9.json().code]).toEqual([404, 'not_found']);

    const listed = await adminCall('GET', '');
    expect(listed.json()).toContainEqual({ name: 'greet', version: 2, file: 'functions/greet.ts', schedule: null });

    expect((await adminCall('DELETE', '/greet')).statusCode).toBe(204);
    expect(await text('greet')).toBe('200 from the folder');
    const gone = await adminCall('DELETE', '/greet');
    expect([gone.statusCode, gone.json().code]).toEqual([404, 'function_not_found']);
  });

  it('starts the new version on the instance that took the deploy, and says when it did not start', async () => {
    const good = await adminCall('PUT', '/starts', { bundle: await bundleOf('src/greet-v1.ts', 'starts') });
    expect(good.json()).toMatchObject({ name: 'starts', version: 1, started: true });
    const bad = await adminCall('PUT', '/starts', { bundle: await bundleOf('src/no-handler.ts', 'starts') });
    expect(bad.json()).toMatchObject({ name: 'starts', version: 2, started: false });
    expect(await text('starts')).toMatch(/^500 .*function_error/);
    await adminCall('POST', '/starts/rollback', {});
    expect(await text('starts')).toBe('200 deployed one');
  });

  it('serves a function that only exists deployed, and a new deploy numbers on from the last', async () => {
    expect(await text('only-deployed')).toMatch(/^404 .*function_not_found/);
    expect((await deploy('only-deployed', 'src/greet-v1.ts')).version).toBe(1);
    expect(await text('only-deployed')).toBe('200 deployed one');
  });

  it('refuses an end-user token, the public key and no key, with the one error shape; the function stays as it was', async () => {
    await deploy('guarded', 'src/greet-v1.ts');
    const token = await s.mintToken('00000000-0000-4000-8000-00000000ada0');
    const bundle = await bundleOf('src/greet-v2.ts', 'guarded');
    for (const [who, headers, status] of [
      ['user', s.user(token), 403],
      ['anon', s.anon, 403],
      ['none', {}, 401],
    ] as const) {
      for (const [method, path, body] of [
        ['PUT', '/guarded', { bundle }],
        ['POST', '/guarded/rollback', {}],
        ['DELETE', '/guarded', undefined],
        ['GET', '/guarded/calls', undefined],
        ['GET', '', undefined],
      ] as const) {
        const res = await adminCall(method, path, body, headers);
        expect(res.statusCode, `${who} ${method} ${path}`).toBe(status);
        expect(Object.keys(res.json()).sort()).toEqual(['code', 'message']);
      }
    }
    expect(await text('guarded')).toBe('200 deployed one');
  });

  it('refuses what is not a deploy bundle, and a bad name, with invalid_request', async () => {
    const res = await adminCall('PUT', '/x', { bundle: 'export default () => new Response("hi")' });
    expect([res.statusCode, res.json().code]).toEqual([400, 'invalid_request']);
    const bad = await adminCall('PUT', '/-bad', { bundle: await bundleOf('src/greet-v1.ts', 'x') });
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'invalid_request']);
    expect(await text('x')).toMatch(/^404 /);
  });
});

describe("the functions' secrets through the admin API", () => {
  it('sets and unsets a secret (the functions reload), lists names with masked values, refuses an end-user token', async () => {
    const path = '/api/v1/admin/function-secrets';
    const req = (method: string, url: string, payload?: unknown, headers = s.service) =>
      s.app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload: payload as Record<string, unknown> } : {}) });
    expect(await text('secret')).toBe('200 undefined');
    expect((await req('PUT', `${path}/PAY_KEY`, { value: 'pk live #1' })).statusCode).toBe(204);
    expect(await text('secret')).toBe('200 pk live #1');
    const listed = await req('GET', path);
    expect(listed.json()).toEqual([{ name: 'PAY_KEY', value: '********' }]);
    expect(listed.body).not.toContain('pk live');
    const token = await s.mintToken('00000000-0000-4000-8000-0000000000e3');
    for (const [m, u, b] of [
      ['GET', path, undefined],
      ['PUT', `${path}/PAY_KEY`, { value: 'x' }],
      ['DELETE', `${path}/PAY_KEY`, undefined],
    ] as const)
      expect((await req(m, u, b, s.user(token))).statusCode).toBe(403);
    const bad = await req('PUT', `${path}/1BAD`, { value: 'x' });
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'invalid_request']);
    expect((await req('DELETE', `${path}/PAY_KEY`)).statusCode).toBe(204);
    expect(await text('secret')).toBe('200 undefined');
    const again = await req('DELETE', `${path}/PAY_KEY`);
    expect([again.statusCode, again.json().code]).toEqual([404, 'not_found']);
  });
});

describe("a function's recent calls", () => {
  it(`keeps the last ${CALLS_KEPT} calls of a function in the database, the older ones deleted`, async () => {
    s.write('functions/many.ts', `export default (req: Request) => new Response(new URL(req.url).searchParams.get('n'));`);
    for (let n = 1; n <= CALLS_KEPT + 5; n++) await s.app.inject({ method: 'GET', url: `/api/v1/functions/many?n=${n}`, headers: s.anon });
    const calls = (await adminCall('GET', '/many/calls')).json() as unknown[];
    expect(calls).toHaveLength(CALLS_KEPT);
    const { rows } = await s.db.query<{ n: string }>("select count(*)::text as n from plinth.function_calls where function = 'many'");
    expect(Number(rows[0].n)).toBe(CALLS_KEPT);
  });

  it('keeps each call: version, status, duration and its console output, cut at 50 lines', async () => {
    await deploy('logged', 'src/greet-v2.ts');
    expect(await text('logged')).toBe('200 deployed two');
    await deploy('logged', 'src/chatty.ts');
    expect(await text('logged')).toBe('200 ok');
    await deploy('logged', 'src/throws.ts');
    expect(await text('logged')).toMatch(/^500 .*function_error/);

    const calls = (await adminCall('GET', '/logged/calls')).json() as Array<{
      version: number;
      status: number;
      code: string | null;
      duration_ms: number;
      logs: string;
      trigger: string;
    }>;
    expect(calls.map((c) => [c.version, c.status, c.code, c.trigger])).toEqual([
      [3, 500, 'function_error', 'request'],
      [2, 200, null, 'request'],
      [1, 200, null, 'request'],
    ]);
    expect(calls[2].logs).toBe('v2 says { n: 2 }\nwarn: careful');
    const chatty = calls[1].logs.split('\n');
    expect(chatty.length).toBeLessThanOrEqual(51);
    expect(chatty[0]).toMatch(/^line 0 x+$/);
    expect(chatty.at(-1)).toBe('[more output cut]');
    expect(calls[0].logs).toMatch(/^about to fail\nerror: Error: kaboom/);
    for (const c of calls) expect(c.duration_ms).toBeGreaterThanOrEqual(0);
  });
});

describe('plinth functions deploy, rollback, versions, logs, delete (--url --key)', () => {
  /** Runs the command in this process: its stdout, or its one failure line and exit code. */
  const cli = async (positional: string[], flags: Record<string, string>) => {
    let out = '';
    let err = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    const ewrite = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    let code = 0;
    try {
      await functionsCommand({ args: { command: 'functions', positional, flags }, config: s.config, cwd: s.root });
    } catch (e) {
      const m = /^exit (\d+)$/.exec((e as Error).message);
      if (!m) throw e;
      code = Number(m[1]);
    } finally {
      write.mockRestore();
      ewrite.mockRestore();
      exit.mockRestore();
    }
    return { out, err, code };
  };

  it('deploys the folder function to a running server, rolls it back, lists versions and calls, deletes it', async () => {
    s.write('functions/cli-fn.ts', `export default () => { console.log('cli one'); return new Response('cli one'); };`);
    const url = await s.app.listen({ host: '127.0.0.1', port: 0 });
    const flags = { url, key: s.keys.secretKey };
    expect(await cli(['deploy', 'cli-fn'], flags)).toEqual({ out: `cli-fn  version 1  deployed to ${url}\n`, err: '', code: 0 });
    s.write('functions/cli-fn.ts', `export default () => new Response('cli two');`);
    expect((await cli(['deploy', 'cli-fn'], flags)).out).toBe(`cli-fn  version 2  deployed to ${url}\n`);
    expect(await text('cli-fn')).toBe('200 cli two');
    expect((await cli(['rollback', 'cli-fn'], flags)).out).toBe('cli-fn  version 1 is live (was 2)\n');
    expect(await text('cli-fn')).toBe('200 cli one');
    expect((await cli(['versions', 'cli-fn'], flags)).out).toMatch(/^v2 {2}\S+ {2}\d+ bytes\nv1 {2}\S+ {2}\d+ bytes {2}live\n$/);
    expect((await cli(['logs', 'cli-fn'], flags)).out).toMatch(
      / v2 {2}200 {2}[\d.]+ ms {2}request\n.* v1 {2}200 {2}[\d.]+ ms {2}request\n {4}cli one\n$/,
    );
    expect((await cli(['rollback', 'cli-fn'], { ...flags, to: '2' })).out).toBe('cli-fn  version 2 is live (was 1)\n');
    expect((await cli(['delete', 'cli-fn'], flags)).code).toBe(0);

    // Each failure: one line naming the cause and the fix.
    const token = await s.mintToken('00000000-0000-4000-8000-0000000000e1');
    const refused = await cli(['deploy', 'cli-fn'], { url, key: token });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^plinth: .*refused the key \(403 forbidden\): functions are managed with the secret key[^\n]*\n$/);
    const noKey = await cli(['deploy', 'cli-fn'], { url, key: '' });
    expect([noKey.code, noKey.err]).toEqual([
      2,
      "plinth: --url needs the server's secret key: add --key sk_… (or set PLINTH_SECRET_KEY)\n",
    ]);
    const none = await cli(['rollback', 'cli-fn'], flags);
    expect(none.err).toMatch(
      /^plinth: The function cli-fn has no deployed version \(plinth functions deploy cli-fn\)\. \(function_not_found\)\n$/,
    );
    const down = await cli(['logs', 'cli-fn'], { url: 'http://127.0.0.1:9', key: 'sk_x' });
    expect(down.err).toMatch(/^plinth: http:\/\/127\.0\.0\.1:9 does not answer \(.*\): is the server running, and the URL right\?\n$/);
    expect(await text('cli-fn')).toBe('200 cli two');
  });
});
