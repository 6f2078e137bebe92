import { AuthApiError, AuthClient, isAuthSessionMissingError } from '@supabase/auth-js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthServer, email, setAuth } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { injectFetch } from '../../../test/supabase-auth.js';
import { TestAuthenticator } from '../../../test/webauthn.js';

// GoTrue's passkey endpoints (/auth/v1/passkeys…), driven by auth-js's own passkey API, on
// Plinth's passkey service: the relying party is the project's, whatever the client says.
const PASSWORD = 'correct horse battery';
const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:5173';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, { passkey_enabled: true, passkey_rp_id: RP_ID, passkey_origins: [ORIGIN] });
});
afterAll(() => t?.stop());

function client(key = t.keys.publicKey) {
  return new AuthClient({
    url: 'http://localhost:8080/auth/v1',
    headers: { apikey: key, Authorization: `Bearer ${key}` },
    fetch: injectFetch(t),
    persistSession: false,
    autoRefreshToken: false,
    detectSessionInUrl: false,
    experimental: { passkey: true },
  });
}

/** An API error's [status, GoTrue code]. */
function why(error: unknown) {
  expect(error).toBeInstanceOf(AuthApiError);
  return [(error as AuthApiError).status, (error as AuthApiError).code];
}

const authenticator = (origin = ORIGIN, rpId = RP_ID) => new TestAuthenticator({ rpId, origin });

/** A user signed up with a password through auth-js, holding an aal1 session. */
async function signedUp() {
  const c = client();
  const { data, error } = await c.signUp({ email: email('pk'), password: PASSWORD });
  expect(error).toBeNull();
  return { c, user: data.user! };
}

/** A passkey registered through GoTrue's two steps. */
async function registered(c: InstanceType<typeof AuthClient>, key = authenticator()) {
  const start = await c.passkey.startRegistration();
  expect(start.error).toBeNull();
  const made = await c.passkey.verifyRegistration({ challengeId: start.data!.challenge_id, credential: key.create(start.data!.options) });
  expect(made.error).toBeNull();
  return { key, passkey: made.data! };
}

describe('registration', () => {
  it('startRegistration answers GoTrue’s {challenge_id, options, expires_at} with the project’s relying party; verifyRegistration stores the passkey', async () => {
    const { c, user } = await signedUp();
    const start = await c.passkey.startRegistration();
    expect(start.error).toBeNull();
    const { challenge_id, options, expires_at } = start.data!;
    expect(challenge_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(expires_at).toBeGreaterThan(Math.floor(t.clock.now() / 1000));
    expect(options.rp.id).toBe(RP_ID);
    expect(Buffer.from(options.user.id, 'base64url').toString('hex')).toBe(user.id.replace(/-/g, ''));
    expect(options.authenticatorSelection?.residentKey).toBe('required');
    const made = await c.passkey.verifyRegistration({ challengeId: challenge_id, credential: authenticator().create(options) });
    expect(made.error).toBeNull();
    expect(made.data).toEqual({ id: expect.any(String), friendly_name: 'Passkey', created_at: expect.any(String) });
    expect((await c.passkey.list()).data).toEqual([made.data]);
  });

  it('refuses a challenge_id that is unknown, used, or another user’s (which its owner can still use), and a credential made for another origin', async () => {
    const { c: alice } = await signedUp();
    const { c: mallory } = await signedUp();
    const start = await alice.passkey.startRegistration();
    const key = authenticator();
    const credential = key.create(start.data!.options);
    // Mallory sends Alice's challenge with her own session: unknown to her, and Alice's stays live.
    const stolen = await mallory.passkey.verifyRegistration({ challengeId: start.data!.challenge_id, credential });
    expect(why(stolen.error)).toEqual([400, 'webauthn_challenge_not_found']);
    expect((await mallory.passkey.list()).data).toEqual([]);
    const unknown = await alice.passkey.verifyRegistration({ challengeId: crypto.randomUUID(), credential });
    expect((unknown.error as AuthApiError)?.code).toBe('webauthn_challenge_not_found');
    expect((await alice.passkey.verifyRegistration({ challengeId: start.data!.challenge_id, credential })).error).toBeNull();
    const again = await alice.passkey.verifyRegistration({ challengeId: start.data!.challenge_id, credential });
    expect((again.error as AuthApiError)?.code).toBe('webauthn_challenge_not_found');
    // A phishing page's origin and another site's RP ID do not verify, and each spends its challenge.
    for (const evil of [authenticator('https://evil.example'), authenticator(ORIGIN, 'evil.example')]) {
      const s = await alice.passkey.startRegistration();
      const bad = await alice.passkey.verifyRegistration({ challengeId: s.data!.challenge_id, credential: evil.create(s.data!.options) });
      expect(why(bad.error)).toEqual([400, 'webauthn_verification_failed']);
      const retry = await alice.passkey.verifyRegistration({
        challengeId: s.data!.challenge_id,
        credential: authenticator().create(s.data!.options),
      });
      expect((retry.error as AuthApiError)?.code).toBe('webauthn_challenge_not_found');
    }
    expect((await alice.passkey.list()).data).toHaveLength(1);
  });

  it('needs a session', async () => {
    const { data, error } = await client().passkey.startRegistration();
    expect(data).toBeNull();
    expect(isAuthSessionMissingError(error)).toBe(true);
  });
});

describe('sign-in', () => {
  it('signs in username-less with GoTrue’s session (aal2 for a verified user), records last_used_at, and refuses a replayed challenge', async () => {
    const { c, user } = await signedUp();
    const { key, passkey } = await registered(c);
    const device = client();
    const start = await device.passkey.startAuthentication();
    expect(start.error).toBeNull();
    expect(start.data!.options.allowCredentials ?? []).toEqual([]);
    expect(start.data!.expires_at).toBeGreaterThan(Math.floor(t.clock.now() / 1000));
    const assertion = key.get(start.data!.options);
    const signedIn = await device.passkey.verifyAuthentication({ challengeId: start.data!.challenge_id, credential: assertion });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data!.user!.id).toBe(user.id);
    expect(decodeJwt(signedIn.data!.session!.access_token)).toMatchObject({ sub: user.id, aal: 'aal2', amr: [{ method: 'passkey' }] });
    expect((await device.getUser(signedIn.data!.session!.access_token)).data.user?.id).toBe(user.id);
    expect((await c.passkey.list()).data).toEqual([{ ...passkey, last_used_at: expect.any(String) }]);
    const replay = await client().passkey.verifyAuthentication({ challengeId: start.data!.challenge_id, credential: assertion });
    expect(why(replay.error)).toEqual([400, 'webauthn_challenge_not_found']);
  });

  it('refuses an authenticator that was never registered, one removed, and an assertion for another origin', async () => {
    const { c } = await signedUp();
    const { key, passkey } = await registered(c);
    const signIn = async (k: TestAuthenticator) => {
      const start = await client().passkey.startAuthentication();
      return client().passkey.verifyAuthentication({ challengeId: start.data!.challenge_id, credential: k.get(start.data!.options) });
    };
    const stranger = authenticator();
    stranger.create({ challenge: 'x', user: { id: 'y' } });
    expect(((await signIn(stranger)).error as AuthApiError)?.code).toBe('webauthn_verification_failed');
    // The registered key, used on a phishing page: the browser names that page's origin.
    key.origin = 'https://evil.example';
    expect(((await signIn(key)).error as AuthApiError)?.code).toBe('webauthn_verification_failed');
    key.origin = ORIGIN;
    expect((await c.passkey.delete({ passkeyId: passkey.id })).error).toBeNull();
    const gone = await signIn(key);
    expect(why(gone.error)).toEqual([400, 'webauthn_verification_failed']);
  });
});

describe('management', () => {
  it('update renames (friendly_name), and an unknown or another user’s passkey is 404 to update and delete', async () => {
    const { c } = await signedUp();
    const { passkey } = await registered(c);
    const renamed = await c.passkey.update({ passkeyId: passkey.id, friendlyName: 'Work laptop' });
    expect(renamed.data).toMatchObject({ id: passkey.id, friendly_name: 'Work laptop' });
    expect((await c.passkey.list()).data?.[0].friendly_name).toBe('Work laptop');
    const { c: mallory } = await signedUp();
    for (const id of [passkey.id, crypto.randomUUID()]) {
      const upd = await mallory.passkey.update({ passkeyId: id, friendlyName: 'mine' });
      expect(why(upd.error)).toEqual([404, 'validation_failed']);
      expect((await mallory.passkey.delete({ passkeyId: id })).error?.status).toBe(404);
    }
    expect((await c.passkey.list()).data?.map((k) => k.friendly_name)).toEqual(['Work laptop']);
  });

  it('the admin API lists and deletes a user’s passkeys with the secret key only', async () => {
    const { c, user } = await signedUp();
    const { passkey } = await registered(c);
    t.clock.advance(1000); // listed oldest first: the second one is a second younger
    const { passkey: second } = await registered(c);
    const admin = client(t.keys.secretKey).admin;
    expect((await admin.passkey.listPasskeys({ userId: user.id })).data?.map((k) => k.id)).toEqual([passkey.id, second.id]);
    const notAdmin = await client().admin.passkey.deletePasskey({ userId: user.id, passkeyId: second.id });
    expect((notAdmin.error as AuthApiError)?.code).toBe('not_admin');
    expect((await admin.passkey.deletePasskey({ userId: user.id, passkeyId: second.id })).error).toBeNull();
    expect((await admin.passkey.listPasskeys({ userId: user.id })).data?.map((k) => k.id)).toEqual([passkey.id]);
    const nobody = await admin.passkey.listPasskeys({ userId: crypto.randomUUID() });
    expect(why(nobody.error)).toEqual([404, 'user_not_found']);
  });
});
