import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsServer, functionsServer } from '../../../server/test/functions.js';
import { createClient, type PlinthClient } from '../../src/index.js';

// client.functions.invoke against a real server's project functions: the caller's token goes
// with the call, the answer is read by its type, a failure is `error`.

let s: FunctionsServer;
let url: string;
let anon: PlinthClient;
let ada: PlinthClient;

beforeAll(async () => {
  s = await functionsServer({
    'functions/whoami.ts': `
      export default async (req: Request, ctx: any) => Response.json({
        method: req.method, role: ctx.role, user: ctx.user?.id ?? null,
        type: req.headers.get('content-type'), body: req.method === 'GET' ? null : await req.text(),
      });`,
    'functions/text.ts': `export default () => new Response('plain words', { headers: { 'content-type': 'text/plain' } });`,
    'functions/bytes.ts': `export default () => new Response(new Uint8Array([0, 1, 2, 255]), { headers: { 'content-type': 'application/octet-stream' } });`,
    'functions/refuses.ts': `export default () => Response.json({ code: 'not_today', message: 'Come back tomorrow.' }, { status: 409 });`,
  });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
  anon = createClient(url, s.keys.publicKey, { auth: { persistSession: false } });
  ada = createClient(url, s.keys.publicKey, { auth: { persistSession: false } });
  const { error } = await ada.auth.signUp({ email: `ada-${Date.now()}@example.com`, password: 'correct horse battery' });
  expect(error).toBeNull();
});
afterAll(async () => {
  for (const c of [anon, ada]) c?.auth.dispose();
  await s?.stop();
});

describe('client.functions.invoke', () => {
  it('sends JSON by default and the caller with it: anon with the public key, a user with their token', async () => {
    const asAnon = await anon.functions.invoke<{ role: string; user: string | null; body: string; type: string }>('whoami', {
      body: { n: 1 },
    });
    expect(asAnon.error).toBeNull();
    expect(asAnon.data).toMatchObject({ method: 'POST', role: 'anon', user: null, body: '{"n":1}', type: 'application/json' });
    const me = (await ada.auth.getUser()).data?.user.id;
    const asAda = await ada.functions.invoke<{ role: string; user: string }>('whoami', { method: 'GET' });
    expect(asAda.data).toMatchObject({ method: 'GET', role: 'authenticated', user: me });
  });

  it('a string goes as text; the answer is read by its type (JSON, text, bytes)', async () => {
    expect((await anon.functions.invoke('whoami', { body: 'hello' })).data).toMatchObject({
      body: 'hello',
      type: 'text/plain;charset=UTF-8',
    });
    expect((await anon.functions.invoke('text')).data).toBe('plain words');
    const bytes = (await anon.functions.invoke<Blob>('bytes')).data;
    expect(bytes).toBeInstanceOf(Blob);
    expect([...new Uint8Array(await (bytes as Blob).arrayBuffer())]).toEqual([0, 1, 2, 255]);
  });

  it("a refusal is `error` with the function's own code; a missing function is function_not_found; a bad name is refused unsent", async () => {
    const refused = await anon.functions.invoke('refuses');
    expect(refused.data).toBeNull();
    expect(refused.error).toMatchObject({ code: 'not_today', message: 'Come back tomorrow.', status: 409 });
    expect((await anon.functions.invoke('nowhere')).error).toMatchObject({ code: 'function_not_found', status: 404 });
    expect((await anon.functions.invoke('../admin')).error).toMatchObject({ code: 'invalid_request', status: 0 });
  });
});
