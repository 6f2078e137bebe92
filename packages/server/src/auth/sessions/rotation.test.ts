import { decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { createTokenService, RETIRE_AFTER_MS, type TokenService } from './jwt.js';

// Issue 19, signing-key rotation (docs/security.md, "Signing keys"): a new ES256 key signs from
// then on; the old one stays in the JWKS until the longest token lifetime has passed, or with
// `revoke` goes at once and every session signs in again. A second token service on the same
// database stands for another instance: it hears of the rotation through NOTIFY.
let t: TestServer;
let other: TokenService;
beforeEach(async () => {
  t = await createAuthServer();
  other = await createTokenService(t.db, t.tokens.issuer, t.clock);
  const made = await t.sql(
    'create table items (id serial primary key, owner uuid not null default auth.uid()); create policy own on items using (owner = auth.uid());',
  );
  expect(made.statusCode, made.body).toBe(200);
});
afterEach(async () => {
  await other?.close();
  await t?.stop();
});

const rotate = (payload: object = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/admin/signing-keys/rotate', headers: t.as.service, payload });
const kids = async () =>
  (await t.app.inject({ url: '/v1/auth/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid) as string[];
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const rest = (token: string) => t.app.inject({ url: '/api/v1/db/items', headers: t.as.user(token) });

describe('rotating the signing key', () => {
  it('the new key signs at once, here and on the other instance; the old key’s tokens work until it retires', async () => {
    const before = await signUp(t, email('rot'));
    const oldKid = kidOf(before.session.access_token);
    const res = await rotate();
    expect(res.statusCode, res.body).toBe(200);
    const rotation = res.json();
    expect(rotation).toMatchObject({ kid: expect.any(String), previous: [oldKid], revoked: false, sessions_ended: 0 });
    expect(Date.parse(rotation.retire_at) - t.clock.now()).toBe(RETIRE_AFTER_MS);
    expect(rotation.kid).not.toBe(oldKid);
    expect(await kids()).toEqual([rotation.kid, oldKid]);

    const after = await signIn(t, before.user.email);
    expect(kidOf(after.access_token)).toBe(rotation.kid);
    expect((await rest(before.session.access_token)).statusCode).toBe(200);
    expect((await rest(after.access_token)).statusCode).toBe(200);
    // The other instance signs with the new key once it has heard, and still takes the old one's tokens.
    await expect.poll(async () => kidOf((await other.sign({ sub: before.user.id }, 60)).token)).toBe(rotation.kid);
    await expect(other.verify(before.session.access_token)).resolves.toBeTruthy();

    // The longest life of a token the old key signed is over: it leaves the JWKS.
    t.clock.advance(RETIRE_AFTER_MS + 1000);
    expect(await kids()).toEqual([rotation.kid]);
    expect(other.jwks().keys.map((k) => k.kid)).toEqual([rotation.kid]);
  });

  it('with revoke, the old key goes at once: every session ends, its tokens and signed URLs are refused on both instances', async () => {
    const user = await signUp(t, email('revoke'));
    const token = user.session.access_token;
    await expect(other.verify(token)).resolves.toBeTruthy(); // cached by the other instance
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: t.as.service, payload: { name: 'b' } })).statusCode,
    ).toBe(201);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/b/a.txt',
      headers: { ...t.as.service, 'content-type': 'text/plain' },
      payload: 'a',
    });
    const signed = (
      await t.app.inject({ method: 'POST', url: '/api/v1/storage/sign/b/a.txt', headers: t.as.service, payload: { expires_in: 600 } })
    ).json().signed_url as string;
    const signedPath = signed.replace('http://localhost:8080', '');
    expect((await t.app.inject({ url: signedPath })).statusCode).toBe(200);

    const res = await rotate({ revoke: true });
    expect(res.statusCode, res.body).toBe(200);
    const rotation = res.json();
    expect(rotation).toMatchObject({ revoked: true, retire_at: null, previous: [kidOf(token)] });
    expect(rotation.sessions_ended).toBeGreaterThanOrEqual(1);
    expect(await kids()).toEqual([rotation.kid]);
    expect(code(await rest(token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: user.session.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    expect(code(await t.app.inject({ url: signedPath }))).toEqual([400, 'token_invalid']);
    await expect
      .poll(async () =>
        other.verify(token).then(
          () => 'accepted',
          (err) => err.code,
        ),
      )
      .toBe('invalid_token');

    // Signing in again works, and the other instance takes the new tokens.
    const again = await signIn(t, user.user.email);
    expect(kidOf(again.access_token)).toBe(rotation.kid);
    expect((await rest(again.access_token)).statusCode).toBe(200);
    await expect(other.verify(again.access_token)).resolves.toBeTruthy();
  });

  it('an empty body is a plain rotation; anything but a boolean revoke is a 400', async () => {
    const plain = await t.app.inject({ method: 'POST', url: '/api/v1/admin/signing-keys/rotate', headers: t.as.service });
    expect([plain.statusCode, plain.json().revoked]).toEqual([200, false]);
    expect(code(await rotate({ revoke: 'yes' }))).toEqual([400, 'invalid_request']);
    const anon = await t.app.inject({ method: 'POST', url: '/api/v1/admin/signing-keys/rotate', headers: t.as.anon, payload: {} });
    expect(code(anon)).toEqual([403, 'forbidden']);
  });
});
