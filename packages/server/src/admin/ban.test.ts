import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, signIn, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// A ban set through the end-user administration route is enforced by the auth area at
// sign-in and refresh (docs/api.md §4.2: 403 user_banned); lifting it lets the user back in.
// The enforcement lives in the auth area (the accounts module), not in admin/.

let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
});
afterAll(async () => {
  await t?.stop();
});

describe('a banned user (banned_until ahead)', () => {
  it('cannot sign in or refresh (403 user_banned) until the ban is lifted or runs out', async () => {
    const addr = email('banned');
    const { user, session } = await signUp(t, addr);
    const until = new Date(t.clock.now() + 3600_000).toISOString();
    const ban = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: t.as.service,
      payload: { banned_until: until },
    });
    expect(ban.statusCode, ban.body).toBe(200);

    const signin = await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' });
    expect([signin.statusCode, signin.json().code]).toEqual([403, 'user_banned']);
    const refresh = await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token });
    expect([refresh.statusCode, refresh.json().code]).toEqual([403, 'user_banned']);

    t.clock.advance(3600_000 + 1000); // the ban runs out
    await signIn(t, addr);

    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: t.as.service,
      payload: { banned_until: '2999-01-01T00:00:00Z' },
    });
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' })).json().code).toBe('user_banned');
    await t.app.inject({ method: 'PATCH', url: `/api/v1/users/${user.id}`, headers: t.as.service, payload: { banned_until: null } });
    await signIn(t, addr);
  });
});
