import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';
import { verifySignature } from './index.js';

// A webhook whose target is `function:<name>`: the project's function gets each change as the
// HTTP receiver would (the same signed body and headers, in order, retried on failure), without HTTP.

let s: FunctionsServer;

beforeAll(async () => {
  s = await functionsServer({
    'functions/on-order.ts': `
      export default async (req: Request, ctx: any) => {
        const body = await req.text();
        const { error } = await ctx.client.from('received').insert({
          body: JSON.parse(body), raw: body, signature: req.headers.get('plinth-signature'), role: ctx.role,
        });
        if (error) return Response.json(error, { status: 500 });
        return JSON.parse(body).record?.item === 'fail' ? new Response('refused', { status: 503 }) : new Response('ok');
      };`,
  });
  await s.sqlOk(`create table public.orders (id serial primary key, item text not null);
    create table public.received (id serial primary key, body jsonb not null, raw text not null, signature text, role text);`);
});
afterAll(async () => {
  await s?.stop();
});

const api = async (method: 'POST' | 'GET', url: string, payload?: unknown) => {
  const res = await s.app.inject({ method, url, headers: s.service, payload: payload as object });
  return { status: res.statusCode, body: res.json() };
};

describe('function:<name> as a webhook target', () => {
  it('each change reaches the function in order with the signed body; a failing answer is retried like a POST', async () => {
    const made = await api('POST', '/api/v1/webhooks', { name: 'orders to fn', table: 'orders', url: 'function:on-order' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.url).toBe('function:on-order');
    await s.sqlOk(
      `insert into orders (item) values ('tea'); insert into orders (item) values ('cake'); update orders set item = 'green tea' where item = 'tea'`,
    );
    const received = async () => {
      await s.webhooks.drain();
      return (
        await s.db.query<{ body: { type: string; record: { item: string } }; raw: string; signature: string; role: string }>(
          'select body, raw, signature, role from public.received order by id',
        )
      ).rows;
    };
    await expect.poll(async () => (await received()).length).toBe(3);
    const rows = await received();
    expect(rows.map((r) => [r.body.type, r.body.record.item])).toEqual([
      ['insert', 'tea'],
      ['insert', 'cake'],
      ['update', 'green tea'],
    ]);
    for (const r of rows) {
      expect(r.role).toBe('service');
      expect(verifySignature(made.body.secret, r.signature, r.raw)).toBe(true);
    }

    // The function answers 503: the delivery is a failed attempt with that status, queued again.
    await s.sqlOk(`insert into orders (item) values ('fail')`);
    const deliveries = async () => {
      await s.webhooks.drain();
      return (await api('GET', `/api/v1/webhooks/${made.body.id}/deliveries`)).body as Array<{
        status: string;
        attempts: number;
        response_status: number | null;
        response: string;
      }>;
    };
    await expect
      .poll(async () => (await deliveries()).find((d) => d.attempts > 0 && d.status === 'queued'))
      .toMatchObject({ response_status: 503, response: 'refused' });
  });

  it('a target naming no function of the project is refused at save', async () => {
    const res = await api('POST', '/api/v1/webhooks', { name: 'nowhere', table: 'orders', url: 'function:missing' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invalid_webhook',
      details: [{ field: 'url', message: 'names no function of this project (write functions/missing.ts)' }],
    });
  });
});
