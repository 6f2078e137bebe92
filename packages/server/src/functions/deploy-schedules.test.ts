import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { run as functionsCommand } from '../cli/functions.js';
import { fakeClock } from '../lib/clock.js';

// A deployed version carries its schedule (docs/functions.md "Deploying"): `plinth functions
// deploy` sends the function's config.json schedule, the live version's is the one that runs
// (none if it has none), a rollback brings back that version's, a delete the folder's; a
// version's created_at is the server's clock.

const PINNED = Date.parse('2031-02-03T04:05:06.000Z');
const clock = fakeClock(PINNED);
let s: FunctionsServer;

beforeAll(async () => {
  s = await functionsServer(
    {
      'functions/job/index.ts': `export default () => new Response('job');`,
      'functions/job/config.json': '{"schedule": "0 3 * * *"}',
    },
    { clock, schedulePollMs: null },
  );
});
afterAll(async () => {
  await s?.stop();
});

const cron = async () =>
  (
    (await s.app.inject({ method: 'GET', url: '/api/v1/admin/function-schedules', headers: s.service })).json() as Array<{
      function: string;
      cron: string;
    }>
  ).find((r) => r.function === 'job')?.cron ?? null;

const cli = async (positional: string[], flags: Record<string, string>) => {
  let out = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
    throw new Error(`exit ${code}`);
  });
  try {
    await functionsCommand({ args: { command: 'functions', positional, flags }, config: s.config, cwd: s.root });
  } finally {
    write.mockRestore();
    exit.mockRestore();
  }
  return out;
};

it("a deploy carries the function's schedule; the live version's runs, a rollback brings its back, a delete the folder's", async () => {
  expect(await cron()).toBe('0 3 * * *');
  const url = await s.app.listen({ host: '127.0.0.1', port: 0 });
  const flags = { url, key: s.keys.secretKey };
  s.write('functions/job/config.json', '{"schedule": "*/5 * * * *"}');
  expect(await cli(['deploy', 'job'], flags)).toBe(`job  version 1  deployed to ${url}  schedule */5 * * * *\n`);
  expect(await cron()).toBe('*/5 * * * *');

  // Version 2 without a schedule: none runs, though the folder still names one.
  s.write('functions/job/config.json', '{}');
  clock.advance(60_000);
  expect(await cli(['deploy', 'job'], flags)).toBe(`job  version 2  deployed to ${url}\n`);
  expect(await cron()).toBeNull();
  const versions = (await s.app.inject({ method: 'GET', url: '/api/v1/admin/functions/job/versions', headers: s.service })).json();
  expect(versions).toMatchObject([
    { version: 2, schedule: null, created_at: new Date(PINNED + 60_000).toISOString(), live: true },
    { version: 1, schedule: '*/5 * * * *', created_at: new Date(PINNED).toISOString(), live: false },
  ]);

  expect(await cli(['rollback', 'job'], flags)).toBe('job  version 1 is live (was 2)\n');
  expect(await cron()).toBe('*/5 * * * *');
  const list = (await s.app.inject({ method: 'GET', url: '/api/v1/admin/functions', headers: s.service })).json();
  expect(list).toContainEqual(expect.objectContaining({ name: 'job', version: 1, schedule: '*/5 * * * *' }));

  // The folder's schedule, as read when the server started.
  await cli(['delete', 'job'], flags);
  expect(await cron()).toBe('0 3 * * *');
});

it('a schedule that is not a cron expression is refused with the deploy', async () => {
  const res = await s.app.inject({
    method: 'PUT',
    url: '/api/v1/admin/functions/job',
    headers: s.service,
    payload: { bundle: 'import "plinth:functions-runtime";', schedule: 'every minute' },
  });
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('schedule') });
});
