import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { bundleCode, DEPLOYED_RUNTIME } from './bundle.js';

// Two instances on one PostgreSQL: a version deployed, rolled back or deleted through one is what
// the other serves (within DEPLOYED_TTL_MS), overriding its own folder's file.

const files = {
  'functions/who.ts': `export default () => new Response('the folder');`,
  'src/v1.ts': `export default () => new Response('deployed one');`,
  'src/v2.ts': `export default () => new Response('deployed two');`,
};
let a: FunctionsServer;
let b: FunctionsServer;

beforeAll(async () => {
  a = await functionsServer(files);
  b = await functionsServer(files, { databaseUrl: a.databaseUrl ?? undefined });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

const on = async (s: FunctionsServer) => (await s.app.inject({ method: 'GET', url: '/api/v1/functions/who', headers: s.anon })).body;
const admin = (method: string, path: string, payload?: unknown) =>
  a.app.inject({
    method: method as 'GET',
    url: `/api/v1/admin/functions/who${path}`,
    headers: a.service,
    ...(payload ? { payload: payload as Record<string, unknown> } : {}),
  });

it('a deploy (with its schedule), a rollback and a delete through one instance are served (and scheduled) by the other', async () => {
  expect(await on(b)).toBe('the folder');
  for (const [file, schedule] of [
    ['src/v1.ts', '*/5 * * * *'],
    ['src/v2.ts', null],
  ]) {
    const bundle = Buffer.from((await bundleCode(join(a.root, file as string), 'who', DEPLOYED_RUNTIME)).code).toString('utf8');
    expect((await admin('PUT', '', { bundle, schedule })).statusCode).toBe(201);
  }
  // The live version's schedule is what both list (version 2 has none).
  const listed = async (s: FunctionsServer) => (await s.app.functions?.list())?.find((f) => f.name === 'who');
  await expect.poll(() => listed(b)).toMatchObject({ version: 2, schedule: null });
  expect(await on(a)).toBe('deployed two');
  await expect.poll(() => on(b)).toBe('deployed two');
  expect((await admin('POST', '/rollback', {})).json().version).toBe(1);
  await expect.poll(() => on(b)).toBe('deployed one');
  await expect.poll(() => listed(b)).toMatchObject({ version: 1, schedule: '*/5 * * * *' });
  expect((await b.app.functions?.schedules?.list())?.map((r) => [r.function, r.cron])).toEqual([['who', '*/5 * * * *']]);
  expect((await admin('DELETE', '')).statusCode).toBe(204);
  await expect.poll(() => on(b)).toBe('the folder');
});
