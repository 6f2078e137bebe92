import { mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FunctionsHttpError } from '@supabase/functions-js';
import { createClient as supabaseClient } from '@supabase/supabase-js';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUPABASE_LOCAL_JWT_SECRET } from '../../config/index.js';
import { supabaseKeysOf } from '../../http/index.js';
import { type FunctionsServer, functionsServer } from '../../../test/functions.js';

// A Supabase CLI folder's supabase/functions, served at /functions/v1 and reached with
// supabase-js's functions.invoke over loopback HTTP: Deno.serve and Deno.env through the shim,
// npm: and jsr: type imports, supabase-js inside the function, config.toml's verify_jwt.

let s: FunctionsServer;
// Node 20 has no WebSocket global: supabase-js's realtime client is given ws's.
const createClient = (u: string, key: string) =>
  supabaseClient(u, key, { realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket } });
let url: string;
let anonKey: string;

beforeAll(async () => {
  s = await functionsServer(
    {
      'supabase/config.toml': 'project_id = "fn-test"\n\n[functions.public-hook]\nverify_jwt = false\n',
      'supabase/functions/.env': 'MY_SECRET=s3cret\n',
      // A package of the project's own node_modules, imported with an npm: specifier.
      'node_modules/tiny-greet/package.json': '{"name":"tiny-greet","version":"1.0.0","main":"index.js"}',
      'node_modules/tiny-greet/index.js': "exports.greet = (name) => 'Hello ' + name + '!';",
      'supabase/functions/hello/index.ts': `
        import 'jsr:@supabase/functions-js/edge-runtime.d.ts';
        import { greet } from 'npm:tiny-greet@1.0.0';
        Deno.serve(async (req: Request) => {
          const { name } = await req.json();
          return new Response(JSON.stringify({ message: greet(name), secret: Deno.env.get('MY_SECRET'), path: new URL(req.url).pathname }),
            { headers: { 'Content-Type': 'application/json' } });
        });`,
      'supabase/functions/notes/index.ts': `
        import { createClient } from 'npm:@supabase/supabase-js@2';
        Deno.serve(async (req: Request) => {
          const url = Deno.env.get('SUPABASE_URL')!;
          const caller = createClient(url, Deno.env.get('SUPABASE_ANON_KEY')!, { global: { headers: { Authorization: req.headers.get('Authorization')! } } });
          const admin = createClient(url, Deno.env.get('SUPABASE_SERVICE_ROLE_KEY')!);
          const mine = await caller.from('notes').select('body');
          const all = await admin.from('notes').select('body').order('body');
          return Response.json({ mine: mine.data, all: all.data, error: mine.error ?? all.error });
        });`,
      'supabase/functions/public-hook/index.ts': `Deno.serve(() => new Response('received'));`,
      'supabase/functions/fails/index.ts': `Deno.serve(() => { throw new Error('boom'); });`,
    },
    { supabase: true },
  );
  // supabase-js for the function from the project's node_modules (here: the repository's copy).
  mkdirSync(join(s.root, 'node_modules'), { recursive: true });
  symlinkSync(resolve('node_modules/@supabase'), join(s.root, 'node_modules/@supabase'), 'dir');
  await s.sqlOk(`create table public.notes (id serial primary key, body text not null);
    alter table public.notes enable row level security;
    grant select on public.notes to anon, authenticated;
    insert into public.notes (body) values ('one'), ('two');`);
  await s.schema.reload();
  await s.app.listen({ host: '127.0.0.1', port: 0 });
  const address = s.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  url = `http://127.0.0.1:${address.port}`;
  anonKey = (await supabaseKeysOf(SUPABASE_LOCAL_JWT_SECRET)).anon;
});
afterAll(async () => {
  await s?.stop();
});

describe('functions.invoke (supabase-js) on /functions/v1', () => {
  it('reaches a Deno.serve function with its body, its npm: import and its secrets; the function sees /<name>', async () => {
    const supabase = createClient(url, anonKey);
    const { data, error } = await supabase.functions.invoke('hello', { body: { name: 'Ada' } });
    expect(error).toBeNull();
    expect(data).toEqual({ message: 'Hello Ada!', secret: 's3cret', path: '/hello' });
  });

  it("supabase-js inside the function: the caller's client under RLS, SUPABASE_SERVICE_ROLE_KEY through the server only", async () => {
    const supabase = createClient(url, anonKey);
    const { data, error } = await supabase.functions.invoke('notes');
    expect(error).toBeNull();
    expect(data).toEqual({ mine: [], all: [{ body: 'one' }, { body: 'two' }], error: null });
    // The function's SUPABASE_SERVICE_ROLE_KEY is a stand-in: outside the function it is no key.
    const env = await s.app.inject({ url: '/rest/v1/notes', headers: { apikey: 'plinth-function-service-x' } });
    expect(env.statusCode).toBe(401);
  });

  it("answers in Supabase's shapes: 404 NOT_FOUND, 401 for a bad JWT (unless config.toml's verify_jwt = false), 500 WORKER_ERROR", async () => {
    const supabase = createClient(url, anonKey);
    const missing = await supabase.functions.invoke('nope');
    expect(missing.error).toBeInstanceOf(FunctionsHttpError);
    expect(missing.error.context.status).toBe(404);
    expect(await missing.error.context.json()).toEqual({ code: 'NOT_FOUND', message: 'Requested function was not found' });

    const bad = await fetch(`${url}/functions/v1/hello`, {
      method: 'POST',
      headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bad' },
      body: '{}',
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ code: 401, message: 'Invalid JWT' });
    const hook = await fetch(`${url}/functions/v1/public-hook`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-a-jwt' },
      body: 'x',
    });
    expect(hook.status).toBe(200);
    expect(await hook.text()).toBe('received');

    const fails = await supabase.functions.invoke('fails');
    expect(fails.error.context.status).toBe(500);
    expect(await fails.error.context.json()).toEqual({
      code: 'WORKER_ERROR',
      message: 'Function exited due to an error (please check logs)',
    });
  });
});
