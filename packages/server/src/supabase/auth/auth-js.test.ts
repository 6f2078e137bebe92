import { AuthApiError, AuthWeakPasswordError, isAuthSessionMissingError } from '@supabase/auth-js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, lastToken, mailsTo, setAuth } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { authClient } from '../../../test/supabase-auth.js';
import { totpCode } from '../../auth/mfa/totp.js';

// /auth/v1 driven by auth-js itself (the client Supabase apps use), on Plinth's auth services.
const PASSWORD = 'correct horse battery';
const PAGE = 'https://app.example.com/auth';
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, {
    allowed_redirect_urls: [PAGE],
    magic_link_url: `${PAGE}/magic`,
    magic_link_enabled: true,
    password_reset_url: `${PAGE}/reset`,
    email_verification_url: `${PAGE}/verify`,
  });
});
afterAll(() => t?.stop());

/** A user signed up and in through auth-js (no confirmation due), with the client holding the session. */
async function signedUp(data?: Record<string, unknown>) {
  const client = authClient(t);
  const addr = email('sb');
  const { data: out, error } = await client.signUp({ email: addr, password: PASSWORD, options: { data } });
  expect(error).toBeNull();
  expect(out.session).not.toBeNull();
  return { client, addr, session: out.session!, user: out.user! };
}

describe('sign-up and sign-in with a password', () => {
  it('signUp answers GoTrue’s session and user, with user_metadata kept and the claims auth-js reads', async () => {
    const { session, user, addr } = await signedUp({ first_name: 'Ann' });
    expect(session).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(session.expires_at).toBe(decodeJwt(session.access_token).exp);
    expect(session.refresh_token.length).toBeGreaterThan(20);
    expect(user).toMatchObject({
      aud: 'authenticated',
      role: 'authenticated',
      email: addr,
      phone: '',
      app_metadata: { provider: 'email', providers: ['email'] },
      user_metadata: { first_name: 'Ann' },
      is_anonymous: false,
    });
    expect(user.identities?.[0]).toMatchObject({ provider: 'email', user_id: user.id, identity_data: { email: addr, sub: user.id } });
    const claims = decodeJwt(session.access_token);
    expect(claims).toMatchObject({
      sub: user.id,
      aud: 'authenticated',
      role: 'authenticated',
      email: addr,
      app_metadata: { provider: 'email', providers: ['email'] },
      user_metadata: { first_name: 'Ann' },
      aal: 'aal1',
      is_anonymous: false,
    });
    expect(claims.session_id).toEqual(expect.any(String));
    expect(claims.amr).toEqual([{ method: 'password', timestamp: expect.any(Number) }]);
  });

  it('signInWithPassword opens a session; a wrong password is AuthApiError invalid_credentials (400), alike for an unknown address', async () => {
    const { addr } = await signedUp();
    const client = authClient(t);
    const ok = await client.signInWithPassword({ email: addr, password: PASSWORD });
    expect(ok.error).toBeNull();
    expect(ok.data.user?.email).toBe(addr);
    expect((await client.getSession()).data.session?.access_token).toBe(ok.data.session?.access_token);
    for (const [who, pw] of [
      [addr, 'wrong password!'],
      [email('nobody'), PASSWORD],
    ]) {
      const bad = await authClient(t).signInWithPassword({ email: who, password: pw });
      expect(bad.error).toBeInstanceOf(AuthApiError);
      expect([bad.error?.status, bad.error?.code, bad.error?.message]).toEqual([400, 'invalid_credentials', 'Invalid login credentials']);
    }
  });

  it('a short password is AuthWeakPasswordError (422 weak_password) with its reasons', async () => {
    const { error } = await authClient(t).signUp({ email: email('weak'), password: 'short' });
    expect(error).toBeInstanceOf(AuthWeakPasswordError);
    expect([error?.status, error?.code, (error as AuthWeakPasswordError).reasons]).toEqual([422, 'weak_password', ['length']]);
    expect(error?.message).toBe('Password should be at least 8 characters.');
  });

  it('errors are {code, message} with X-Supabase-Api-Version: 2024-01-01, and GoTrue’s older {code, error_code, msg} without it', async () => {
    const body = { email: email('nobody'), password: PASSWORD };
    const url = '/auth/v1/token?grant_type=password';
    const newer = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...t.as.anon, 'x-supabase-api-version': '2024-01-01' },
      payload: body,
    });
    expect([newer.statusCode, newer.headers['x-supabase-api-version'], newer.json()]).toEqual([
      400,
      '2024-01-01',
      { code: 'invalid_credentials', message: 'Invalid login credentials' },
    ]);
    const older = await t.app.inject({ method: 'POST', url, headers: t.as.anon, payload: body });
    expect(older.json()).toEqual({ code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' });
  });

  it('signing up a taken address with confirmation off is 422 user_already_exists', async () => {
    const { addr } = await signedUp();
    const { error } = await authClient(t).signUp({ email: addr, password: 'another password' });
    expect([error?.status, error?.code]).toEqual([422, 'user_already_exists']);
  });

  it('methods this face does not offer are refused as GoTrue refuses a method that is off', async () => {
    const sso = await authClient(t).signInWithSSO({ domain: 'example.com' });
    expect([sso.error?.status, sso.error?.code]).toEqual([404, 'saml_provider_disabled']);
    // Google is off here: GoTrue's 400 provider_disabled (the ID token grant itself: id-token.test.ts).
    const idToken = await authClient(t).signInWithIdToken({ provider: 'google', token: 'x' });
    expect([idToken.error?.status, idToken.error?.code]).toEqual([400, 'provider_disabled']);
    // linkIdentity of a provider that is off: GoTrue's refusal (linking itself: oauth.test.ts).
    const { client } = await signedUp();
    const link = await t.app.inject({
      url: '/auth/v1/user/identities/authorize?provider=github&skip_http_redirect=true',
      headers: { ...t.as.user((await client.getSession()).data.session!.access_token), 'x-supabase-api-version': '2024-01-01' },
    });
    expect([link.statusCode, link.json().code, link.json().message]).toEqual([
      400,
      'validation_failed',
      'Unsupported provider: provider is not enabled',
    ]);
  });

  it('anonymous sign-in is refused while off (422 anonymous_provider_disabled)', async () => {
    const { error } = await authClient(t).signInAnonymously();
    expect([error?.status, error?.code]).toEqual([422, 'anonymous_provider_disabled']);
  });

  it('the same per-address sign-in failure limit counts both faces: failures on /v1/auth refuse /auth/v1 with 429 over_request_rate_limit', async () => {
    const { addr } = await signedUp();
    for (let i = 0; i < t.auth.config.signinFailuresPerEmail.max; i++) {
      expect((await call(t, 'POST', 'signin', { email: addr, password: 'wrong password!' })).statusCode).toBe(400);
    }
    const { error } = await authClient(t).signInWithPassword({ email: addr, password: PASSWORD });
    expect([error?.status, error?.code]).toEqual([429, 'over_request_rate_limit']);
  });
});

describe('confirmation by email (the proof rule kept)', () => {
  beforeAll(() => setAuth(t, { require_email_confirmation: true }));
  afterAll(() => setAuth(t, { require_email_confirmation: false }));

  it('signUp answers the user without a session; the mailed link’s token verifies (type signup) into a session', async () => {
    const addr = email('confirm');
    const client = authClient(t);
    const up = await client.signUp({ email: addr, password: PASSWORD });
    expect(up.error).toBeNull();
    expect(up.data.session).toBeNull();
    expect(up.data.user).toMatchObject({ email: addr, aud: 'authenticated' });
    expect(up.data.user?.email_confirmed_at).toBeUndefined();
    const early = await authClient(t).signInWithPassword({ email: addr, password: PASSWORD });
    expect([early.error?.status, early.error?.code]).toEqual([400, 'email_not_confirmed']);
    const token_hash = await lastToken(t, addr, 'verification');
    const verified = await client.verifyOtp({ token_hash, type: 'signup' });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toEqual(expect.any(String));
    expect((await client.getUser()).data.user?.id).toBe(up.data.user?.id);
    // A link works once.
    const again = await authClient(t).verifyOtp({ token_hash, type: 'signup' });
    expect([again.error?.status, again.error?.code]).toEqual([403, 'otp_expired']);
    expect((await authClient(t).signInWithPassword({ email: addr, password: PASSWORD })).error).toBeNull();
  });

  it('attacker: signing up an address first does not hand over the account: the owner’s link signs her in, the attacker’s password is gone', async () => {
    const victim = email('victim');
    const attacker = authClient(t);
    expect((await attacker.signUp({ email: victim, password: 'attacker password' })).error).toBeNull();
    const owner = authClient(t);
    const second = await owner.signUp({ email: victim, password: PASSWORD });
    // Answered as a new sign-up (no enumeration), with no session.
    expect(second.error).toBeNull();
    expect(second.data.session).toBeNull();
    const token_hash = await lastToken(t, victim, 'verification');
    expect((await owner.verifyOtp({ token_hash, type: 'email' })).error).toBeNull();
    const stolen = await authClient(t).signInWithPassword({ email: victim, password: 'attacker password' });
    expect([stolen.error?.status, stolen.error?.code]).toEqual([400, 'invalid_credentials']);
    // Two pending sign-ups chose different passwords: the link cannot tell whose mailbox it
    // reached first, so neither password survives (Plinth's rule); the owner, signed in by her
    // link, sets her own.
    expect((await authClient(t).signInWithPassword({ email: victim, password: PASSWORD })).error?.code).toBe('invalid_credentials');
    expect((await owner.updateUser({ password: 'owner chosen password' })).error).toBeNull();
    expect((await authClient(t).signInWithPassword({ email: victim, password: 'owner chosen password' })).error).toBeNull();
  });

  it('resend mails a new sign-up link that verifies', async () => {
    const addr = email('resend');
    await authClient(t).signUp({ email: addr, password: PASSWORD });
    t.clock.advance(61_000);
    const { error } = await authClient(t).resend({ type: 'signup', email: addr });
    expect(error).toBeNull();
    expect((await mailsTo(t, addr)).filter((m) => m.kind === 'verification')).toHaveLength(2);
    const client = authClient(t);
    expect((await client.verifyOtp({ token_hash: await lastToken(t, addr, 'verification'), type: 'signup' })).error).toBeNull();
  });
});

describe('refresh and sign-out', () => {
  it('refreshSession rotates the refresh token; a reused one after the grace window is refresh_token_already_used and ends the session', async () => {
    const { client, session } = await signedUp();
    const next = await client.refreshSession();
    expect(next.error).toBeNull();
    expect(next.data.session?.refresh_token).not.toBe(session.refresh_token);
    t.clock.advance(t.auth.config.refreshGraceMs + 1000);
    const thief = authClient(t);
    const reused = await thief.refreshSession({ refresh_token: session.refresh_token });
    expect([reused.error?.status, reused.error?.code]).toEqual([400, 'refresh_token_already_used']);
    // Plinth ends the session on reuse: the rotated token is dead too.
    const after = await authClient(t).refreshSession({ refresh_token: next.data.session!.refresh_token });
    expect([after.error?.status, after.error?.code]).toEqual([400, 'refresh_token_not_found']);
  });

  it('signOut scopes: others ends the other sessions, local this one, global all', async () => {
    const { addr, client: a } = await signedUp();
    const b = authClient(t);
    const c = authClient(t);
    await b.signInWithPassword({ email: addr, password: PASSWORD });
    await c.signInWithPassword({ email: addr, password: PASSWORD });
    const tokenOf = async (x: typeof a) => (await x.getSession()).data.session!.access_token;
    const [ta, tb, tc] = [await tokenOf(a), await tokenOf(b), await tokenOf(c)];
    expect((await a.signOut({ scope: 'others' })).error).toBeNull();
    const gone = await a.getUser(tb);
    expect(isAuthSessionMissingError(gone.error)).toBe(true);
    expect((await a.getUser(tc)).error).not.toBeNull();
    expect((await a.getUser(ta)).error).toBeNull();
    const d = authClient(t);
    await d.signInWithPassword({ email: addr, password: PASSWORD });
    const td = await tokenOf(d);
    expect((await a.signOut({ scope: 'local' })).error).toBeNull();
    expect((await d.getUser(td)).error).toBeNull();
    expect((await d.signOut()).error).toBeNull(); // global
    expect(isAuthSessionMissingError((await authClient(t).getUser(td)).error)).toBe(true);
  });
});

describe('the user', () => {
  it('updateUser merges data into user_metadata (null removes a key), seen by getUser and the next token', async () => {
    const { client } = await signedUp({ a: 1, b: 2 });
    const up = await client.updateUser({ data: { b: null, c: 'three' } });
    expect(up.error).toBeNull();
    expect(up.data.user?.user_metadata).toEqual({ a: 1, c: 'three' });
    expect((await client.getUser()).data.user?.user_metadata).toEqual({ a: 1, c: 'three' });
    const refreshed = await client.refreshSession();
    expect(decodeJwt(refreshed.data.session!.access_token).user_metadata).toEqual({ a: 1, c: 'three' });
  });

  it('attacker: metadata cannot set the token’s role or app_metadata', async () => {
    const { client } = await signedUp({ role: 'service_role', app_metadata: { providers: ['admin'] } });
    await client.updateUser({ data: { role: 'service_role', aud: 'x', app_metadata: { provider: 'admin' } } });
    const token = (await client.refreshSession()).data.session!.access_token;
    const claims = decodeJwt(token);
    expect([claims.role, claims.aud, claims.app_metadata]).toEqual([
      'authenticated',
      'authenticated',
      { provider: 'email', providers: ['email'] },
    ]);
    // And the REST API runs it as `authenticated`.
    const me = await t.app.inject({ method: 'GET', url: '/v1/auth/user', headers: t.as.user(token) });
    expect(me.statusCode).toBe(200);
  });

  it('updateUser({password}) right after sign-in changes it (Plinth’s recent-sign-in rule) and ends the other sessions', async () => {
    const { client, addr } = await signedUp();
    const other = authClient(t);
    await other.signInWithPassword({ email: addr, password: PASSWORD });
    const otherToken = (await other.getSession()).data.session!.access_token;
    expect((await client.updateUser({ password: 'a brand new password' })).error).toBeNull();
    expect(isAuthSessionMissingError((await other.getUser(otherToken)).error)).toBe(true);
    expect((await authClient(t).signInWithPassword({ email: addr, password: 'a brand new password' })).error).toBeNull();
  });

  it('GET /user without a user token is 401 no_authorization', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/auth/v1/user',
      headers: { ...t.as.anon, 'x-supabase-api-version': '2024-01-01' },
    });
    expect([res.statusCode, res.json().code]).toEqual([401, 'no_authorization']);
  });
});

describe('links: magic link, recovery, GET /verify', () => {
  it('signInWithOtp mails a magic link whose token verifies (type magiclink) into a session', async () => {
    const addr = email('otp');
    const client = authClient(t);
    expect((await client.signInWithOtp({ email: addr, options: { emailRedirectTo: `${PAGE}/magic` } })).error).toBeNull();
    const token_hash = await lastToken(t, addr, 'magic_link');
    const { data, error } = await client.verifyOtp({ token_hash, type: 'magiclink' });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email: addr });
    expect(data.user?.email_confirmed_at).toEqual(expect.any(String));
    expect(decodeJwt(data.session!.access_token).amr).toEqual([{ method: 'magic_link', timestamp: expect.any(Number) }]);
  });

  it('attacker: a redirect outside the allowlist is dropped (GoTrue’s fallback): the link lands on the project’s page; a second mail within the minute is 429 over_email_send_rate_limit', async () => {
    const addr = email('otp-limit');
    const bad = await authClient(t).signInWithOtp({ email: addr, options: { emailRedirectTo: 'https://evil.example.com/' } });
    expect(bad.error).toBeNull();
    const links = (await mailsTo(t, addr)).map((m) => m.link);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(/^https:\/\/app\.example\.com\/auth\/magic\?/);
    expect(links.join(' ')).not.toContain('evil.example.com');
    t.clock.advance(61_000);
    expect((await authClient(t).signInWithOtp({ email: addr })).error).toBeNull();
    const again = await authClient(t).signInWithOtp({ email: addr });
    expect([again.error?.status, again.error?.code]).toEqual([429, 'over_email_send_rate_limit']);
  });

  it('resetPasswordForEmail, then verifyOtp (type recovery) signs in and updateUser sets the new password', async () => {
    const { addr } = await signedUp();
    const client = authClient(t);
    expect((await client.resetPasswordForEmail(addr)).error).toBeNull();
    const token_hash = await lastToken(t, addr, 'reset');
    expect((await client.verifyOtp({ token_hash, type: 'recovery' })).error).toBeNull();
    expect((await client.updateUser({ password: 'recovered password' })).error).toBeNull();
    expect((await authClient(t).signInWithPassword({ email: addr, password: 'recovered password' })).error).toBeNull();
  });

  it('GET /verify redirects to an allowed redirect_to with the session in the fragment, or the error', async () => {
    const addr = email('get-verify');
    await authClient(t).signInWithOtp({ email: addr });
    const token = await lastToken(t, addr, 'magic_link');
    const url = (tok: string) => `/auth/v1/verify?token=${tok}&type=magiclink&redirect_to=${encodeURIComponent(`${PAGE}/done`)}`;
    const ok = await t.app.inject({ method: 'GET', url: url(token) });
    expect(ok.statusCode).toBe(303);
    const location = new URL(String(ok.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(`${PAGE}/done`);
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(decodeJwt(fragment.get('access_token') ?? '').email).toBe(addr);
    expect(fragment.get('type')).toBe('magiclink');
    const used = new URLSearchParams(
      new URL(String((await t.app.inject({ method: 'GET', url: url(token) })).headers.location)).hash.slice(1),
    );
    expect([used.get('error'), used.get('error_code')]).toEqual(['access_denied', 'otp_expired']);
    const evil = await t.app.inject({
      method: 'GET',
      url: `/auth/v1/verify?token=${token}&type=magiclink&redirect_to=https://evil.example.com/`,
    });
    // attacker: a redirect outside the allowlist is never followed: the first allowed URL instead.
    expect(evil.statusCode).toBe(303);
    expect(String(evil.headers.location).startsWith(`${PAGE}#`)).toBe(true);
  });
});

describe('PKCE (flowType pkce)', () => {
  /** The `?code=` of the newest mail of `kind` to `to`. */
  async function codeMailed(to: string, kind: string): Promise<string> {
    const link = (await mailsTo(t, to)).filter((m) => m.kind === kind).at(-1)?.link ?? '';
    const code = new URL(link).searchParams.get('code');
    expect(new URL(link).searchParams.get('token')).toBeNull();
    expect(code).toEqual(expect.any(String));
    return code as string;
  }

  it('a magic link of a PKCE client carries ?code=, which exchangeCodeForSession turns into a session with the verifier it kept', async () => {
    const addr = email('pkce');
    const client = authClient(t, undefined, 'pkce');
    expect((await client.signInWithOtp({ email: addr })).error).toBeNull();
    const code = await codeMailed(addr, 'magic_link');
    const { data, error } = await client.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.user?.email).toBe(addr);
    expect((await client.getUser()).data.user?.email).toBe(addr);
  });

  it('attacker: the code without the verifier (or with another) is refused, and the one guess uses the link up', async () => {
    const addr = email('pkce-thief');
    const owner = authClient(t, undefined, 'pkce');
    await owner.signInWithOtp({ email: addr });
    const code = await codeMailed(addr, 'magic_link');
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=pkce',
      headers: { ...t.as.anon, 'x-supabase-api-version': '2024-01-01' },
      payload: { auth_code: code, code_verifier: 'a'.repeat(56) },
    });
    expect([res.statusCode, res.json().code]).toEqual([404, 'flow_state_not_found']);
    const late = await owner.exchangeCodeForSession(code);
    expect(late.error?.code).toBe('flow_state_not_found');
  });

  it('a PKCE sign-up’s confirmation link and a PKCE reset link exchange into sessions', async () => {
    await setAuth(t, { require_email_confirmation: true });
    try {
      const addr = email('pkce-signup');
      const client = authClient(t, undefined, 'pkce');
      expect((await client.signUp({ email: addr, password: PASSWORD })).data.session).toBeNull();
      const signedIn = await client.exchangeCodeForSession(await codeMailed(addr, 'verification'));
      expect(signedIn.error).toBeNull();
      expect(signedIn.data.user?.email_confirmed_at).toEqual(expect.any(String));
      t.clock.advance(61_000); // one mail a minute per address
      const recovering = authClient(t, undefined, 'pkce');
      expect((await recovering.resetPasswordForEmail(addr)).error).toBeNull();
      const reset = await recovering.exchangeCodeForSession(await codeMailed(addr, 'reset'));
      expect(reset.error).toBeNull();
      expect((await recovering.updateUser({ password: 'pkce new password' })).error).toBeNull();
      expect((await authClient(t).signInWithPassword({ email: addr, password: 'pkce new password' })).error).toBeNull();
    } finally {
      await setAuth(t, { require_email_confirmation: false });
    }
  });

  it('a malformed code_challenge is 400 validation_failed', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/otp',
      headers: t.as.anon,
      payload: { email: email('pkce-bad'), code_challenge: 'short', code_challenge_method: 's256' },
    });
    expect([res.statusCode, res.json().error_code]).toEqual([400, 'validation_failed']);
  });
});

describe('public endpoints', () => {
  it('getClaims: a user without a phone has no phone claim (never null); email is a string', async () => {
    const { client } = await signedUp();
    const { data, error } = await client.getClaims();
    expect(error).toBeNull();
    expect(data?.claims).not.toHaveProperty('phone');
    expect(typeof data?.claims.email).toBe('string');
  });

  it('getClaims verifies the access token against /auth/v1/.well-known/jwks.json', async () => {
    const { client, user } = await signedUp();
    const jwks = await t.app.inject({ method: 'GET', url: '/auth/v1/.well-known/jwks.json' });
    expect(jwks.json().keys.length).toBeGreaterThan(0);
    const { data, error } = await client.getClaims();
    expect(error).toBeNull();
    expect(data?.claims.sub).toBe(user.id);
  });

  it('GET /settings and /health answer what auth-js and the UI kits read', async () => {
    const settings = await t.app.inject({ method: 'GET', url: '/auth/v1/settings' });
    expect(settings.json()).toMatchObject({ external: { email: true, phone: false, anonymous_users: false }, disable_signup: false });
    expect(typeof settings.json().mailer_autoconfirm).toBe('boolean');
    const health = await t.app.inject({ method: 'GET', url: '/auth/v1/health' });
    expect(health.json()).toMatchObject({ name: 'GoTrue' });
  });
});

describe('admin API (secret key)', () => {
  const admin = () => authClient(t, t.keys.secretKey).admin;

  it('createUser, getUserById, listUsers (total and pages), updateUserById, deleteUser', async () => {
    const addr = email('admin');
    const created = await admin().createUser({ email: addr, password: PASSWORD, email_confirm: true, user_metadata: { team: 'blue' } });
    expect(created.error).toBeNull();
    const user = created.data.user!;
    expect(user).toMatchObject({ email: addr, user_metadata: { team: 'blue' }, app_metadata: { provider: 'email', providers: ['email'] } });
    expect(user.email_confirmed_at).toEqual(expect.any(String));
    expect((await admin().getUserById(user.id)).data.user?.email).toBe(addr);
    // Audited as the console's user administration is, by the secret key.
    const audit = await t.db.query<{ action: string; details: { via?: string } }>(
      'select action, details from plinth.admin_audit where target = $1',
      [user.id],
    );
    expect(audit.rows.map((r) => [r.action, r.details.via])).toEqual([['user.create', 'secret_key']]);

    for (const extra of [email('admin-extra'), email('admin-extra')]) await admin().createUser({ email: extra, password: PASSWORD });
    const page = await admin().listUsers({ page: 1, perPage: 2 });
    expect(page.error).toBeNull();
    expect(page.data.users).toHaveLength(2);
    expect((page.data as { aud: string }).aud).toBe('authenticated');
    expect((page.data as { total: number }).total).toBeGreaterThan(2);
    expect((page.data as { nextPage: number | null }).nextPage).toBe(2);

    const client = authClient(t);
    await client.signInWithPassword({ email: addr, password: PASSWORD });
    const token = (await client.getSession()).data.session!.access_token;
    const updated = await admin().updateUserById(user.id, { password: 'admin set password', user_metadata: { level: 2 } });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.user_metadata).toEqual({ team: 'blue', level: 2 });
    // A password set by the admin ends the user's sessions, as in the console.
    expect(isAuthSessionMissingError((await client.getUser(token)).error)).toBe(true);
    expect((await authClient(t).signInWithPassword({ email: addr, password: 'admin set password' })).error).toBeNull();

    expect((await admin().deleteUser(user.id)).error).toBeNull();
    const gone = await admin().getUserById(user.id);
    expect([gone.error?.status, gone.error?.code]).toEqual([404, 'user_not_found']);
    const signIn = await authClient(t).signInWithPassword({ email: addr, password: 'admin set password' });
    expect(signIn.error?.code).toBe('invalid_credentials');
  });

  it('attacker: a user’s token or the publishable key cannot use the admin API (403 not_admin)', async () => {
    const { session } = await signedUp();
    const asUser = authClient(t);
    await asUser.setSession({ access_token: session.access_token, refresh_token: session.refresh_token });
    const withUserToken = await t.app.inject({
      method: 'GET',
      url: '/auth/v1/admin/users',
      headers: { ...t.as.user(session.access_token), 'x-supabase-api-version': '2024-01-01' },
    });
    expect([withUserToken.statusCode, withUserToken.json().code]).toEqual([403, 'not_admin']);
    const withPublishable = await authClient(t).admin.listUsers();
    expect([withPublishable.error?.status, withPublishable.error?.code]).toEqual([403, 'not_admin']);
    const create = await authClient(t).admin.createUser({ email: email('evil'), password: PASSWORD, email_confirm: true });
    expect(create.error?.code).toBe('not_admin');
  });

  it('app_metadata set by the admin API is kept beside the derived provider/providers, merged on update (null removes a key), and in the next token', async () => {
    const addr = email('roles');
    const made = await admin().createUser({
      email: addr,
      password: PASSWORD,
      email_confirm: true,
      app_metadata: { roles: ['admin'], tier: 'gold', provider: 'forged', providers: ['forged'] },
    });
    expect(made.error).toBeNull();
    expect(made.data.user?.app_metadata).toEqual({ roles: ['admin'], tier: 'gold', provider: 'email', providers: ['email'] });
    const id = made.data.user!.id;
    const updated = await admin().updateUserById(id, { app_metadata: { roles: ['editor'], tier: null } });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.app_metadata).toEqual({ roles: ['editor'], provider: 'email', providers: ['email'] });
    const client = authClient(t);
    const signed = await client.signInWithPassword({ email: addr, password: PASSWORD });
    expect(decodeJwt(signed.data.session!.access_token).app_metadata).toEqual({
      roles: ['editor'],
      provider: 'email',
      providers: ['email'],
    });
    expect((await client.getUser()).data.user?.app_metadata).toMatchObject({ roles: ['editor'] });
    // attacker: the user cannot write it (updateUser's data is user_metadata only).
    await client.updateUser({ data: { app_metadata: { roles: ['owner'] }, roles: ['owner'] } });
    expect((await admin().getUserById(id)).data.user?.app_metadata.roles).toEqual(['editor']);
    const bad = await admin().updateUserById(id, { app_metadata: ['not', 'an', 'object'] as unknown as Record<string, unknown> });
    expect([bad.error?.status, bad.error?.code]).toEqual([400, 'validation_failed']);
  });

  it('a taken email is 422 email_exists; ban_duration bans the user (sign-in refused) and "none" lifts it', async () => {
    const { addr, user } = await signedUp();
    const dup = await admin().createUser({ email: addr, password: PASSWORD });
    expect([dup.error?.status, dup.error?.code]).toEqual([422, 'email_exists']);
    expect((await admin().updateUserById(user.id, { ban_duration: '24h' })).error).toBeNull();
    const banned = await authClient(t).signInWithPassword({ email: addr, password: PASSWORD });
    expect([banned.error?.status, banned.error?.code]).toEqual([403, 'user_banned']);
    expect((await admin().updateUserById(user.id, { ban_duration: 'none' })).error).toBeNull();
    expect((await authClient(t).signInWithPassword({ email: addr, password: PASSWORD })).error).toBeNull();
  });

  it('generateLink: a signup link keeps the admin-set password through the proof; magiclink and recovery links sign in; action_link redirects', async () => {
    const addr = email('genlink');
    const signup = await admin().generateLink({ type: 'signup', email: addr, password: PASSWORD });
    expect(signup.error).toBeNull();
    expect(signup.data.user).toMatchObject({ email: addr });
    expect(signup.data.properties).toMatchObject({ verification_type: 'signup', redirect_to: `${PAGE}/verify` });
    const early = await authClient(t).signInWithPassword({ email: addr, password: PASSWORD });
    expect(early.error).toBeNull(); // confirmation is off in this server: the password signs in at once
    const client = authClient(t);
    expect((await client.verifyOtp({ token_hash: signup.data.properties!.hashed_token, type: 'signup' })).error).toBeNull();
    expect((await client.getUser()).data.user?.email_confirmed_at).toEqual(expect.any(String));
    expect((await authClient(t).signInWithPassword({ email: addr, password: PASSWORD })).error).toBeNull();

    const magic = await admin().generateLink({ type: 'magiclink', email: addr, options: { redirectTo: `${PAGE}/done` } });
    expect(magic.error).toBeNull();
    const action = new URL(magic.data.properties!.action_link);
    expect(action.pathname).toBe('/auth/v1/verify');
    const followed = await t.app.inject({ method: 'GET', url: action.pathname + action.search });
    expect(followed.statusCode).toBe(303);
    const fragment = new URLSearchParams(new URL(String(followed.headers.location)).hash.slice(1));
    expect(decodeJwt(fragment.get('access_token') ?? '').email).toBe(addr);

    const recovery = await admin().generateLink({ type: 'recovery', email: addr });
    const recovering = authClient(t);
    expect((await recovering.verifyOtp({ token_hash: recovery.data.properties!.hashed_token, type: 'recovery' })).error).toBeNull();

    const noFactors = await admin().mfa.listFactors({ userId: crypto.randomUUID() });
    expect(noFactors.error?.code).toBe('user_not_found');
    expect((await admin().listUsers()).error).toBeNull(); // page= and per_page= empty: the defaults
    const badPage = await admin().listUsers({ page: -1, perPage: 10 });
    expect([badPage.error?.status, badPage.data.users]).toEqual([400, []]);
    const unknown = await admin().generateLink({ type: 'magiclink', email: email('nobody') });
    expect([unknown.error?.status, unknown.error?.code]).toEqual([404, 'user_not_found']);
    const taken = await admin().generateLink({ type: 'signup', email: addr, password: PASSWORD });
    expect([taken.error?.status, taken.error?.code]).toEqual([422, 'email_exists']);
    const notAdmin = await authClient(t).admin.generateLink({ type: 'magiclink', email: addr });
    expect(notAdmin.error?.code).toBe('not_admin');
  });

  it('inviteUserByEmail makes the user and mails a link that verifies (type invite) into a session', async () => {
    const addr = email('invited');
    const invited = await admin().inviteUserByEmail(addr, { data: { team: 'red' } });
    expect(invited.error).toBeNull();
    expect(invited.data.user).toMatchObject({ email: addr, user_metadata: { team: 'red' } });
    const client = authClient(t);
    const { data, error } = await client.verifyOtp({ token_hash: await lastToken(t, addr, 'verification'), type: 'invite' });
    expect(error).toBeNull();
    expect(data.user?.email_confirmed_at).toEqual(expect.any(String));
    t.clock.advance(61_000); // one mail a minute per address
    const again = await admin().inviteUserByEmail(addr);
    expect([again.error?.status, again.error?.code]).toEqual([422, 'email_exists']);
    expect((await authClient(t).admin.inviteUserByEmail(email('x'))).error?.code).toBe('not_admin');
  });

  it('inviteUserByEmail with a redirectTo outside the allowlist mails the project’s page instead, and answers invited_at', async () => {
    const addr = email('invited-elsewhere');
    const invited = await admin().inviteUserByEmail(addr, { redirectTo: 'https://evil.example.com/welcome' });
    expect(invited.error).toBeNull();
    expect(invited.data.user?.invited_at).toEqual(expect.any(String));
    const links = (await mailsTo(t, addr)).map((m) => m.link);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(/^https:\/\/app\.example\.com\/auth\/verify\?token=/);
  });

  it('generateLink with a redirectTo outside the allowlist: action_link redirects to the project’s page, never the one asked', async () => {
    const { data, error } = await admin().generateLink({
      type: 'magiclink',
      email: (await signedUp()).addr,
      options: { redirectTo: 'https://evil.example.com/' },
    });
    expect(error).toBeNull();
    expect(data.properties?.redirect_to).toBe(`${PAGE}/magic`);
    expect(new URL(data.properties!.action_link).searchParams.get('redirect_to')).toBe(`${PAGE}/magic`);
    const allowed = await admin().generateLink({ type: 'magiclink', email: (await signedUp()).addr, options: { redirectTo: PAGE } });
    expect(new URL(allowed.data.properties!.action_link).searchParams.get('redirect_to')).toBe(PAGE);
  });

  it('generateLink email_change_current/new: the link to the new address moves the user there (confirmed); a taken address is 422', async () => {
    const { addr } = await signedUp();
    const to = email('moved');
    const { data, error } = await admin().generateLink({ type: 'email_change_current', email: addr, newEmail: to });
    expect(error).toBeNull();
    expect(data.user?.new_email).toBe(to);
    expect(data.properties?.verification_type).toBe('email_change');
    expect(new URL(data.properties!.action_link).searchParams.get('type')).toBe('email_change');
    const verified = await authClient(t).verifyOtp({ token_hash: data.properties!.hashed_token, type: 'email_change' });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ email: to, email_confirmed_at: expect.any(String) });
    const taken = await admin().generateLink({ type: 'email_change_new', email: to, newEmail: (await signedUp()).addr });
    expect([taken.error?.status, taken.error?.code]).toEqual([422, 'email_exists']);
  });

  it('admin signOut(jwt) ends that token’s session (its refresh token too); a token that is none is 403 bad_jwt', async () => {
    const { client, session } = await signedUp();
    expect((await admin().signOut(session.access_token)).error).toBeNull();
    const user = await client.getUser();
    expect(user.error).not.toBeNull();
    expect(user.data.user).toBeNull();
    const refreshed = await authClient(t).refreshSession({ refresh_token: session.refresh_token });
    expect(refreshed.error).not.toBeNull();
    const bad = await admin().signOut('this-is-a-bad-token');
    expect([bad.error?.status, bad.error?.code]).toEqual([403, 'bad_jwt']);
    expect(bad.error?.message).toMatch(/^invalid JWT/);
  });

  it('mfa.listFactors lists a user’s factors in GoTrue’s shape; deleteFactor removes one', async () => {
    const { user, session } = await signedUp();
    const enrolled = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/factors',
      headers: t.as.user(session.access_token),
      payload: { factor_type: 'totp', friendly_name: 'phone app' },
    });
    expect(enrolled.statusCode, enrolled.body).toBe(200);
    const listed = await admin().mfa.listFactors({ userId: user.id });
    expect(listed.error).toBeNull();
    expect(listed.data?.factors).toEqual([
      expect.objectContaining({ id: enrolled.json().id, factor_type: 'totp', status: 'unverified', friendly_name: 'phone app' }),
    ]);
    expect((await admin().mfa.deleteFactor({ userId: user.id, id: enrolled.json().id })).error).toBeNull();
    expect((await admin().mfa.listFactors({ userId: user.id })).data?.factors).toEqual([]);
  });
});

describe('second factors (auth.mfa)', () => {
  it('enroll, challengeAndVerify (aal2), getAuthenticatorAssuranceLevel, then an aal1 sign-in must step up and unenroll needs aal2', async () => {
    const { client, addr } = await signedUp();
    const enrolled = await client.mfa.enroll({ factorType: 'totp', friendlyName: 'phone app' });
    expect(enrolled.error).toBeNull();
    const factor = enrolled.data!;
    expect(factor).toMatchObject({ type: 'totp', friendly_name: 'phone app' });
    if (factor.type !== 'totp') throw new Error('not a totp factor');
    expect(factor.totp.qr_code.startsWith('data:image/svg+xml;utf-8,<svg')).toBe(true);
    const wrong = await client.mfa.challengeAndVerify({ factorId: factor.id, code: '000000' });
    expect([wrong.error?.status, wrong.error?.code]).toEqual([422, 'mfa_verification_failed']);
    const ok = await client.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, t.clock.now()) });
    expect(ok.error).toBeNull();
    expect(decodeJwt(ok.data!.access_token).aal).toBe('aal2');
    expect((await client.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
    expect((await client.mfa.listFactors()).data?.totp.map((f) => f.id)).toEqual([factor.id]);

    // A password alone now gives aal1, which the server refuses outside the step-up routes.
    const other = authClient(t);
    await other.signInWithPassword({ email: addr, password: PASSWORD });
    expect((await other.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
    const refused = await other.mfa.unenroll({ factorId: factor.id });
    expect([refused.error?.status, refused.error?.code]).toEqual([403, 'insufficient_aal']);
    t.clock.advance(30_000); // the next TOTP step: a code is taken once
    expect(
      (await other.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, t.clock.now()) })).error,
    ).toBeNull();
    expect((await other.mfa.unenroll({ factorId: factor.id })).error).toBeNull();
  });

  it('reauthenticate mails a code that PUT /user takes as nonce for a password change', async () => {
    const addr = email('reauth');
    const made = await authClient(t, t.keys.secretKey).admin.createUser({ email: addr, password: PASSWORD, email_confirm: true });
    expect(made.error).toBeNull();
    const client = authClient(t);
    expect((await client.signInWithPassword({ email: addr, password: PASSWORD })).error).toBeNull();
    t.clock.advance(t.auth.config.reauthWindowMs + 1000);
    const refused = await client.updateUser({ password: 'needs a nonce now' });
    expect([refused.error?.status, refused.error?.code]).toEqual([400, 'reauthentication_needed']);
    expect((await client.reauthenticate()).error).toBeNull();
    await mailsTo(t, addr);
    const mail = t.mail!.received.filter((m) => m.to.includes(addr)).at(-1);
    const nonce = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
    expect(nonce).toEqual(expect.any(String));
    expect((await client.updateUser({ password: 'needs a nonce now', nonce })).error).toBeNull();
  });

  it('reauthenticate of a user with no confirmed address is refused in GoTrue’s words, and nothing is mailed', async () => {
    const { client, addr } = await signedUp();
    const { error } = await client.reauthenticate();
    expect([error?.status, error?.code]).toEqual([400, 'validation_failed']);
    expect(error?.message).toContain('Reauthentication requires the user to have an email or a phone number');
    expect((await mailsTo(t, addr)).filter((m) => m.kind !== 'verification')).toEqual([]);
  });
});

describe('verifyOtp by phone', () => {
  it('a number that is not E.164 is 400 in GoTrue’s words; one with no code (phone sign-in off) is 403 otp_expired', async () => {
    const bad = await authClient(t).verifyOtp({ phone: '1555-invalid', token: '123456', type: 'sms' });
    expect([bad.error?.status, bad.error?.message]).toEqual([400, 'Invalid phone number format (E.164 required)']);
    for (const type of ['sms', 'phone_change'] as const) {
      const none = await authClient(t).verifyOtp({ phone: '14155550123', token: '123456', type });
      expect([none.error?.status, none.error?.code, none.error?.message]).toEqual([403, 'otp_expired', 'Token has expired or is invalid']);
      expect(none.data.session).toBeNull();
    }
  });
});

describe('anonymous sign-in (anonymous_sign_in_enabled)', () => {
  beforeAll(() => setAuth(t, { anonymous_sign_in_enabled: true }));
  afterAll(() => setAuth(t, { anonymous_sign_in_enabled: false }));

  it('signInAnonymously makes a user with is_anonymous in the user and the token; adding an email upgrades it in place', async () => {
    const client = authClient(t);
    const { data, error } = await client.signInAnonymously({ options: { data: { theme: 'dark' } } });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ is_anonymous: true, email: '', user_metadata: { theme: 'dark' }, identities: [] });
    const claims = decodeJwt(data.session!.access_token);
    expect(claims).toMatchObject({
      role: 'authenticated',
      is_anonymous: true,
      amr: [{ method: 'anonymous', timestamp: expect.any(Number) }],
    });
    expect((await t.app.inject({ method: 'GET', url: '/auth/v1/settings' })).json().external.anonymous_users).toBe(true);

    // Upgrade: past the recent-sign-in window too (an anonymous user has nothing to reauthenticate with).
    t.clock.advance(t.auth.config.reauthWindowMs + 1000);
    const addr = email('upgraded');
    expect((await client.updateUser({ email: addr })).error).toBeNull();
    const token_hash = await lastToken(t, addr, 'email_change');
    const verified = await client.verifyOtp({ token_hash, type: 'email_change' });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ id: data.user!.id, email: addr, is_anonymous: false, user_metadata: { theme: 'dark' } });
    expect(decodeJwt(verified.data.session!.access_token).is_anonymous).toBe(false);
    // Once it has an email, a change needs reauthentication again.
    t.clock.advance(t.auth.config.reauthWindowMs + 1000);
    const again = await client.updateUser({ password: 'now a real password' });
    expect(again.error?.code).toBe('reauthentication_needed');
  });

  it('attacker: an anonymous user upgrading to an address someone else holds never gets it', async () => {
    const { addr: victim } = await signedUp();
    const anon = authClient(t);
    const { data } = await anon.signInAnonymously();
    t.clock.advance(61_000);
    // Answered alike (no enumeration); the link goes to the holder's mailbox, not the attacker's.
    expect((await anon.updateUser({ email: victim })).error).toBeNull();
    const link = await lastToken(t, victim, 'email_change');
    const used = await authClient(t).verifyOtp({ token_hash: link, type: 'email_change' });
    expect([used.error?.status, used.error?.code]).toEqual([422, 'email_exists']);
    expect((await anon.getUser()).data.user).toMatchObject({ id: data.user!.id, email: '', is_anonymous: true });
    expect((await authClient(t).signInWithPassword({ email: victim, password: PASSWORD })).error).toBeNull();
  });

  it('at most 30 anonymous sign-ins an hour per IP (429 over_request_rate_limit)', async () => {
    const signIn = () =>
      t.app.inject({
        method: 'POST',
        url: '/auth/v1/signup',
        headers: { ...t.as.anon, 'x-supabase-api-version': '2024-01-01' },
        payload: {},
        remoteAddress: '10.9.8.7',
      });
    for (let i = 0; i < 30; i++) expect((await signIn()).statusCode).toBe(200);
    const over = await signIn();
    expect([over.statusCode, over.json().code]).toEqual([429, 'over_request_rate_limit']);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
  });
});
