import { AuthApiError, AuthClient } from '@supabase/auth-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, setAuth } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { injectFetch } from '../../../test/supabase-auth.js';
import { TestAuthenticator } from '../../../test/webauthn.js';

// GoTrue's answers for the passkey limits: 422 too_many_passkeys at the 21st passkey, and 403
// email_not_confirmed for a passkey sign-in of an unconfirmed address (while confirmation is on).
const PASSWORD = 'correct horse battery';
const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:5173';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, { passkey_enabled: true, passkey_rp_id: RP_ID, passkey_origins: [ORIGIN] });
});
afterAll(() => t?.stop());

function client() {
  const key = t.keys.publicKey;
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

async function signedUp() {
  const c = client();
  const addr = email('pk-limit');
  const { data, error } = await c.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  return { c, user: data.user!, session: data.session!, addr };
}

describe('passkey limits in GoTrue’s words', () => {
  it('a user with 20 passkeys cannot start a 21st: 422 too_many_passkeys on /auth/v1, 409 on /v1/auth', async () => {
    const { c, user, session } = await signedUp();
    // Twenty passkeys, written as the server writes them (the SQL runner may not touch auth.passkeys).
    await t.db.query(
      `insert into auth.passkeys (user_id, credential_id, public_key, name, created_at)
       select $1::uuid, 'cred-' || $1::text || '-' || i, 'key', 'Passkey ' || i, now() from generate_series(1, 20) i`,
      [user.id],
    );
    const start = await c.passkey.startRegistration();
    expect(start.error).toBeInstanceOf(AuthApiError);
    expect([start.error?.status, (start.error as AuthApiError).code, start.error?.message]).toEqual([
      422,
      'too_many_passkeys',
      'Maximum number of passkeys reached',
    ]);
    const ours = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/passkeys/register/options',
      headers: { ...t.as.user(session.access_token), 'content-type': 'application/json' },
      payload: {},
    });
    expect(code(ours)).toEqual([409, 'too_many_passkeys']);
  });

  it('a passkey sign-in of an unconfirmed address is 403 email_not_confirmed while confirmation is required (a password sign-in: 400)', async () => {
    const { c, addr } = await signedUp();
    const key = new TestAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const start = await c.passkey.startRegistration();
    expect(start.error).toBeNull();
    const made = await c.passkey.verifyRegistration({ challengeId: start.data!.challenge_id, credential: key.create(start.data!.options) });
    expect(made.error).toBeNull();
    await setAuth(t, {
      allowed_redirect_urls: ['https://app.example.com/verify'],
      require_email_confirmation: true,
      email_verification_url: 'https://app.example.com/verify',
    });
    try {
      const device = client();
      const s = await device.passkey.startAuthentication();
      const res = await device.passkey.verifyAuthentication({ challengeId: s.data!.challenge_id, credential: key.get(s.data!.options) });
      expect(res.error).toBeInstanceOf(AuthApiError);
      expect([(res.error as AuthApiError).status, (res.error as AuthApiError).code]).toEqual([403, 'email_not_confirmed']);
      expect(res.data?.session ?? null).toBeNull();
      const pw = await client().signInWithPassword({ email: addr, password: PASSWORD });
      expect([pw.error?.status, (pw.error as AuthApiError).code]).toEqual([400, 'email_not_confirmed']);
      expect(code(await call(t, 'POST', 'signin', { email: addr, password: PASSWORD }))).toEqual([403, 'email_not_confirmed']);
    } finally {
      await setAuth(t, { require_email_confirmation: false });
    }
  });
});
