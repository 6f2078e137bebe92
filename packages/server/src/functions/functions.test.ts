import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../test/functions.js';

// A project's functions/ served at /api/v1/functions, each in its worker thread: the handler's
// Request and Response, the caller, ctx's clients under RLS, secrets, and failures that stay
// within their own call.

const ADA = '00000000-0000-4000-8000-00000000ada0';
const BOB = '00000000-0000-4000-8000-000000000b0b';

let s: FunctionsServer;

beforeAll(async () => {
  s = await functionsServer({
    '.env':
      'STRIPE_KEY=sk_test_stripe\nPLINTH_SECRET_KEY=sk_server_own_secret_key_for_the_test_0123456789\nDATABASE_URL=postgres://owner:pw@127.0.0.1:1/db\n',
    'functions/.env': 'WEBHOOK_SIGNING=whsec_1\n',
    'functions/hello.ts': `
      export default async (req: Request, ctx: any) => {
        const url = new URL(req.url);
        const body = req.method === 'GET' ? null : await req.text();
        return Response.json({ method: req.method, path: url.pathname, q: url.searchParams.get('q'), body,
          type: req.headers.get('content-type'), role: ctx.role, user: ctx.user }, { status: 201, headers: { 'x-fn': 'hello' } });
      };`,
    'functions/open/index.ts': `
      import { greet } from './greet';
      export const config = { verify_jwt: false };
      export default (req: Request, ctx: any) => new Response(greet(ctx.role), { headers: { 'content-type': 'text/plain' } });`,
    'functions/open/greet.ts': "export const greet = (who: string): string => 'hello, ' + who;",
    'functions/env.ts': `
      export default (_req: Request, ctx: any) => Response.json({ env: { ...process.env }, secrets: { ...ctx.secrets },
        globals: Object.keys(globalThis) });`,
    'functions/notes.ts': `
      export default async (_req: Request, ctx: any) => {
        const mine = await ctx.client.from('notes').select('body').order('body');
        const all = await ctx.service.from('notes').select('body').order('body');
        return Response.json({ mine: mine.data, mineError: mine.error, all: all.data });
      };`,
    'functions/open-notes.ts': `
      export const config = { verify_jwt: false };
      export default async (_req: Request, ctx: any) => Response.json(await ctx.client.from('notes').select('body'));`,
    'functions/later.ts': `
      export default (req: Request, ctx: any) => {
        const tag = new URL(req.url).searchParams.get('tag');
        ctx.waitUntil(ctx.service.from('notes').insert({ owner: '${BOB}', body: 'later ' + tag }));
        if (tag === 'crash') setTimeout(() => { throw new Error('thrown in a timer'); }, 0);
        return new Response('accepted', { status: 202 });
      };`,
    'functions/loop.ts': `
      export const config = { timeout_ms: 2000 };
      export default (req: Request) => {
        if (new URL(req.url).searchParams.has('loop')) for (;;) {}
        return new Response('not looping');
      };`,
    'functions/hog.ts': `
      export const config = { memory_mb: 32 };
      export default (req: Request) => {
        if (!new URL(req.url).searchParams.has('hog')) return new Response('light');
        const held: unknown[] = [];
        for (;;) held.push({ n: held.length, s: 'x'.repeat(64) + held.length });
      };`,
    'functions/throws.ts': `export default () => { throw new Error('kaboom'); };`,
    'functions/responses.ts': `
      export default async () => {
        const r = new Response('h\u00e9llo');
        const copy = r.clone();
        const type = r.headers.get('content-type');
        const text = await r.text();
        const again = await r.text().then(() => 'read twice', (e: Error) => e.name);
        const stream = await new Response(new Uint8Array([1, 2, 3])).body!.getReader().read();
        let noBody = 'made';
        try { new Response('x', { status: 204 }); } catch (e) { noBody = (e as Error).name; }
        return Response.json({ type, text, used: r.bodyUsed, again, copy: (await copy.arrayBuffer()).byteLength,
          stream: stream.value!.length, json: await Response.json({ a: 1 }).json(), jsonType: Response.json({}).headers.get('content-type'),
          isResponse: r instanceof Response, noBody, blob: await (await new Response('abc', { headers: { 'content-type': 'text/x' } }).blob()).text() });
      };`,
    'functions/nothing.ts': `export default () => 'not a response';`,
    'functions/broken.ts': `export default ( => ;`,
    'functions/slow.ts': `
      export const config = { concurrency: 1, queue: 0, timeout_ms: 1000 };
      export default () => new Promise<Response>(() => undefined);`,
  });
  await s.sqlOk(`create table public.notes (id serial primary key, owner uuid not null, body text not null);
    alter table public.notes enable row level security;
    create policy own on public.notes for select to authenticated using (owner = auth.uid());
    grant select on public.notes to authenticated;`);
});
afterAll(async () => {
  await s?.stop();
});

const call = (url: string, init: { method?: string; headers?: Record<string, string>; payload?: string } = {}) =>
  s.app.inject({ method: (init.method ?? 'GET') as 'GET', url, headers: init.headers ?? s.anon, payload: init.payload });

describe('serving', () => {
  it('hands the function a Web Request (method, path, query, raw body, headers) and sends its Response as given', async () => {
    const res = await call('/api/v1/functions/hello/sub?q=1', {
      method: 'POST',
      headers: { ...s.anon, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'a=1&b=2',
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-fn']).toBe('hello');
    expect(res.json()).toEqual({
      method: 'POST',
      path: '/api/v1/functions/hello/sub',
      q: '1',
      body: 'a=1&b=2',
      type: 'application/x-www-form-urlencoded',
      role: 'anon',
      user: null,
    });
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const r = await call('/api/v1/functions/hello', {
        method,
        headers: { ...s.anon, 'content-type': 'application/json' },
        payload: method === 'GET' ? undefined : '{"x":1}',
      });
      expect(r.statusCode, method).toBe(201);
      expect(r.json().method).toBe(method);
    }
  });

  it('verifies the caller by default: no key is 401, a user token is the user; verify_jwt: false opens a function', async () => {
    const none = await call('/api/v1/functions/hello', { headers: {} });
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe('unauthorized');
    const forged = await call('/api/v1/functions/hello', {
      headers: { ...s.anon, authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.bad' },
    });
    expect(forged.statusCode).toBe(401);

    const token = await s.mintToken(ADA, { email: 'ada@example.com' });
    const asAda = await call('/api/v1/functions/hello', { headers: s.user(token) });
    expect(asAda.json()).toMatchObject({ role: 'authenticated', user: { id: ADA, email: 'ada@example.com' } });

    const open = await call('/api/v1/functions/open', { headers: {} });
    expect(open.statusCode).toBe(200);
    expect(open.body).toBe('hello, anon');
    expect((await call('/api/v1/functions/open', { headers: s.service })).body).toBe('hello, service');
  });

  it('answers 404 function_not_found for a name with no file, in the one error shape', async () => {
    const res = await call('/api/v1/functions/nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 'function_not_found', message: expect.stringContaining('functions/nope.ts') });
    expect((await call('/api/v1/functions/..%2F.env')).statusCode).toBe(404);
  });
});

describe('Response in the worker', () => {
  it("a string or bytes body reads once, clones, streams and sets its content type as Node's Response does", async () => {
    const res = await call('/api/v1/functions/responses');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({
      type: 'text/plain;charset=UTF-8',
      text: 'h\u00e9llo',
      used: true,
      again: 'TypeError',
      copy: 6,
      stream: 3,
      json: { a: 1 },
      jsonType: 'application/json',
      isResponse: true,
      noBody: 'TypeError',
      blob: 'abc',
    });
  });
});

describe('ctx', () => {
  it("ctx.client acts as the caller (RLS decides) and ctx.service with the service's rights", async () => {
    await s.sqlOk(`insert into public.notes (owner, body) values ('${ADA}', 'ada 1'), ('${ADA}', 'ada 2'), ('${BOB}', 'bob 1')`);
    const ada = await s.mintToken(ADA);
    const res = await call('/api/v1/functions/notes', { headers: s.user(ada) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      mine: [{ body: 'ada 1' }, { body: 'ada 2' }],
      mineError: null,
      all: [{ body: 'ada 1' }, { body: 'ada 2' }, { body: 'bob 1' }],
    });
    // Anonymous: no policy lets anon see a row.
    const anon = (await call('/api/v1/functions/notes')).json();
    expect(anon).toMatchObject({ mine: [], mineError: null });
    expect(anon.all).toHaveLength(3);
    // Without any key (verify_jwt: false), ctx.client is anon, not refused.
    expect((await call('/api/v1/functions/open-notes', { headers: {} })).json()).toMatchObject({ data: [], error: null });
  });

  it("ctx.client acts as its own call's caller when calls of different users run at once", async () => {
    const ada = await s.mintToken(ADA);
    const bob = await s.mintToken(BOB);
    const calls = Array.from({ length: 12 }, (_, i) => call('/api/v1/functions/notes', { headers: s.user(i % 2 ? bob : ada) }));
    const answers = (await Promise.all(calls)).map((r) => r.json().mine.map((n: { body: string }) => n.body));
    for (const [i, mine] of answers.entries()) expect(mine).toEqual(i % 2 ? ['bob 1'] : ['ada 1', 'ada 2']);
  });

  it("gets the project's secrets, never the server's own variables or keys", async () => {
    const res = await call('/api/v1/functions/env');
    const { env, secrets, globals } = res.json();
    expect(env).toEqual({ STRIPE_KEY: 'sk_test_stripe', WEBHOOK_SIGNING: 'whsec_1' });
    expect(secrets).toEqual(env);
    expect(s.keys.secretKey).toBe('sk_server_own_secret_key_for_the_test_0123456789');
    expect(res.body).not.toContain(s.keys.secretKey);
    expect(res.body).not.toContain('postgres://');
    expect(globals).toContain('Deno');
  });
});

describe('failures stay in their call', () => {
  it('a loop past its time is 504 function_timeout, a heap without bound and a throw are 500 function_error; the server and the others go on', async () => {
    const looped = await call('/api/v1/functions/loop?loop');
    expect(looped.statusCode).toBe(504);
    expect(looped.json()).toEqual({ code: 'function_timeout', message: expect.stringContaining('2000 ms') });

    const hog = await call('/api/v1/functions/hog?hog');
    expect(hog.statusCode).toBe(500);
    expect(hog.json()).toEqual({ code: 'function_error', message: expect.stringContaining('ran out of memory') });

    const thrown = await call('/api/v1/functions/throws');
    expect(thrown.statusCode).toBe(500);
    expect(thrown.json()).toEqual({ code: 'function_error', message: "The function throws failed; the server's log has the cause." });
    expect(thrown.body).not.toContain('kaboom');
    expect(s.logs.join('')).toContain('kaboom');

    expect((await call('/api/v1/functions/nothing')).json().code).toBe('function_error');
    const broken = await call('/api/v1/functions/broken');
    expect(broken.statusCode).toBe(500);
    expect(broken.json().message).toContain('did not build');

    // The server, another function, and the same functions again (their workers replaced).
    expect((await s.app.inject({ url: '/health' })).statusCode).toBe(200);
    expect((await call('/api/v1/functions/open')).body).toBe('hello, anon');
    expect((await call('/api/v1/functions/loop')).body).toBe('not looping');
    expect((await call('/api/v1/functions/hog')).body).toBe('light');
  });

  it('a function at its concurrency cap with a full queue answers 503 function_busy at once', async () => {
    // inject's chain starts when it is awaited: this call takes the one slot and keeps it.
    const first = Promise.resolve(call('/api/v1/functions/slow'));
    await expect.poll(async () => (await call('/api/v1/functions/slow')).statusCode).toBe(503);
    const busy = await call('/api/v1/functions/slow');
    expect(busy.json()).toMatchObject({ code: 'function_busy' });
    expect(busy.headers['retry-after']).toBe('1');
    expect((await first).statusCode).toBe(504);
  });
});

describe('plinth dev', () => {
  it('reloads a function on save: the next call runs the new version, its imports included', async () => {
    const stop = s.app.functions?.watch();
    try {
      s.write('functions/live/version.ts', "export const version = 'one';");
      s.write('functions/live/index.ts', "import { version } from './version';\nexport default () => new Response(version);");
      await expect.poll(async () => (await call('/api/v1/functions/live')).body).toBe('one');
      s.write('functions/live/version.ts', "export const version = 'two';");
      await expect.poll(async () => (await call('/api/v1/functions/live')).body, { timeout: 10_000 }).toBe('two');
    } finally {
      stop?.();
    }
  });
});

describe('waitUntil', () => {
  it('lets work finish after the answer; an error thrown outside a call ends only that worker, and the next call gets a new one', async () => {
    const res = await call('/api/v1/functions/later?tag=one');
    expect(res.statusCode).toBe(202);
    const bodies = async () =>
      (await s.db.query<{ body: string }>("select body from public.notes where body like 'later %' order by body")).rows.map((r) => r.body);
    await expect.poll(bodies).toEqual(['later one']);

    expect((await call('/api/v1/functions/later?tag=crash')).statusCode).toBe(202);
    await expect.poll(() => s.logs.join('').includes('thrown in a timer')).toBe(true);
    await expect.poll(async () => (await call('/api/v1/functions/later?tag=again')).statusCode).toBe(202);
    await expect.poll(bodies).toContain('later again');
    expect((await call('/api/v1/functions/open')).body).toBe('hello, anon');
  });
});
