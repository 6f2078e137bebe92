import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, createAuthServer, email, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';
import { TestAuthenticator } from '../../test/webauthn.js';

// Property tests: whatever a client sends to the auth and settings endpoints — any unicode,
// NUL characters, wrong types, extra fields — the answer is never a 500 and always the error shape.
let t: TestServer;
let access: string;
beforeAll(async () => {
  t = await createAuthServer({
    SMS_PROVIDER: 'dev',
    AUTH_RATE_SIGNIN_EMAIL: '100000/60',
    AUTH_RATE_EMAIL_RECIPIENT: '100000/60',
    AUTH_RATE_SMS_PHONE_MINUTE: '100000/60',
    AUTH_RATE_SMS_PHONE_HOUR: '100000/60',
    AUTH_RATE_SMS_IP: '100000/60',
    AUTH_RATE_MFA_USER: '100000/60',
  });
  await t.settings.updateProject({ plan: 'pro' });
  await t.settings.updateAuth({
    allowed_redirect_urls: ['https://app.example.com'],
    magic_link_url: 'https://app.example.com/magic',
    password_reset_url: 'https://app.example.com/reset',
    email_verification_url: 'https://app.example.com/verify',
    magic_link_enabled: true,
    phone_enabled: true,
    passkey_enabled: true,
  });
  access = (await signUp(t, email('fuzz'))).session.access_token;
});
afterAll(() => t?.stop());

/** Text of any code points, NUL and lone surrogates included, plus plausible shapes. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }).map((s) => `${s}\u0000`),
  fc.emailAddress(),
  fc.emailAddress().map((e) => `${e}\u0000`),
  fc.stringMatching(/^\+[0-9]{6,15}$/),
  fc.stringMatching(/^[0-9]{6}$/),
  fc.constant('https://app.example.com/x'),
);
const value = fc.oneof(
  text,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 2 }),
  fc.dictionary(text, text, { maxKeys: 2 }),
);
const fields = [
  'email',
  'password',
  'token',
  'refresh_token',
  'phone',
  'code',
  'name',
  'avatar',
  'emailRedirectTo',
  'data',
  'scope',
  'to',
  'plan',
  'factor_type',
  'friendly_name',
  'challenge_id',
];
/** A WebAuthn credential's JSON with any values in it (what a broken or hostile client may send). */
const credential = fc.oneof(
  value,
  fc.record({
    id: text,
    rawId: text,
    type: fc.oneof(fc.constant('public-key'), text),
    response: fc.dictionary(
      fc.constantFrom('clientDataJSON', 'attestationObject', 'authenticatorData', 'signature', 'userHandle', 'transports'),
      fc.oneof(
        value,
        fc.string({ maxLength: 60 }).map((x) => Buffer.from(x).toString('base64url')),
      ),
      { maxKeys: 4 },
    ),
  }),
);
const body = fc
  .tuple(fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 4 }), fc.option(credential, { nil: undefined }))
  .map(([b, c]): Record<string, unknown> => (c === undefined ? b : { ...b, credential: c }));

const ENDPOINTS: Array<{ method: 'POST' | 'PATCH'; url: string; auth: 'anon' | 'user' | 'service' }> = [
  { method: 'POST', url: '/v1/auth/signup', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/signin', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/refresh', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/verify-email', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/resend-verification', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/forgot-password', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/reset-password', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/request-magic-link', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/signin-magic-link', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/phone/send-otp', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/phone/verify', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/factors', auth: 'user' },
  { method: 'POST', url: '/v1/auth/factors/recover', auth: 'user' },
  { method: 'POST', url: '/v1/auth/factors/00000000-0000-4000-8000-000000000000/challenge', auth: 'user' },
  { method: 'POST', url: '/v1/auth/factors/00000000-0000-4000-8000-000000000000/verify', auth: 'user' },
  { method: 'POST', url: '/v1/auth/passkeys/register/verify', auth: 'user' },
  { method: 'POST', url: '/v1/auth/passkeys/signin/options', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/passkeys/signin/verify', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/passkeys/signup/options', auth: 'anon' },
  { method: 'POST', url: '/v1/auth/passkeys/signup/verify', auth: 'anon' },
  { method: 'PATCH', url: '/v1/auth/user', auth: 'user' },
  { method: 'POST', url: '/v1/auth/signout', auth: 'user' },
  { method: 'PATCH', url: '/api/v1/project', auth: 'service' },
  { method: 'POST', url: '/api/v1/email/test', auth: 'service' },
];

describe('WebAuthn answers never answer 500', () => {
  it('any credential JSON to a WebAuthn factor (its create and request ceremonies) and to /auth/v1’s passkey sign-in', async () => {
    const { session } = await signUp(t, email('fuzz-wa'));
    const h = asUser(t, session.access_token);
    const enrol = async (as: Record<string, string>) =>
      (await call(t, 'POST', 'factors', { factor_type: 'webauthn' }, as)).json().id as string;
    // A factor verified with a real authenticator (its challenges are request ceremonies), then an
    // unverified one (creation ceremonies), enrolled at aal2: the first verification removes earlier ones.
    const verified = await enrol(h);
    const key = new TestAuthenticator({ rpId: 'localhost', origin: 'http://localhost:8080' });
    const first = (await call(t, 'POST', `factors/${verified}/challenge`, {}, h)).json();
    const done = await call(
      t,
      'POST',
      `factors/${verified}/verify`,
      { challenge_id: first.id, credential: key.create(first.webauthn.options) },
      h,
    );
    expect(done.statusCode, done.body).toBe(200);
    const aal2 = asUser(t, done.json().access_token);
    const fresh = await enrol(aal2);
    await fc.assert(
      fc.asyncProperty(credential, async (c) => {
        for (const factor of [fresh, verified]) {
          const ch = (await call(t, 'POST', `factors/${factor}/challenge`, {}, aal2)).json();
          expect(ch.webauthn.type).toBe(factor === fresh ? 'create' : 'request');
          const res = await call(t, 'POST', `factors/${factor}/verify`, { challenge_id: ch.id, credential: c }, aal2);
          expect(res.statusCode, `${res.statusCode} ${res.body}`).toBeLessThan(500);
        }
        const start = (await t.app.inject({ method: 'POST', url: '/auth/v1/passkeys/authentication/options', headers: t.as.anon })).json();
        const res = await t.app.inject({
          method: 'POST',
          url: '/auth/v1/passkeys/authentication/verify',
          headers: t.as.anon,
          payload: { challenge_id: start.challenge_id, credential: c },
        });
        expect(res.statusCode, `${res.statusCode} ${res.body}`).toBeLessThan(500);
      }),
      { numRuns: 40 },
    );
  });
});

describe('auth and management endpoints never answer 500', () => {
  it.each(ENDPOINTS)('$method $url', async ({ method, url, auth }) => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const headers = auth === 'anon' ? t.as.anon : auth === 'user' ? t.as.user(access) : t.as.service;
        // signout ends the session that PATCH /v1/auth/user uses, so it comes after it in the table.
        const sent = url.endsWith('signout') ? { scope: payload.scope } : payload;
        const res = await t.app.inject({ method, url, headers, payload: sent });
        expect(res.statusCode, `${res.statusCode} ${res.body}`).toBeLessThan(500);
        if (res.statusCode >= 400)
          expect(res.json()).toMatchObject({ code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String) });
      }),
      { numRuns: url.endsWith('signout') ? 10 : 40 },
    );
  });

  it('NUL in a sign-up, a name or a template is a 400, not a 500', async () => {
    const signup = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: t.as.anon,
      payload: { email: 'a\u0000b@example.com', password: 'correct horse battery' },
    });
    expect(signup.statusCode).toBe(400);
    expect(signup.json().code).toBe('invalid_email');
    const data = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: t.as.anon,
      payload: { email: email('nul'), password: 'correct horse battery', data: { x: 'a\u0000' } },
    });
    expect([data.statusCode, data.json().code]).toEqual([400, 'invalid_value']);
    const fresh = (await signUp(t, email('nul-name'))).session.access_token;
    const name = await t.app.inject({ method: 'PATCH', url: '/v1/auth/user', headers: t.as.user(fresh), payload: { name: 'Ann\u0000' } });
    expect([name.statusCode, name.json().code]).toEqual([400, 'invalid_value']);
    const tpl = await t.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings/auth',
      headers: t.as.service,
      payload: { email_templates: { reset: { subject: 'x\u0000' } } },
    });
    expect(tpl.statusCode).toBe(400);
    const project = await t.app.inject({ method: 'PATCH', url: '/api/v1/project', headers: t.as.service, payload: { name: 'Acme\u0000' } });
    expect(project.statusCode).toBe(400);
  });
});
