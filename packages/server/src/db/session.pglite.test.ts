import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// PGlite has one connection for every request. Whatever changes its session for good (here a
// function a REST read runs, which sets the role for the session rather than the transaction)
// breaks every later request: /health must notice, and the session is put back.
let t: TestServer;
let addr: string;
beforeAll(async () => {
  t = await createAuthServer();
  const res = await t.sql(`create function leak_role() returns int language sql as $$ select length(set_config('role', 'anon', false)) $$;
    create view leaky as select leak_role() as x;
    grant select on leaky to anon;
    grant execute on function leak_role() to anon;`);
  expect(res.statusCode, res.body).toBe(200);
  addr = email('session');
  await signUp(t, addr);
});
afterAll(() => t?.stop());

describe('the embedded database session', () => {
  it('/health answers 503 naming the broken session, and the session is reset', async () => {
    expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    const leak = await t.app.inject({ url: '/api/v1/db/leaky', headers: t.as.anon });
    expect(leak.statusCode, leak.body).toBe(200);
    // While the worker is busy (a background query in flight) /health answers 200 at once: busy
    // means alive. The first check it makes idle notices the broken session.
    let health = await t.app.inject({ url: '/health' });
    for (const deadline = Date.now() + 15_000; health.statusCode === 200 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
      health = await t.app.inject({ url: '/health' });
    }
    expect(health.statusCode, health.body).toBe(503);
    expect(health.json()).toMatchObject({ status: 'unavailable', code: 'database_unavailable' });
    expect(health.json().message).toMatch(/role "anon"/);
    // Put back: health and auth work again.
    expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    const signin = await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' });
    expect(signin.statusCode, signin.body).toBe(200);
  });
});
