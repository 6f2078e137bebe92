import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

// "Ends its sessions" means what it says: an access token of a session that was signed out,
// revoked or whose user is banned stops working on the REST API, not only at its expiry.
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  const made = await t.sql(
    'create table diary (id serial primary key, owner uuid not null default auth.uid(), body text); create policy own on diary using (owner = auth.uid()) with check (owner = auth.uid());',
  );
  expect(made.statusCode, made.body).toBe(200);
});
afterAll(() => t?.stop());

const read = (token: string) => t.app.inject({ url: '/api/v1/db/diary', headers: t.as.user(token) });

describe('the REST API refuses tokens of ended sessions', () => {
  it('sign-out (local): that session’s token is refused at once, another session’s still works', async () => {
    const addr = email();
    const { session } = await signUp(t, addr);
    const other = await signIn(t, addr);
    expect((await read(session.access_token)).statusCode).toBe(200);
    expect((await call(t, 'POST', 'signout', {}, asUser(t, session.access_token))).statusCode).toBe(204);
    expect(code(await read(session.access_token))).toEqual([401, 'invalid_token']);
    expect((await read(other.access_token)).statusCode).toBe(200);
  });

  it('sign-out (global) ends every session of the user', async () => {
    const addr = email();
    const { session } = await signUp(t, addr);
    const other = await signIn(t, addr);
    await call(t, 'POST', 'signout', { scope: 'global' }, asUser(t, session.access_token));
    expect(code(await read(other.access_token))).toEqual([401, 'invalid_token']);
  });

  it('a refresh token reused after the grace window ends the session for REST too', async () => {
    const { session } = await signUp(t, email());
    const rotated = (await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token })).json();
    t.clock.advance(11_000);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).toEqual([401, 'refresh_token_reused']);
    expect(code(await read(rotated.access_token))).toEqual([401, 'invalid_token']);
  });
});

describe('banned users', () => {
  it('cannot sign in or refresh (403 user_banned), and their open sessions stop working; once the ban runs out they can sign in', async () => {
    const addr = email('banned');
    const { session, user } = await signUp(t, addr);
    const until = new Date(t.clock.now() + 3600_000).toISOString();
    await t.db.query('update auth.users set banned_until = $2::timestamptz where id = $1', [user.id, until]);
    expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' }))).toEqual([403, 'user_banned']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).toEqual([403, 'user_banned']);
    // A ban written straight into the database reaches the REST API once the gate asks again.
    t.clock.advance(t.auth.config.sessionCheckMs + 1);
    expect(code(await read(session.access_token))).toEqual([401, 'invalid_token']);
    // The ban runs out: sign-in works again.
    t.clock.advance(3600_000);
    const back = await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' });
    expect(back.statusCode).toBe(200);
    expect((await read(back.json().access_token)).statusCode).toBe(200);
  });

  it('a wrong password still answers invalid_credentials (a ban says nothing to a guesser)', async () => {
    const addr = email('banned2');
    const { user } = await signUp(t, addr);
    await t.db.query(`update auth.users set banned_until = now() + interval '1 day' where id = $1`, [user.id]);
    expect(code(await call(t, 'POST', 'signin', { email: addr, password: 'not the password' }))).toEqual([400, 'invalid_credentials']);
  });
});

describe('token claims', () => {
  it('say whether the email and phone were proven (email_verified, phone_verified)', async () => {
    const { session } = await signUp(t, email());
    const claims = decodeJwt(session.access_token);
    expect(claims).toMatchObject({ email_verified: false, phone_verified: false });
    // No phone: no `phone` claim (a null there types as an object to auth-js's getClaims).
    expect(claims).not.toHaveProperty('phone');
    expect(typeof claims.email).toBe('string');
  });
});
