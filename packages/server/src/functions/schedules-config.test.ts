import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { fakeClock } from '../lib/clock.js';
import { folderSchedules, functionsFolder } from './discover.js';

// Schedules in the function's own functions/<name>/config.json, beside plinth.json's, and the
// schedules' state through the admin API (secret key or console admin only).

const MINUTE = 60_000;
const clock = fakeClock(Math.ceil(Date.now() / (60 * MINUTE)) * 60 * MINUTE + 30_000);
let s: FunctionsServer;

beforeAll(async () => {
  s = await functionsServer(
    {
      'functions/sweep/index.ts': `export default async (req: Request) => { console.log('swept', (await req.json()).schedule); return new Response('ok'); };`,
      'functions/sweep/config.json': '{"schedule": "*/10 * * * *"}',
      'functions/hourly.ts': `export default () => new Response('no', { status: 500 });`,
    },
    { settings: { functions: { hourly: { schedule: '@hourly' } } }, clock, schedulePollMs: null },
  );
});
afterAll(async () => {
  await s?.stop();
});

const schedules = (headers: Record<string, string> = s.service) =>
  s.app.inject({ method: 'GET', url: '/api/v1/admin/function-schedules', headers });

describe("a function's own config.json schedule", () => {
  it('runs like a plinth.json one; the admin API shows each schedule with its last and next run, status and missed count', async () => {
    const before = (await schedules()).json() as Array<Record<string, unknown>>;
    expect(before.map((r) => [r.function, r.cron, r.last_status, r.runs, r.missed])).toEqual([
      ['hourly', '@hourly', null, 0, 0],
      ['sweep', '*/10 * * * *', null, 0, 0],
    ]);
    const next = Date.parse(String(before.find((r) => r.function === 'sweep')?.next_at));
    expect(new Date(next).getUTCMinutes() % 10).toBe(0);

    clock.set(next + 1000);
    await s.app.functions?.schedules?.tick();
    await expect
      .poll(async () => ((await schedules()).json() as Array<Record<string, unknown>>).find((r) => r.function === 'sweep')?.last_status)
      .toBe('ok');
    const sweep = ((await schedules()).json() as Array<Record<string, unknown>>).find((r) => r.function === 'sweep');
    expect(sweep).toMatchObject({ runs: 1, missed: 0, last_started_at: new Date(next + 1000).toISOString() });
    expect(Date.parse(String(sweep?.next_at))).toBe(next + 10 * MINUTE);
    // The run is in the function's recent calls, as the service, with its output.
    const calls = (await s.app.inject({ method: 'GET', url: '/api/v1/admin/functions/sweep/calls', headers: s.service })).json();
    expect(calls[0]).toMatchObject({ trigger: 'service', status: 200, logs: 'swept sweep' });
  });

  it('refuses an end-user token and the public key', async () => {
    const token = await s.mintToken('00000000-0000-4000-8000-0000000000e2');
    for (const headers of [s.user(token), s.anon]) {
      const res = await schedules(headers);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('forbidden');
    }
  });

  it('a wrong config.json, or a schedule in both places, is one config: line naming the file', () => {
    const root = mkdtempSync(join(tmpdir(), 'plinth-fn-config-'));
    try {
      const folder = functionsFolder(root, false);
      const write = (name: string, text: string) => {
        const dir = join(root, 'functions', name);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'config.json'), text);
      };
      write('a', '{"schedule": "0 24 * * *"}');
      expect(() => folderSchedules(folder, {}, root)).toThrow(/^config: functions\/a\/config\.json: schedule: hour 24 is outside 0–23/);
      write('a', '{"schedule": "0 3 * * *", "verify": true}');
      expect(() => folderSchedules(folder, {}, root)).toThrow(/^config: functions\/a\/config\.json: "verify" is not a function setting/);
      write('a', 'not json');
      expect(() => folderSchedules(folder, {}, root)).toThrow(/^config: functions\/a\/config\.json: not JSON/);
      write('a', '{"schedule": "0 3 * * *"}');
      expect(folderSchedules(folder, { b: '@daily' }, root)).toEqual({ a: '0 3 * * *', b: '@daily' });
      expect(() => folderSchedules(folder, { a: '@daily' }, root)).toThrow(/plinth\.json's functions\.a\.schedule gives one too; keep one/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
