import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { fakeClock } from '../lib/clock.js';

// Schedules of plinth.json (`functions.<name>.schedule`): each occurrence runs its function once,
// as the service; missed occurrences are counted, not made up; a run still going makes the next
// occurrence skip (never piled up); a run that outlives its lease is reported lost.

const MINUTE = 60_000;
const clock = fakeClock(Math.ceil(Date.now() / (60 * MINUTE)) * 60 * MINUTE + 30_000); // 30 s past an hour
let s: FunctionsServer;

beforeAll(async () => {
  s = await functionsServer(
    {
      'functions/tick.ts': `
        export default async (req: Request, ctx: any) => {
          const body = await req.json();
          const { error } = await ctx.client.from('ticks').insert({ body, role: ctx.role, header: req.headers.get('x-plinth-schedule') });
          return error ? Response.json(error, { status: 500 }) : new Response('done');
        };`,
      'functions/fails.ts': `export default () => new Response('no', { status: 500 });`,
      'functions/hangs.ts': `
        export const config = { timeout_ms: 600000 };
        export default () => new Promise<Response>(() => undefined);`,
    },
    {
      settings: { functions: { tick: { schedule: '*/5 * * * *' }, fails: { schedule: '@hourly' }, hangs: { schedule: '*/7 * * * *' } } },
      clock,
      schedulePollMs: null,
    },
  );
  await s.sqlOk('create table public.ticks (id serial primary key, body jsonb not null, role text, header text)');
});
afterAll(async () => {
  await s?.stop();
});

const state = async (name: string) => (await s.app.functions?.schedules?.list())?.find((r) => r.function === name);
const ticks = async () =>
  (
    await s.db.query<{ body: { schedule: string; scheduled_at: string }; role: string; header: string }>(
      'select body, role, header from public.ticks order by id',
    )
  ).rows;
const tick = () => s.app.functions?.schedules?.tick();

describe('function schedules', () => {
  it('runs each occurrence once, as the service, and counts the runs a stopped server missed instead of making them up', async () => {
    const start = clock.now();
    const first = Date.parse((await state('tick'))?.next_at ?? '');
    expect(first - start).toBeGreaterThan(0);
    expect(first - start).toBeLessThanOrEqual(5 * MINUTE);
    expect(new Date(first).getUTCMinutes() % 5).toBe(0);

    await tick(); // not due yet
    expect(await ticks()).toEqual([]);

    clock.set(first + 1000);
    await tick();
    await tick(); // the same occurrence is not run twice
    await expect.poll(ticks).toHaveLength(1);
    expect((await ticks())[0]).toEqual({
      body: { schedule: 'tick', scheduled_at: new Date(first).toISOString() },
      role: 'service',
      header: 'tick',
    });
    await expect.poll(async () => (await state('tick'))?.last_status).toBe('ok');
    expect(await state('tick')).toMatchObject({ runs: 1, missed: 0, next_at: new Date(first + 5 * MINUTE).toISOString() });

    // An hour with no instance looking: one run now, eleven reported missed.
    clock.set(first + 5 * MINUTE + 60 * MINUTE + 1000);
    await tick();
    await expect.poll(ticks).toHaveLength(2);
    expect((await ticks())[1].body.scheduled_at).toBe(new Date(first + 5 * MINUTE).toISOString());
    await expect.poll(async () => (await state('tick'))?.last_status).toBe('ok');
    expect(await state('tick')).toMatchObject({ runs: 2, missed: 12, next_at: new Date(first + 70 * MINUTE).toISOString() });
    expect(s.logs.some((l) => l.includes('schedule tick: 12 runs missed while no instance ran it; running once now'))).toBe(true);
  });

  it('a function that answers an error is reported failed with its status', async () => {
    await expect.poll(async () => (await state('fails'))?.last_status).toBe('failed');
    expect(await state('fails')).toMatchObject({ last_detail: 'the function answered 500' });
  });

  it('a run still going makes the next occurrence skip (never piled up); past its lease it is reported lost', async () => {
    await expect.poll(async () => (await state('hangs'))?.last_status).toBe('running');
    const before = await state('hangs');
    clock.set(Date.parse(before?.next_at ?? '') + 1000);
    await tick();
    const after = await state('hangs');
    expect(after).toMatchObject({ last_status: 'running', runs: before?.runs, missed: (before?.missed ?? 0) + 1 });
    expect(s.logs.some((l) => l.includes('skipped, the previous run is still going'))).toBe(true);

    clock.advance(17 * MINUTE);
    await tick();
    expect(s.logs.some((l) => l.includes('schedule hangs: its run had no end within 16 minutes: lost (not run again)'))).toBe(true);
    // The due occurrence then runs afresh.
    expect((await state('hangs'))?.runs).toBe((before?.runs ?? 0) + 1);
  });

  it('a schedule that is not a cron expression stops the start with the key and the fix', async () => {
    const { parseProjectFile } = await import('../config/index.js');
    expect(() => parseProjectFile('{"functions": {"tick": {"schedule": "every minute"}}}', '/app/plinth.json')).toThrow(
      '/app/plinth.json: functions.tick.schedule: "every minute" has 2 fields; a schedule has five: minute hour day-of-month month day-of-week',
    );
    expect(() => parseProjectFile('{"functions": {"tick": {"cron": "* * * * *"}}}', '/app/plinth.json')).toThrow(
      '/app/plinth.json: functions.tick.cron is not a function setting (schedule)',
    );
  });
});
