import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastToken, mailsTo, setAuth, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { type GitHubFake, type OidcProvider, socialSignIn, startGitHub, startOidcProvider } from '../../../test/oauth.js';

// The two pre-account takeovers of the account-integrity review, end to end: the attacker
// acts first, the victim (the address's real owner) proves her address, the attacker tries
// again. The rule that closes both: a credential attached while the address was unproven
// never survives its first proof (accounts.proveEmail, docs/security.md).
const APP = 'https://app.example.com/auth';
const ATTACKER_PW = 'attacker password 1';
const VICTIM_PW = 'victim password 22';

let t: TestServer;
let gh: GitHubFake;
let idp: OidcProvider;
beforeAll(async () => {
  gh = await startGitHub('gh-client', 'gh-secret');
  idp = await startOidcProvider();
  t = await createAuthServer({ OAUTH_GITHUB_URL: gh.url, OAUTH_GITHUB_API_URL: gh.url, OAUTH_MICROSOFT_URL: idp.url });
  await setAuth(t, {
    allowed_redirect_urls: [APP],
    email_verification_url: `${APP}/verify`,
    password_reset_url: `${APP}/reset`,
    magic_link_enabled: true,
    magic_link_url: `${APP}/magic`,
    providers: {
      github: { enabled: true, client_id: 'gh-client', client_secret: 'gh-secret' },
      microsoft: { enabled: true, client_id: 'ms-client', client_secret: 'ms-secret' },
    },
  });
  const made = await t.sql(
    'create table notes (id serial primary key, owner uuid not null default auth.uid(), body text); create policy own on notes using (owner = auth.uid()) with check (owner = auth.uid());',
  );
  expect(made.statusCode, made.body).toBe(200);
});
afterAll(async () => {
  await t?.stop();
  await gh?.stop();
  await idp?.stop();
});

const signInRes = (addr: string, password: string) => call(t, 'POST', 'signin', { email: addr, password });
const rest = (method: 'GET' | 'POST', token: string, payload?: object) =>
  t.app.inject({ method, url: '/api/v1/db/notes', headers: t.as.user(token), ...(payload ? { payload } : {}) });

describe('confirmation on: the attacker signs up with the victim’s address first', () => {
  beforeAll(() => setAuth(t, { require_email_confirmation: true }));
  afterAll(() => setAuth(t, { require_email_confirmation: false }));

  it('her own link proves the address with neither password: his dies, his link dies, she sets hers', async () => {
    const victim = email('victim');
    expect((await call(t, 'POST', 'signup', { email: victim, password: ATTACKER_PW })).statusCode).toBe(200);
    t.clock.advance(61_000); // past the one-mail-a-minute limit
    const decoy = await call(t, 'POST', 'signup', { email: victim, password: VICTIM_PW });
    expect(decoy.statusCode).toBe(200);
    expect(decoy.json().session).toBeNull();
    const mails = await mailsTo(t, victim);
    expect(mails.map((m) => m.kind)).toEqual(['verification', 'verification']);
    const attackersLink = new URL(mails[0].link).searchParams.get('token') ?? '';

    // The victim clicks the link of her own sign-up. Two sign-ups chose two passwords for one
    // unproven address: the server cannot tell whose link is whose, so no password survives.
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, victim) })).statusCode).toBe(200);
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
    expect(code(await signInRes(victim, VICTIM_PW))).toEqual([400, 'invalid_credentials']);
    // The link the attacker's sign-up sent died with the proof.
    expect(code(await call(t, 'POST', 'verify-email', { token: attackersLink }))).toEqual([400, 'token_invalid']);

    // She sets her password with a reset, and a magic link later changes nothing for him.
    t.clock.advance(61_000);
    await call(t, 'POST', 'forgot-password', { email: victim });
    expect((await call(t, 'POST', 'reset-password', { token: await lastToken(t, victim, 'reset'), password: VICTIM_PW })).statusCode).toBe(
      200,
    );
    expect((await signInRes(victim, VICTIM_PW)).statusCode).toBe(200);
    t.clock.advance(61_000);
    expect((await call(t, 'POST', 'request-magic-link', { email: victim })).statusCode).toBe(200);
    expect((await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, victim, 'magic_link') })).statusCode).toBe(200);
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
  });

  it('issue 19: her mail held back by the limit, she clicks the attacker’s link: no password survives, and hers still arrives', async () => {
    const victim = email('victim-held');
    await call(t, 'POST', 'signup', { email: victim, password: ATTACKER_PW });
    // Seconds later, within the attacker's mail minute: her mail is held back, not dropped.
    expect((await call(t, 'POST', 'signup', { email: victim, password: VICTIM_PW })).statusCode).toBe(200);
    const first = await mailsTo(t, victim);
    expect(first).toHaveLength(1); // the only mail she has is the attacker's
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, victim) })).statusCode).toBe(200);
    // The attacker's password did not survive the proof; he cannot read her data later.
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
    // She signs in by magic link (not a reset): still hers alone.
    t.clock.advance(61_000);
    expect(await mailsTo(t, victim)).toHaveLength(2); // her own sign-up's mail, once the minute was over
    expect((await call(t, 'POST', 'request-magic-link', { email: victim })).statusCode).toBe(200);
    const magic = await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, victim, 'magic_link') });
    expect(magic.statusCode).toBe(200);
    expect((await rest('POST', magic.json().access_token, { body: 'hers' })).statusCode).toBe(201);
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
    expect(code(await signInRes(victim, VICTIM_PW))).toEqual([400, 'invalid_credentials']);
  });

  it('sign-ups held back within one minute make one more mail after it, never none', async () => {
    const addr = email('held-many');
    for (let i = 0; i < 4; i++)
      expect((await call(t, 'POST', 'signup', { email: addr, password: `password number ${i}` })).statusCode).toBe(200);
    expect(await mailsTo(t, addr)).toHaveLength(1);
    t.clock.advance(61_000);
    const mails = await mailsTo(t, addr);
    expect(mails.map((m) => m.kind)).toEqual(['verification', 'verification']);
    // The held-back mail carries the newest sign-up's link; it proves the address (no password survives).
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, addr) })).statusCode).toBe(200);
    for (let i = 0; i < 4; i++) expect(code(await signInRes(addr, `password number ${i}`))).toEqual([400, 'invalid_credentials']);
  });

  it('a magic link as the first proof drops the attacker’s password', async () => {
    const victim = email('victim-magic');
    await call(t, 'POST', 'signup', { email: victim, password: ATTACKER_PW });
    t.clock.advance(61_000);
    await call(t, 'POST', 'request-magic-link', { email: victim });
    const session = await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, victim, 'magic_link') });
    expect(session.statusCode).toBe(200);
    expect(session.json().user.email_confirmed_at).toEqual(expect.any(String));
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
  });

  it('her sign-up within the attacker’s mail minute, then a resent link: it binds neither password', async () => {
    const victim = email('victim-resend');
    await call(t, 'POST', 'signup', { email: victim, password: ATTACKER_PW });
    // Within the minute: her sign-up's mail waits, her sign-up is pending all the same.
    expect((await call(t, 'POST', 'signup', { email: victim, password: VICTIM_PW })).statusCode).toBe(200);
    expect(await mailsTo(t, victim)).toHaveLength(1);
    t.clock.advance(61_000);
    expect((await call(t, 'POST', 'resend-verification', { email: victim })).statusCode).toBe(200);
    expect(await mailsTo(t, victim)).toHaveLength(3);
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, victim) })).statusCode).toBe(200);
    // Two sign-ups chose two passwords: the one who proved the address sets her own (reset).
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
    expect(code(await signInRes(victim, VICTIM_PW))).toEqual([400, 'invalid_credentials']);
  });

  it('a resent link after a single sign-up keeps that sign-up’s password (the ordinary case)', async () => {
    const user = email('resend-ok');
    await call(t, 'POST', 'signup', { email: user, password: VICTIM_PW });
    t.clock.advance(61_000);
    await call(t, 'POST', 'resend-verification', { email: user });
    expect((await call(t, 'POST', 'verify-email', { token: await lastToken(t, user) })).statusCode).toBe(200);
    expect((await signInRes(user, VICTIM_PW)).statusCode).toBe(200);
  });
});

describe('confirmation off: the attacker holds a session of the victim’s unproven address', () => {
  it('her password reset ends his sessions at once, on the REST API too, and his password', async () => {
    const victim = email('victim-off');
    const attacker = await signUp(t, victim, ATTACKER_PW);
    const stolen = attacker.session.access_token;
    expect((await rest('POST', stolen, { body: 'planted' })).statusCode).toBe(201);
    // She cannot sign up (409, confirmation is off); she resets the password of "her" account.
    expect(code(await call(t, 'POST', 'signup', { email: victim, password: VICTIM_PW }))).toEqual([409, 'email_exists']);
    await call(t, 'POST', 'forgot-password', { email: victim });
    const reset = await call(t, 'POST', 'reset-password', { token: await lastToken(t, victim, 'reset'), password: VICTIM_PW });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.json().user.email_confirmed_at).toEqual(expect.any(String));
    // His access token is refused at once (not at its expiry), his refresh token and password too.
    expect(code(await rest('GET', stolen))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: attacker.session.refresh_token }))).toEqual([
      401,
      'invalid_refresh_token',
    ]);
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
    expect((await signInRes(victim, VICTIM_PW)).statusCode).toBe(200);
  });
});

describe('social sign-in with an email the provider does not vouch for', () => {
  it('GitHub’s public profile email makes no account with that address: the owner signs up, the attacker stays outside', async () => {
    const victim = email('victim-gh');
    gh.user = { ...gh.user, id: 66_600_001, login: 'mallory', email: victim };
    gh.emails = [{ email: victim, primary: true, verified: false, visibility: 'public' }];
    const first = await socialSignIn(t, 'github', APP);
    const mallory = first.fragment.get('access_token') ?? '';
    const malloryUser = (await call(t, 'GET', 'user', undefined, asUser(t, mallory))).json();
    expect(malloryUser.email).toBeNull();

    // The address is free for its owner, who writes a note.
    const owner = await signUp(t, victim, VICTIM_PW);
    expect(owner.user.id).not.toBe(malloryUser.id);
    expect((await rest('POST', owner.session.access_token, { body: 'private' })).statusCode).toBe(201);

    // The attacker signs in with GitHub again: his own account, none of her rows.
    const again = await socialSignIn(t, 'github', APP);
    const token = again.fragment.get('access_token') ?? '';
    expect((await call(t, 'GET', 'user', undefined, asUser(t, token))).json().id).toBe(malloryUser.id);
    expect((await rest('GET', token)).json()).toEqual([]);
  });

  it('Microsoft without xms_edov likewise', async () => {
    const victim = email('victim-ms');
    idp.claims = { sub: `ms-mallory-${victim}`, email: victim, name: 'Mallory' };
    const first = await socialSignIn(t, 'microsoft', APP);
    const mallory = (await call(t, 'GET', 'user', undefined, asUser(t, first.fragment.get('access_token') ?? ''))).json();
    expect(mallory.email).toBeNull();
    const owner = await signUp(t, victim, VICTIM_PW);
    expect(owner.user.id).not.toBe(mallory.id);
  });

  it('an identity linked while the address was unproven does not survive the owner’s proof', async () => {
    // Accounts made before this fix: the unverified provider email became the account's
    // address and the attacker's identity was linked to it.
    const victim = email('victim-legacy');
    const { rows } = await t.db.query<{ id: string }>('insert into auth.users (email) values ($1) returning id', [victim]);
    const legacy = rows[0].id;
    await t.db.query(`insert into auth.identities (user_id, provider, provider_user_id, email) values ($1, 'github', '66600002', $2)`, [
      legacy,
      victim,
    ]);
    // The owner proves the address with a magic link.
    await call(t, 'POST', 'request-magic-link', { email: victim });
    const owner = await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, victim, 'magic_link') });
    expect(owner.json().user.id).toBe(legacy);
    expect(owner.json().user.identities.map((i: { provider: string }) => i.provider)).not.toContain('github');
    expect((await rest('POST', owner.json().access_token, { body: 'mine' })).statusCode).toBe(201);
    // The attacker's GitHub account now signs in to an account of its own.
    gh.user = { ...gh.user, id: 66_600_002, login: 'mallory2', email: null };
    gh.emails = [];
    const again = await socialSignIn(t, 'github', APP);
    const token = again.fragment.get('access_token') ?? '';
    expect((await call(t, 'GET', 'user', undefined, asUser(t, token))).json().id).not.toBe(legacy);
    expect((await rest('GET', token)).json()).toEqual([]);
  });

  it('a verified provider proving the address keeps its own identity and drops a password set before', async () => {
    const victim = email('victim-verified');
    const attacker = await signUp(t, victim, ATTACKER_PW); // confirmation off: unproven address
    gh.user = { ...gh.user, id: 66_600_003, login: 'owner', email: null };
    gh.emails = [{ email: victim, primary: true, verified: true, visibility: 'private' }];
    const res = await socialSignIn(t, 'github', APP);
    const user = (await call(t, 'GET', 'user', undefined, asUser(t, res.fragment.get('access_token') ?? ''))).json();
    expect(user.id).toBe(attacker.user.id);
    expect(user.identities.map((i: { provider: string }) => i.provider).sort()).toEqual(['email', 'github']);
    expect(code(await signInRes(victim, ATTACKER_PW))).toEqual([400, 'invalid_credentials']);
    expect(code(await rest('GET', attacker.session.access_token))).toEqual([401, 'invalid_token']);
  });
});
