import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, lastToken, mailsTo, signIn, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// End-user administration (docs/api.md §4.2) with the secret key; the admin cookie reaches the same
// handlers through the same guard (admin.test.ts).

let t: TestServer;
const APP = 'https://app.example.com';

beforeAll(async () => {
  t = await createAuthServer();
  await t.settings.updateAuth({ allowed_redirect_urls: [APP], email_verification_url: `${APP}/verify` });
});
afterAll(async () => {
  await t?.stop();
});

const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: t.as.service, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('list and search', () => {
  it('finds by part of the email or phone, newest first, with the total in Content-Range', async () => {
    const tag = `find${Date.now()}`;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const addr = email(tag);
      made.push(addr);
      await signUp(t, addr);
      t.clock.advance(1000);
    }
    const page = await admin('GET', `/api/v1/users?search=${tag.toUpperCase()}&limit=2`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-range']).toBe('0-1/3');
    expect(page.json().map((u: { email: string }) => u.email)).toEqual([made[2], made[1]]);
    const next = await admin('GET', `/api/v1/users?search=${tag}&limit=2&offset=2`);
    expect(next.headers['content-range']).toBe('2-2/3');
    expect(next.json()[0].email).toBe(made[0]);

    const byPhone = await admin('POST', '/api/v1/users', { phone: '+46701234599' });
    expect(byPhone.statusCode, byPhone.body).toBe(201);
    const found = await admin('GET', '/api/v1/users?search=4599');
    expect(found.json().map((u: { id: string }) => u.id)).toEqual([byPhone.json().id]);
    // LIKE wildcards in the search are text, not patterns.
    expect((await admin('GET', '/api/v1/users?search=%25')).headers['content-range']).toBe('*/0');
    expect((await admin('GET', '/api/v1/users?limit=-1')).json().code).toBe('invalid_parameter');
  });

  it('reads auth.users by its full name, whatever public.users an app has made', async () => {
    expect((await t.sql('create table public.users (id int primary key, handle text)')).statusCode).toBe(200);
    const addr = email('shadow');
    await signUp(t, addr);
    const res = await admin('GET', `/api/v1/users?search=${encodeURIComponent(addr)}`);
    expect(res.json()[0].email).toBe(addr);
    await t.sql('drop table public.users');
  });
});

describe('detail, create, update', () => {
  it('shows identities and open sessions with agent and IP', async () => {
    const addr = email('detail');
    const { user } = await signUp(t, addr);
    await signIn(t, addr);
    const res = await admin('GET', `/api/v1/users/${user.id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.identities).toEqual([expect.objectContaining({ provider: 'email', email: addr })]);
    expect(body.sessions).toHaveLength(2);
    expect(body.sessions[0]).toEqual(
      expect.objectContaining({
        user_agent: 'vitest-agent',
        ip: '127.0.0.1',
        created_at: expect.any(String),
        refreshed_at: expect.any(String),
      }),
    );
    expect(body.banned_until).toBeNull();
    expect((await admin('GET', '/api/v1/users/00000000-0000-0000-0000-000000000000')).json().code).toBe('user_not_found');
    expect((await admin('GET', '/api/v1/users/not-a-uuid')).statusCode).toBe(404);
  });

  it('creates a confirmed user who can sign in; refuses duplicates and short passwords', async () => {
    const addr = email('created');
    const res = await admin('POST', '/api/v1/users', {
      email: addr.toUpperCase(),
      password: 'correct horse battery',
      email_confirmed: true,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual(expect.objectContaining({ email: addr, email_confirmed_at: expect.any(String) }));
    await signIn(t, addr);
    expect((await admin('POST', '/api/v1/users', { email: addr })).json().code).toBe('email_exists');
    expect((await admin('POST', '/api/v1/users', { email: email('weak'), password: 'short' })).json().code).toBe('weak_password');
    expect((await admin('POST', '/api/v1/users', { email: 'not an email' })).json().code).toBe('invalid_email');
    expect((await admin('POST', '/api/v1/users', {})).json().code).toBe('invalid_request');
  });

  it('confirms, bans and unbans, changes the email and the password (which ends the sessions)', async () => {
    const addr = email('update');
    const { user, session } = await signUp(t, addr);
    const confirmed = await admin('PATCH', `/api/v1/users/${user.id}`, { email_confirmed: true });
    expect(confirmed.json().email_confirmed_at).toEqual(expect.any(String));

    const until = new Date(t.clock.now() + 86_400_000).toISOString();
    const banned = await admin('PATCH', `/api/v1/users/${user.id}`, { banned_until: until });
    expect(banned.json().banned_until).toBe(until);
    expect((await admin('PATCH', `/api/v1/users/${user.id}`, { banned_until: 'tomorrow' })).json().code).toBe('invalid_value');
    expect((await admin('PATCH', `/api/v1/users/${user.id}`, { banned_until: null })).json().banned_until).toBeNull();

    const moved = email('moved');
    const changed = await admin('PATCH', `/api/v1/users/${user.id}`, { email: moved, email_confirmed: true });
    expect(changed.json()).toEqual(
      expect.objectContaining({ email: moved, identities: [expect.objectContaining({ provider: 'email', email: moved })] }),
    );

    const reset = await admin('PATCH', `/api/v1/users/${user.id}`, { password: 'another long password' });
    expect(reset.statusCode).toBe(200);
    const refresh = await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token });
    expect(refresh.json().code).toBe('invalid_refresh_token');
    await signIn(t, moved, 'another long password');
  });
});

describe('sign out everywhere, resend verification, delete', () => {
  it('signout revokes every session: their refresh tokens stop working', async () => {
    const addr = email('signout');
    const { user, session } = await signUp(t, addr);
    const second = await signIn(t, addr);
    const res = await admin('POST', `/api/v1/users/${user.id}/signout`);
    expect(res.json()).toEqual({ revoked: 2 });
    for (const s of [session, second]) {
      expect((await call(t, 'POST', 'refresh', { refresh_token: s.refresh_token })).json().code).toBe('invalid_refresh_token');
    }
    expect((await admin('GET', `/api/v1/users/${user.id}`)).json().sessions).toEqual([]);
  });

  it('resend-verification mails the link to an unconfirmed address, refuses a confirmed one', async () => {
    const addr = email('resend');
    const made = await admin('POST', '/api/v1/users', { email: addr });
    const res = await admin('POST', `/api/v1/users/${made.json().id}/resend-verification`);
    expect(res.json()).toEqual({ sent: true, to: addr });
    expect((await mailsTo(t, addr)).map((m) => m.kind)).toEqual(['verification']);
    const token = await lastToken(t, addr, 'verification');
    expect((await call(t, 'POST', 'verify-email', { token })).statusCode).toBe(200);
    const again = await admin('POST', `/api/v1/users/${made.json().id}/resend-verification`);
    expect([again.statusCode, again.json().code]).toEqual([409, 'email_already_confirmed']);
  });

  it('delete removes the user with its sessions and identities', async () => {
    const addr = email('delete');
    const { user, session } = await signUp(t, addr);
    const res = await admin('DELETE', `/api/v1/users/${user.id}`);
    expect(res.json().email).toBe(addr);
    expect((await admin('GET', `/api/v1/users/${user.id}`)).statusCode).toBe(404);
    const left = await t.db.query(
      'select (select count(*) from auth.sessions where user_id = $1)::int as s, (select count(*) from auth.identities where user_id = $1)::int as i',
      [user.id],
    );
    expect(left.rows[0]).toEqual({ s: 0, i: 0 });
    expect((await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token })).statusCode).toBe(401);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' })).json().code).toBe('invalid_credentials');
  });
});
