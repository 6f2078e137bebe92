import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { fakeClock } from '../lib/clock.js';

// Two instances on one PostgreSQL with the same schedule: each occurrence runs once in all.

const MINUTE = 60_000;
const clock = fakeClock(Math.ceil(Date.now() / (60 * MINUTE)) * 60 * MINUTE + 30_000);
const files = {
  'functions/tick.ts': `
    export default async (req: Request, ctx: any) => {
      const { error } = await ctx.client.from('ticks').insert({ at: (await req.json()).scheduled_at });
      return error ? Response.json(error, { status: 500 }) : new Response('done');
    };`,
};
const options = { settings: { functions: { tick: { schedule: '* * * * *' } } }, clock, schedulePollMs: null };
let a: FunctionsServer;
let b: FunctionsServer;

beforeAll(async () => {
  a = await functionsServer(files, options);
  await a.sqlOk('create table public.ticks (id serial primary key, at text not null)');
  b = await functionsServer(files, { ...options, databaseUrl: a.databaseUrl ?? undefined });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

it('two instances looking at the same moment run each occurrence once', async () => {
  const rows = async () => (await a.db.query<{ at: string }>('select at from public.ticks order by id')).rows.map((r) => r.at);
  const expected: string[] = [];
  for (let i = 0; i < 6; i++) {
    clock.advance(MINUTE);
    expected.push(new Date(Math.floor(clock.now() / MINUTE) * MINUTE).toISOString());
    await Promise.all([a.app.functions?.schedules?.tick(), b.app.functions?.schedules?.tick(), a.app.functions?.schedules?.tick()]);
    await expect.poll(rows).toEqual(expected);
    // Its result written before the next occurrence (else that one is skipped: never piled up).
    await expect.poll(async () => (await a.app.functions?.schedules?.list())?.[0]?.last_status).toBe('ok');
  }
  const [sa, sb] = [await a.app.functions?.schedules?.list(), await b.app.functions?.schedules?.list()];
  expect(sa?.[0]).toMatchObject({ function: 'tick', runs: 6, missed: 0 });
  expect(sb).toEqual(sa);
});
