import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastToken, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import type { Db } from '../../db/index.js';
import { createSessionGate } from './gate.js';

// Session state has one home (sessions/state.ts): what ends a session ends it for every API,
// and the question "is this session open" is answered alike by the REST API's cached gate, the
// auth endpoints and the refresh. Issue 19: a ban revokes, an address change ends the other
// sessions, and an answer read while a revocation arrived is not cached.
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, { allowed_redirect_urls: ['https://app.example.com/'], email_verification_url: 'https://app.example.com/verify' });
  const made = await t.sql(
    'create table pages (id serial primary key, owner uuid not null default auth.uid(), body text); create policy own on pages using (owner = auth.uid()) with check (owner = auth.uid());',
  );
  expect(made.statusCode, made.body).toBe(200);
});
afterAll(() => t?.stop());

const rest = (token: string) => t.app.inject({ url: '/api/v1/db/pages', headers: t.as.user(token) });
const me = (token: string) => call(t, 'GET', 'user', undefined, asUser(t, token));
const admin = (id: string, payload: object) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/users/${id}`, headers: t.as.service, payload });
function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve: () => resolve() };
}
/** Past the gate's cache, so an answer comes from the database again. */
const pastCache = () => t.clock.advance(t.auth.config.sessionCheckMs + 1);

describe('a ban revokes', () => {
  it('the sessions a ban ended stay ended when it is lifted: their access and refresh tokens never work again', async () => {
    const addr = email('ban');
    const { user, session } = await signUp(t, addr);
    expect((await rest(session.access_token)).statusCode).toBe(200);
    const ban = await admin(user.id, { banned_until: new Date(t.clock.now() + 3600_000).toISOString() });
    expect(ban.statusCode, ban.body).toBe(200);
    expect(code(await rest(session.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).toEqual([403, 'user_banned']);

    expect((await admin(user.id, { banned_until: null })).statusCode).toBe(200);
    pastCache();
    expect(code(await rest(session.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await me(session.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    // The user signs in again, as anyone whose sessions ended.
    expect((await rest((await signIn(t, addr)).access_token)).statusCode).toBe(200);
  });

  it('a ban written straight into the database is answered alike by the REST API, the auth endpoints and refresh', async () => {
    const { user, session } = await signUp(t, email('ban-sql'));
    await t.db.query(`update auth.users set banned_until = now() + interval '1 hour' where id = $1`, [user.id]);
    pastCache();
    expect(code(await rest(session.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await me(session.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).toEqual([403, 'user_banned']);
  });
});

describe('an address change ends the other sessions (their tokens claim the old address as verified)', () => {
  it('the user’s own email change: every session but the one that asked ends when the link is used', async () => {
    const addr = email('move');
    const { session } = await signUp(t, addr);
    const other = await signIn(t, addr);
    const next = email('moved');
    expect((await call(t, 'PATCH', 'user', { email: next }, asUser(t, session.access_token))).statusCode).toBe(200);
    expect((await rest(other.access_token)).statusCode).toBe(200); // nothing happens before the link is used
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, next, 'email_change') })).statusCode).toBe(200);
    expect(code(await rest(other.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: other.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    // The session that asked stays, and its next token claims the new address.
    expect((await rest(session.access_token)).statusCode).toBe(200);
    const refreshed = await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().user.email).toBe(next);
  });

  it('an operator’s email change, phone change or unconfirmation ends every session', async () => {
    const changes: Array<[object, boolean]> = [
      [{ email: email('op-new') }, false],
      [{ phone: `+4670${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}` }, false],
      [{ email_confirmed: false }, true],
    ];
    for (const [body, confirmFirst] of changes) {
      const addr = email('op');
      const { user, session } = await signUp(t, addr);
      if (confirmFirst) expect((await admin(user.id, { email_confirmed: true })).statusCode).toBe(200);
      const fresh = await signIn(t, addr);
      const res = await admin(user.id, body);
      expect(res.statusCode, res.body).toBe(200);
      for (const s of [session, fresh]) {
        expect(code(await rest(s.access_token)), JSON.stringify(body)).toEqual([401, 'invalid_token']);
        expect(code(await call(t, 'POST', 'refresh', { refresh_token: s.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
      }
    }
  });

  it('an operator’s change that changes nothing (the same phone) ends nothing', async () => {
    const addr = email('same');
    const { user, session } = await signUp(t, addr);
    const phone = '+46701234599';
    expect((await admin(user.id, { phone })).statusCode).toBe(200);
    const after = await signIn(t, addr);
    expect((await admin(user.id, { phone })).statusCode).toBe(200);
    expect((await rest(after.access_token)).statusCode).toBe(200);
    expect(code(await rest(session.access_token))).toEqual([401, 'invalid_token']); // ended by the first change
  });
});

describe('the gate never caches an answer that a revocation overtook', () => {
  it('a lookup under way while another instance revokes the session is read again, not kept for the cache’s life', async () => {
    const addr = email('race');
    const { user, session } = await signUp(t, addr);
    const sid = JSON.parse(Buffer.from(session.access_token.split('.')[1], 'base64url').toString()).session_id as string;
    // A second instance's gate on the same database, whose lookups can be held after the
    // database answered: the answer "open" is read, then the session is signed out on the
    // first instance and the second hears of it, then the held answer comes back.
    const release = deferred();
    const read = deferred();
    const notified = deferred();
    let hold: Promise<void> | null = null;
    const held = new Proxy(t.db, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return async (sql: string, params?: unknown[]) => {
            const res = await target.query(sql, params);
            if (hold && /auth\.sessions/.test(sql)) {
              const wait = hold;
              hold = null;
              read.resolve();
              await wait;
            }
            return res;
          };
        }
        if (prop === 'listen') {
          return (channel: string, fn: (payload: string) => void) =>
            target.listen(channel, (payload) => {
              fn(payload);
              notified.resolve();
            });
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as Db;
    const other = await createSessionGate(held, t.clock, 60_000);
    try {
      hold = release.promise;
      const answer = other.isOpen(sid, user.id);
      await read.promise;
      expect((await call(t, 'POST', 'signout', {}, asUser(t, session.access_token))).statusCode).toBe(204);
      await notified.promise;
      release.resolve();
      expect(await answer).toBe(false);
      expect(await other.isOpen(sid, user.id)).toBe(false);
    } finally {
      await other.close();
    }
  });
});
