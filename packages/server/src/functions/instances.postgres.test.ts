import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';

// Instances of one project on one PostgreSQL (docs/functions.md "Secrets", "Recent calls"): a
// secret set through one instance's admin API is what every instance's functions get (stored
// sealed, never in the clear); the recent calls of every instance are listed by each, and
// outlive the instance that made them.

const files = {
  'functions/pay.ts': `export default (_req: Request, ctx: any) => new Response(String(ctx.secrets.PAY_KEY));`,
  'functions/hi.ts': `export default (req: Request) => { console.log('hi', new URL(req.url).searchParams.get('n')); return new Response('hi'); };`,
};
// Instances of one deployment share the project's keys (PLINTH_SECRET_KEY): the secrets' seal.
const env = {
  PLINTH_PUBLIC_KEY: 'pk_instances_public_key_0123456789abcdef0123456789abcd',
  PLINTH_SECRET_KEY: 'sk_instances_secret_key_0123456789abcdef0123456789abcd',
};
let a: FunctionsServer;
let b: FunctionsServer;
let c: FunctionsServer | null = null;

beforeAll(async () => {
  a = await functionsServer(files, { env });
  b = await functionsServer(files, { env, databaseUrl: a.databaseUrl ?? undefined });
});
afterAll(async () => {
  await c?.stop();
  await b?.stop();
  await a?.stop();
});

const pay = async (s: FunctionsServer) => (await s.app.inject({ method: 'GET', url: '/api/v1/functions/pay', headers: s.anon })).body;
const secret = (s: FunctionsServer, method: 'PUT' | 'DELETE', value?: string) =>
  s.app.inject({
    method,
    url: '/api/v1/admin/function-secrets/PAY_KEY',
    headers: s.service,
    ...(value === undefined ? {} : { payload: { value } }),
  });

it("a secret set or unset through one instance is every instance's, stored sealed", async () => {
  expect(await pay(b)).toBe('undefined');
  expect((await secret(a, 'PUT', 'pk live one')).statusCode).toBe(204);
  expect(await pay(a)).toBe('pk live one');
  await expect.poll(() => pay(b)).toBe('pk live one');
  expect((await secret(b, 'PUT', 'pk live two')).statusCode).toBe(204);
  await expect.poll(() => pay(a)).toBe('pk live two');
  const { rows } = await a.db.query<{ sealed: string }>('select sealed from plinth.function_secrets');
  expect(rows).toHaveLength(1);
  expect(rows[0].sealed).not.toContain('pk live');
  const listed = await b.app.inject({ method: 'GET', url: '/api/v1/admin/function-secrets', headers: b.service });
  expect(listed.json()).toEqual([{ name: 'PAY_KEY', value: '********' }]);
  expect(a.logs.join('\n') + b.logs.join('\n')).not.toContain('pk live');
  expect((await secret(a, 'DELETE')).statusCode).toBe(204);
  await expect.poll(() => pay(b)).toBe('undefined');
});

it("each instance lists every instance's recent calls, and they outlive a restart", async () => {
  const calls = async (s: FunctionsServer) =>
    (
      (await s.app.inject({ method: 'GET', url: '/api/v1/admin/functions/hi/calls', headers: s.service })).json() as Array<{
        status: number;
        logs: string;
      }>
    ).map((r) => `${r.status} ${r.logs}`);
  for (const [s, n] of [
    [a, 1],
    [b, 2],
    [a, 3],
  ] as const)
    expect((await s.app.inject({ method: 'GET', url: `/api/v1/functions/hi?n=${n}`, headers: s.anon })).body).toBe('hi');
  const expected = ['200 hi 3', '200 hi 2', '200 hi 1'];
  await expect.poll(() => calls(a)).toEqual(expected);
  await expect.poll(() => calls(b)).toEqual(expected);
  // b stops; an instance started after it still lists its call.
  await b.stop();
  c = await functionsServer(files, { env, databaseUrl: a.databaseUrl ?? undefined });
  expect(await calls(c)).toEqual(expected);
});
