import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthServer, email } from '../../../test/auth.js';
import { functionsServer } from '../../../test/functions.js';
import type { TestServer } from '../../../test/harness.js';
import { type OidcIdp, signInAt, startOidcIdp } from '../../../test/oidc-provider.js';
import { authClient } from '../../../test/supabase-auth.js';

// POST /auth/v1/token?grant_type=id_token (docs/supabase.md): auth-js's own signInWithIdToken
// and linkIdentity({provider, token}), against real OpenID Providers (npm oidc-provider): one as
// an `oidc_providers` entry, one standing in for Google (OAUTH_GOOGLE_URL). The ID tokens are
// signed with the providers' own keys, and one is issued by a provider's real code flow.

const CALLBACK = 'http://localhost:8080/auth/v1/callback';
const APP = 'https://app.example.com/auth/callback';
const PASSWORD = 'correct horse battery';

let t: TestServer;
let corp: OidcIdp;
let gIdp: OidcIdp;
let n = 0;

beforeAll(async () => {
  corp = await startOidcIdp({ name: 'corp', redirectUris: [CALLBACK] });
  gIdp = await startOidcIdp({ name: 'google', redirectUris: [CALLBACK] });
  t = await createAuthServer({ OAUTH_GOOGLE_URL: gIdp.issuer });
  await t.settings.updateAuth({
    allowed_redirect_urls: [APP],
    providers: { google: { enabled: true, client_id: gIdp.clientId, client_secret: gIdp.clientSecret } },
    oidc_providers: [
      { id: 'corp', name: 'Corp SSO', issuer: corp.issuer, client_id: corp.clientId, client_secret: corp.clientSecret, enabled: true },
      { id: 'off', name: 'Off', issuer: corp.issuer, client_id: corp.clientId, client_secret: corp.clientSecret, enabled: false },
    ],
  });
});
afterAll(async () => {
  await t?.stop();
  await corp?.stop();
  await gIdp?.stop();
});

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const seconds = () => Math.floor(Date.now() / 1000);

/** A fresh account at a provider; a nonce the app made and the hash it gave the provider. */
function fresh() {
  const raw = randomUUID();
  return { sub: `acct-${++n}-${randomUUID()}`, addr: email('idtoken'), raw, hashed: hex(raw) };
}

/** An ID token signed with `idp`'s own key: for its client, valid ten minutes, unless `claims` say otherwise. */
function idTokenOf(idp: OidcIdp, claims: Record<string, unknown>) {
  return idp.sign({ iss: idp.issuer, aud: idp.clientId, iat: seconds(), exp: seconds() + 600, ...claims });
}

const errorOf = (e: unknown) => ({ status: (e as { status?: number })?.status, code: (e as { code?: string })?.code });
const usersWith = async (addr: string) =>
  ((await t.db.query('select count(*)::int as n from auth.users where email = $1', [addr])).rows[0] as { n: number }).n;

async function signedUp(flowType: 'pkce' | 'implicit' = 'implicit') {
  const client = authClient(t, undefined, flowType);
  const addr = email('linker');
  const { data, error } = await client.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  expect(data.session).not.toBeNull();
  return { client, user: data.user!, addr };
}
const providersOf = async (client: ReturnType<typeof authClient>) =>
  ((await client.getUserIdentities()).data?.identities ?? []).map((i) => i.provider).sort();

describe('signInWithIdToken', () => {
  it('an ID token from a real code flow at the provider (native app): a session; the same account again next time', async () => {
    const a = fresh();
    corp.accounts.set(a.sub, { email: a.addr, email_verified: true, name: 'Ada Native' });
    // The app's own sign-in at the provider, with the hashed nonce (as Google's and Apple's SDKs take it).
    const verifier = randomUUID() + randomUUID();
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = new URL(`${corp.issuer}/auth`);
    for (const [k, v] of Object.entries({
      client_id: corp.clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'openid email profile',
      state: randomUUID(),
      nonce: a.hashed,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    const back = await signInAt(corp, authorize, a.sub);
    const tokenRes = await fetch(`${corp.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${corp.clientId}:${corp.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') ?? '',
        redirect_uri: CALLBACK,
        code_verifier: verifier,
      }),
    });
    const tokens = (await tokenRes.json()) as { id_token?: string; access_token?: string };
    expect(tokens.id_token, JSON.stringify(tokens)).toBeTruthy();

    const client = authClient(t);
    const { data, error } = await client.signInWithIdToken({
      provider: 'corp' as never,
      token: tokens.id_token!,
      access_token: tokens.access_token,
      nonce: a.raw,
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    expect(data.user?.email).toBe(a.addr);
    expect(data.user?.app_metadata.providers).toContain('corp');
    expect((await client.getUser()).data.user?.id).toBe(data.user?.id);

    // The same provider account later (a new token, no nonce on either side): the same user.
    const again = await authClient(t).signInWithIdToken({ provider: 'corp' as never, token: await idTokenOf(corp, { sub: a.sub }) });
    expect(again.error).toBeNull();
    expect(again.data.user?.id).toBe(data.user?.id);
  });

  it("a built-in provider (Google) and GoTrue's `custom:` name of an oidc_providers entry", async () => {
    const g = fresh();
    const google = await authClient(t).signInWithIdToken({
      provider: 'google',
      token: await idTokenOf(gIdp, { sub: g.sub, email: g.addr, email_verified: true, nonce: g.hashed }),
      nonce: g.raw,
    });
    expect(google.error).toBeNull();
    expect(google.data.user?.email).toBe(g.addr);
    expect(google.data.user?.identities?.map((i) => i.provider)).toEqual(['google']);

    const c = fresh();
    const custom = await authClient(t).signInWithIdToken({
      provider: 'custom:corp' as never,
      token: await idTokenOf(corp, { sub: c.sub, email: c.addr, email_verified: true }),
    });
    expect(custom.error).toBeNull();
    expect(custom.data.user?.identities?.map((i) => i.provider)).toEqual(['corp']);
  });

  it('attacker: a token issued for another client id, or signed by another provider, is refused; no account is made', async () => {
    const a = fresh();
    const otherApp = await authClient(t).signInWithIdToken({
      provider: 'corp' as never,
      token: await idTokenOf(corp, { sub: a.sub, email: a.addr, email_verified: true, aud: 'someone-elses-app' }),
    });
    expect(errorOf(otherApp.error)).toEqual({ status: 400, code: 'validation_failed' });
    expect(otherApp.error?.message).toMatch(/^Unacceptable audience in id_token/);
    expect(otherApp.data.session).toBeNull();

    // Google's key, corp's issuer and client id: the signature does not verify with corp's keys.
    const forged = await authClient(t).signInWithIdToken({
      provider: 'corp' as never,
      token: await gIdp.sign({ iss: corp.issuer, aud: corp.clientId, sub: a.sub, email: a.addr, iat: seconds(), exp: seconds() + 600 }),
    });
    expect([...Object.values(errorOf(forged.error)), forged.error?.message]).toEqual([400, 'validation_failed', 'Bad ID token']);

    // Corp's genuine token brought as Google's: Google's issuer and client id are not corp's.
    const crossed = await authClient(t).signInWithIdToken({ provider: 'google', token: await idTokenOf(corp, { sub: a.sub }) });
    expect(errorOf(crossed.error)).toEqual({ status: 400, code: 'validation_failed' });
    expect(await usersWith(a.addr)).toBe(0);
  });

  it("attacker: a wrong or missing nonce is refused, and so is replaying the token's own nonce claim as the nonce", async () => {
    const a = fresh();
    const claims = { sub: a.sub, email: a.addr, email_verified: true };
    const tryIt = async (tokenNonce: string | undefined, given: string | undefined) => {
      const token = await idTokenOf(corp, { ...claims, ...(tokenNonce ? { nonce: tokenNonce } : {}) });
      const { data, error } = await authClient(t).signInWithIdToken({
        provider: 'corp' as never,
        token,
        ...(given ? { nonce: given } : {}),
      });
      expect(data.session).toBeNull();
      return [error?.status, error?.code, error?.message];
    };
    // A nonce was given; the token was issued for another sign-in's nonce.
    expect(await tryIt(hex('another sign-in'), a.raw)).toEqual([400, 'validation_failed', 'Nonces mismatch']);
    // A nonce was given; the token has none (a token taken from a sign-in that used none).
    expect(await tryIt(undefined, a.raw)).toEqual([
      400,
      'validation_failed',
      'Passed nonce and nonce in id_token should either both exist or not.',
    ]);
    // The token has a nonce; none is given (a stolen token replayed without its preimage).
    expect(await tryIt(a.hashed, undefined)).toEqual([
      400,
      'validation_failed',
      'Passed nonce and nonce in id_token should either both exist or not.',
    ]);
    // The thief copies the token's visible nonce claim: it is the hash, not its preimage.
    expect(await tryIt(a.hashed, a.hashed)).toEqual([400, 'validation_failed', 'Nonces mismatch']);
    expect(await usersWith(a.addr)).toBe(0);
    // The app that made the nonce: signed in.
    const ok = await authClient(t).signInWithIdToken({
      provider: 'corp' as never,
      token: await idTokenOf(corp, { ...claims, nonce: a.hashed }),
      nonce: a.raw,
    });
    expect(ok.error).toBeNull();
  });

  it('attacker: an expired token, or one whose access token is not the one it was issued with, is refused', async () => {
    const a = fresh();
    const expired = await authClient(t).signInWithIdToken({
      provider: 'corp' as never,
      token: await idTokenOf(corp, { sub: a.sub, email: a.addr, email_verified: true, iat: seconds() - 7200, exp: seconds() - 3600 }),
    });
    expect([expired.error?.status, expired.error?.code, expired.error?.message]).toEqual([400, 'validation_failed', 'Bad ID token']);
    expect(await usersWith(a.addr)).toBe(0);

    const atHash = createHash('sha256').update('the real access token').digest().subarray(0, 16).toString('base64url');
    const token = await idTokenOf(corp, { sub: a.sub, at_hash: atHash });
    const swapped = await authClient(t).signInWithIdToken({ provider: 'corp' as never, token, access_token: 'another access token' });
    expect(errorOf(swapped.error)).toEqual({ status: 400, code: 'validation_failed' });
    expect(swapped.data.session).toBeNull();
    const right = await authClient(t).signInWithIdToken({ provider: 'corp' as never, token, access_token: 'the real access token' });
    expect(right.error).toBeNull();
  });

  it('attacker: tokens naming keys the provider lacks make Plinth ask its JWKS again at most once a minute', async () => {
    corp.cacheControl = 'max-age=3600';
    try {
      const forged = async () => {
        const token = await corp.sign(
          { iss: corp.issuer, aud: corp.clientId, sub: fresh().sub, iat: seconds(), exp: seconds() + 600 },
          { kid: randomUUID() },
        );
        const { error } = await authClient(t).signInWithIdToken({ provider: 'corp' as never, token });
        return [error?.status, error?.message];
      };
      expect(await forged()).toEqual([400, 'Bad ID token']);
      const before = corp.hits.jwks;
      for (let i = 0; i < 5; i++) expect(await forged()).toEqual([400, 'Bad ID token']);
      expect(corp.hits.jwks).toBe(before);
    } finally {
      corp.cacheControl = null;
    }
  });

  it("attacker: a token with a verified account's address that the provider does not vouch for gets a new account, not that one", async () => {
    const victim = await signedUp();
    await t.db.query('update auth.users set email_confirmed_at = now() where id = $1', [victim.user.id]);
    const a = fresh();
    const { data, error } = await authClient(t).signInWithIdToken({
      provider: 'corp' as never,
      token: await idTokenOf(corp, { sub: a.sub, email: victim.addr, email_verified: false }),
    });
    expect(error).toBeNull();
    expect(data.user?.id).not.toBe(victim.user.id);
    expect(data.user?.email).toBe(''); // the unvouched address is kept on the identity only
    expect(await providersOf(victim.client)).toEqual(['email']);
    // The victim still signs in with her password, to her own account.
    const back = await authClient(t).signInWithPassword({ email: victim.addr, password: PASSWORD });
    expect(back.data.user?.id).toBe(victim.user.id);

    // The OAuth callback's rule, unchanged: a provider that vouches for the address links to it.
    const vouched = await authClient(t).signInWithIdToken({
      provider: 'corp' as never,
      token: await idTokenOf(corp, { sub: fresh().sub, email: victim.addr, email_verified: true }),
    });
    expect(vouched.data.user?.id).toBe(victim.user.id);
  });

  it("an unknown provider, one that issues no ID tokens, and a disabled one are refused in GoTrue's words", async () => {
    const token = await idTokenOf(corp, { sub: fresh().sub });
    const unknown = await authClient(t).signInWithIdToken({ provider: 'nope' as never, token });
    expect([unknown.error?.status, unknown.error?.code, unknown.error?.message]).toEqual([
      400,
      'validation_failed',
      'Custom OIDC provider "nope" not allowed',
    ]);
    const github = await authClient(t).signInWithIdToken({ provider: 'github' as never, token });
    expect(errorOf(github.error)).toEqual({ status: 400, code: 'provider_disabled' }); // off in this project
    const off = await authClient(t).signInWithIdToken({ provider: 'off' as never, token });
    expect(errorOf(off.error)).toEqual({ status: 400, code: 'provider_disabled' });
    const raw = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=id_token',
      headers: t.as.anon,
      payload: { provider: 'corp' },
    });
    expect(raw.json()).toMatchObject({
      code: 400,
      error_code: 'validation_failed',
      msg: 'id_token required',
      error_description: 'id_token required',
    });
  });
});

describe('linkIdentity with an ID token', () => {
  it('attaches the provider account to the signed-in user; signing in with it later reaches that user', async () => {
    const { client, user, addr } = await signedUp();
    const a = fresh();
    const { data, error } = await client.linkIdentity({
      provider: 'corp' as never,
      token: await idTokenOf(corp, { sub: a.sub, email: a.addr, email_verified: true, nonce: a.hashed }),
      nonce: a.raw,
    });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
    expect(await providersOf(client)).toEqual(['corp', 'email']);
    // The link's address stays on the identity; the account keeps its own.
    expect((await client.getUser()).data.user?.email).toBe(addr);
    const later = await authClient(t).signInWithIdToken({ provider: 'corp' as never, token: await idTokenOf(corp, { sub: a.sub }) });
    expect(later.data.user?.id).toBe(user.id);
  });

  it('attacker: a provider account attached to another user is refused (422 identity_already_exists), nothing moves', async () => {
    const owner = await signedUp();
    const attacker = await signedUp();
    const a = fresh();
    const first = await owner.client.linkIdentity({ provider: 'corp' as never, token: await idTokenOf(corp, { sub: a.sub }) });
    expect(first.error).toBeNull();
    // The attacker holds a genuine token of that provider account (replayed from the owner's app).
    const stolen = await attacker.client.linkIdentity({ provider: 'corp' as never, token: await idTokenOf(corp, { sub: a.sub }) });
    expect(errorOf(stolen.error)).toEqual({ status: 422, code: 'identity_already_exists' });
    expect(await providersOf(attacker.client)).toEqual(['email']);
    expect(await providersOf(owner.client)).toEqual(['corp', 'email']);
    const signIn = await authClient(t).signInWithIdToken({ provider: 'corp' as never, token: await idTokenOf(corp, { sub: a.sub }) });
    expect(signIn.data.user?.id).toBe(owner.user.id);
  });

  it("needs the user's own open session: the publishable key is 401, an ended session 403 session_not_found", async () => {
    const token = await idTokenOf(corp, { sub: fresh().sub });
    const keyOnly = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=id_token',
      headers: { ...t.as.anon, authorization: `Bearer ${t.keys.publicKey}`, 'x-supabase-api-version': '2024-01-01' },
      payload: { provider: 'corp', id_token: token, link_identity: true },
    });
    expect([keyOnly.statusCode, keyOnly.json().code]).toEqual([401, 'no_authorization']);

    const { client, user } = await signedUp();
    const access = (await client.getSession()).data.session!.access_token;
    await t.db.query('update auth.sessions set revoked_at = now() where user_id = $1', [user.id]);
    const ended = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=id_token',
      headers: { ...t.as.user(access), 'x-supabase-api-version': '2024-01-01' },
      payload: { provider: 'corp', id_token: token, link_identity: true },
    });
    expect([ended.statusCode, ended.json().code]).toEqual([403, 'session_not_found']);
    const count = await t.db.query('select count(*)::int as n from auth.identities where user_id = $1', [user.id]);
    expect((count.rows[0] as { n: number }).n).toBe(1);
  });

  it('a Supabase folder without [auth] enable_manual_linking: 404 manual_linking_disabled', async () => {
    const s = await functionsServer(
      { 'supabase/config.toml': 'project_id = "idtoken"\n' },
      { supabase: true, env: { NO_LOG_CAPTURE: '1' } },
    );
    try {
      const res = await s.app.inject({
        method: 'POST',
        url: '/auth/v1/token?grant_type=id_token',
        headers: s.user(await s.mintToken('00000000-0000-4000-8000-0000000000c5')),
        payload: { provider: 'google', id_token: 'x.y.z', link_identity: true },
      });
      expect([res.statusCode, res.json().error_code]).toEqual([404, 'manual_linking_disabled']);
    } finally {
      await s.stop();
    }
  });
});
