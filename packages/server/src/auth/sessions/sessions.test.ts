import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
});
afterAll(() => t?.stop());

const refresh = (token: string) => call(t, 'POST', 'refresh', { refresh_token: token });
const me = (access: string) => call(t, 'GET', 'user', undefined, asUser(t, access));

async function freshSession() {
  const addr = email('s');
  await signUp(t, addr);
  return signIn(t, addr);
}

describe('refresh', () => {
  it('rotates the refresh token and issues a new access token for the same session', async () => {
    const s0 = await freshSession();
    t.clock.advance(1000);
    const res = await refresh(s0.refresh_token);
    expect(res.statusCode, res.body).toBe(200);
    const s1 = res.json();
    expect(s1.refresh_token).not.toBe(s0.refresh_token);
    expect(s1.user.id).toBe(s0.user.id);
    expect(decodeJwt(s1.access_token).session_id).toBe(decodeJwt(s0.access_token).session_id);
    expect(decodeJwt(s1.access_token).iat).toBeGreaterThan(decodeJwt(s0.access_token).iat ?? 0);
    expect((await refresh(s1.refresh_token)).statusCode).toBe(200);
  });

  it('two tabs inside the grace window get the same new token set', async () => {
    const s0 = await freshSession();
    const a = await refresh(s0.refresh_token);
    t.clock.advance(10_000); // exactly at the end of the window
    const b = await refresh(s0.refresh_token);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(b.json().refresh_token).toBe(a.json().refresh_token);
    // The whole set: the same access token too, with the same expiry.
    expect(b.json().access_token).toBe(a.json().access_token);
    expect(b.json().expires_at).toBe(a.json().expires_at);
    // The shared token is the session's live one: it rotates normally.
    expect((await refresh(a.json().refresh_token)).statusCode).toBe(200);
  });

  it('two refreshes at the same instant: both succeed with one token set', async () => {
    const s0 = await freshSession();
    const [a, b] = await Promise.all([refresh(s0.refresh_token), refresh(s0.refresh_token)]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(a.json().refresh_token).toBe(b.json().refresh_token);
    expect(a.json().access_token).toBe(b.json().access_token);
    const { rows } = await t.db.query<{ n: number }>('select count(*)::int as n from auth.refresh_tokens where session_id = $1', [
      decodeJwt(s0.access_token).session_id,
    ]);
    expect(rows[0].n).toBe(2); // the original and one child, not two
  });

  it('a late tab gets the newest token when the first tab rotated twice within the window', async () => {
    const s0 = await freshSession();
    const s1 = (await refresh(s0.refresh_token)).json();
    t.clock.advance(2000);
    const s2 = (await refresh(s1.refresh_token)).json();
    t.clock.advance(2000);
    const late = await refresh(s0.refresh_token);
    expect(late.statusCode).toBe(200);
    expect(late.json().refresh_token).toBe(s2.refresh_token);
    expect(late.json().access_token).toBe(s2.access_token);
  });

  it('reuse after the grace window ends the session: 401 refresh_token_reused, the newest token dies too', async () => {
    const s0 = await freshSession();
    const s1 = (await refresh(s0.refresh_token)).json();
    t.clock.advance(10_001);
    expect(code(await refresh(s0.refresh_token))).toEqual([401, 'refresh_token_reused']);
    expect(code(await refresh(s1.refresh_token))).toEqual([401, 'invalid_refresh_token']);
    expect(code(await me(s1.access_token))).toEqual([401, 'invalid_token']);
    const { rows } = await t.db.query<{ revoked: boolean; successor_enc: string | null }>(
      'select revoked, successor_enc from auth.refresh_tokens where session_id = $1',
      [decodeJwt(s0.access_token).session_id],
    );
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.every((r) => r.revoked && r.successor_enc === null)).toBe(true);
  });

  it('a session ends after 30 days without refresh; refreshing keeps it alive', async () => {
    const a = await freshSession();
    const b = await freshSession();
    t.clock.advance(29 * 86_400_000);
    const b1 = await refresh(b.refresh_token);
    expect(b1.statusCode).toBe(200);
    t.clock.advance(86_400_000 + 1000);
    expect(code(await refresh(a.refresh_token))).toEqual([401, 'invalid_refresh_token']);
    expect((await refresh(b1.json().refresh_token)).statusCode).toBe(200);
  });

  it.each([
    ['an unknown token', { refresh_token: 'x'.repeat(43) }, 401, 'invalid_refresh_token'],
    ['a too short token', { refresh_token: 'abc' }, 401, 'invalid_refresh_token'],
    ['no token', {}, 400, 'invalid_request'],
  ])('refuses %s', async (_name, body, status, errorCode) => {
    expect(code(await call(t, 'POST', 'refresh', body))).toEqual([status, errorCode]);
  });

  it('stores only SHA-256 of refresh tokens, never the raw value', async () => {
    const s0 = await freshSession();
    const s1 = (await refresh(s0.refresh_token)).json();
    const { rows } = await t.db.query<{ dump: string }>("select string_agg(r::text, ' ') as dump from auth.refresh_tokens r");
    expect(rows[0].dump).not.toContain(s0.refresh_token);
    expect(rows[0].dump).not.toContain(s1.refresh_token);
  });
});

describe('access tokens', () => {
  it('expire after session_duration_seconds: 401 token_expired, then a refresh gives a working one', async () => {
    const s0 = await freshSession();
    expect((await me(s0.access_token)).statusCode).toBe(200);
    t.clock.advance(3601_000);
    expect(code(await me(s0.access_token))).toEqual([401, 'token_expired']);
    const s1 = (await refresh(s0.refresh_token)).json();
    expect((await me(s1.access_token)).statusCode).toBe(200);
  });

  it('a client that still sends its expired access token can refresh and sign in', async () => {
    const s0 = await freshSession();
    t.clock.advance(3601_000);
    const stale = asUser(t, s0.access_token);
    const res = await call(t, 'POST', 'refresh', { refresh_token: s0.refresh_token }, stale);
    expect(res.statusCode, res.body).toBe(200);
    const again = await call(t, 'POST', 'signin', { email: s0.user.email, password: 'correct horse battery' }, asUser(t, 'eyJnot.a.token'));
    expect(again.statusCode, again.body).toBe(200);
  });
});

describe('sign-out', () => {
  it('local: ends this session only', async () => {
    const addr = email('out');
    await signUp(t, addr);
    const a = await signIn(t, addr);
    const b = await signIn(t, addr);
    const res = await call(t, 'POST', 'signout', {}, asUser(t, a.access_token));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(code(await me(a.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await refresh(a.refresh_token))).toEqual([401, 'invalid_refresh_token']);
    expect((await me(b.access_token)).statusCode).toBe(200);
    expect((await refresh(b.refresh_token)).statusCode).toBe(200);
  });

  it('global: ends every session of the user, not of others', async () => {
    const addr = email('out');
    await signUp(t, addr);
    const a = await signIn(t, addr);
    const b = await signIn(t, addr);
    const other = await freshSession();
    expect((await call(t, 'POST', 'signout', { scope: 'global' }, asUser(t, a.access_token))).statusCode).toBe(204);
    for (const s of [a, b]) expect(code(await refresh(s.refresh_token))).toEqual([401, 'invalid_refresh_token']);
    expect((await refresh(other.refresh_token)).statusCode).toBe(200);
  });

  it('works without a body, and refuses a bad scope or a missing token', async () => {
    const s = await freshSession();
    expect(code(await call(t, 'POST', 'signout', { scope: 'everywhere' }, asUser(t, s.access_token)))).toEqual([400, 'invalid_request']);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/signout', headers: asUser(t, s.access_token) })).statusCode).toBe(204);
    expect(code(await call(t, 'POST', 'signout', {}))).toEqual([401, 'unauthorized']);
  });
});
