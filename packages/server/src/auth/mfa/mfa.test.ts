import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, createAuthServer, email, lastToken, setAuth, signIn, signUp } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';
import { rtConnect } from '../../../test/realtime.js';
import { TestAuthenticator } from '../../../test/webauthn.js';
import { totpCode } from './totp.js';

// Issue 27, TOTP and enforcement: on PGlite and PostgreSQL (PLINTH_TEST_DB), in-process.

let t: TestServer;
let base: string;
beforeAll(async () => {
  t = await createAuthServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  await setAuth(t, {
    allowed_redirect_urls: ['https://app.example.com/'],
    email_verification_url: 'https://app.example.com/verify',
    magic_link_enabled: true,
    magic_link_url: 'https://app.example.com/magic',
  });
  const res = await t.sql(`
    create table notes (id serial primary key, owner uuid not null default auth.uid(), body text not null);
    alter table notes enable row level security;
    create policy own on notes for all using (owner = auth.uid()) with check (owner = auth.uid());
    create table vault (id serial primary key, owner uuid not null default auth.uid(), secret text not null);
    alter table vault enable row level security;
    create policy aal2_only on vault for all using (owner = auth.uid() and auth.jwt()->>'aal' = 'aal2') with check (owner = auth.uid());
    select realtime.enable('notes');
    create function my_notes() returns setof notes language sql stable as $$ select * from notes $$;
    grant execute on function my_notes() to authenticated;
    insert into storage.buckets (id) values ('docs') on conflict do nothing;
  `);
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(() => t?.stop());

const del = (path: string, headers: Record<string, string>) =>
  t.app.inject({ method: 'DELETE', url: `/v1/auth/${path}`, headers: { ...headers, 'user-agent': 'vitest-agent' } });
const rest = (token: string, method: 'GET' | 'POST' = 'GET', payload?: unknown, table = 'notes') =>
  t.app.inject({ method, url: `/api/v1/db/${table}`, headers: asUser(t, token), ...(payload ? { payload: payload as object } : {}) });
const claims = (token: string) => decodeJwt(token) as { aal: string; amr: Array<{ method: string }> };

/** Signs up, enrols a TOTP factor and verifies it: the aal2 session, the factor and its secret. */
async function enrolled(addr = email()) {
  const { session } = await signUp(t, addr);
  const enrol = await call(t, 'POST', 'factors', { factor_type: 'totp', friendly_name: 'phone' }, asUser(t, session.access_token));
  expect(enrol.statusCode, enrol.body).toBe(200);
  const factor = enrol.json();
  const aal2 = await verify(session.access_token, factor.id, factor.totp.secret);
  expect(aal2.statusCode, aal2.body).toBe(200);
  return { addr, factor, secret: factor.totp.secret as string, aal2: aal2.json(), first: session };
}

async function challenge(token: string, factorId: string): Promise<string> {
  const res = await call(t, 'POST', `factors/${factorId}/challenge`, {}, asUser(t, token));
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

async function verify(token: string, factorId: string, secret: string, codeValue?: string) {
  const challengeId = await challenge(token, factorId);
  return call(
    t,
    'POST',
    `factors/${factorId}/verify`,
    { challenge_id: challengeId, code: codeValue ?? totpCode(secret, t.clock.now()) },
    asUser(t, token),
  );
}

/** The next 30-second step, so a code of this test is not one a previous step accepted. */
const nextStep = () => t.clock.advance(30_000 - (t.clock.now() % 30_000) + 1);

describe('TOTP factors', () => {
  it('enrol → challenge → verify gives a new session at aal2; the first success verifies the factor', async () => {
    const addr = email();
    const { session } = await signUp(t, addr);
    expect(claims(session.access_token)).toMatchObject({ aal: 'aal1', amr: [{ method: 'password' }] });
    expect(session.next_aal).toBe('aal1');
    const enrol = await call(t, 'POST', 'factors', { factor_type: 'totp' }, asUser(t, session.access_token));
    expect(enrol.statusCode, enrol.body).toBe(200);
    const f = enrol.json();
    expect(f).toMatchObject({ factor_type: 'totp', status: 'unverified', totp: { secret: expect.stringMatching(/^[A-Z2-7]{32}$/) } });
    expect(f.totp.uri).toMatch(/^otpauth:\/\/totp\//);
    expect(Buffer.from(f.totp.qr_code.replace('data:image/svg+xml;base64,', ''), 'base64').toString()).toMatch(/^<svg/);
    // Unverified, it asks nothing of the user yet.
    expect((await rest(session.access_token)).statusCode).toBe(200);

    const res = await verify(session.access_token, f.id, f.totp.secret);
    expect(res.statusCode, res.body).toBe(200);
    const aal2 = res.json();
    expect(aal2.next_aal).toBe('aal2');
    expect(claims(aal2.access_token)).toMatchObject({ aal: 'aal2', amr: [{ method: 'password' }, { method: 'totp' }] });
    const list = await call(t, 'GET', 'factors', undefined, asUser(t, aal2.access_token));
    expect(list.json().factors).toEqual([expect.objectContaining({ id: f.id, status: 'verified' })]);
    // The aal1 session it came from is over: its refresh token never reaches aal2.
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: session.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    const refreshed = await call(t, 'POST', 'refresh', { refresh_token: aal2.refresh_token });
    expect(claims(refreshed.json().access_token).aal).toBe('aal2');
    expect((await rest(aal2.access_token)).statusCode).toBe(200);
  });

  it('an aal1 token of an enrolled user reads nothing: REST, storage, realtime, account changes; it may step up', async () => {
    const { addr, factor, secret } = await enrolled();
    const aal1 = await signIn(t, addr);
    expect(aal1.next_aal).toBe('aal2');
    expect(claims(aal1.access_token).aal).toBe('aal1');
    const h = asUser(t, aal1.access_token);
    expect(code(await rest(aal1.access_token))).toEqual([403, 'mfa_required']);
    expect(code(await rest(aal1.access_token, 'POST', { body: 'x' }))).toEqual([403, 'mfa_required']);
    // A function the user may call (RPC goes through the REST caller check).
    for (const method of ['GET', 'POST'] as const) {
      expect(
        code(await t.app.inject({ method, url: '/api/v1/rpc/my_notes', headers: h, ...(method === 'POST' ? { payload: {} } : {}) })),
      ).toEqual([403, 'mfa_required']);
    }
    expect(code(await t.app.inject({ method: 'GET', url: '/api/v1/storage/object/docs', headers: h }))).toEqual([403, 'mfa_required']);
    expect(code(await call(t, 'PATCH', 'user', { password: 'another long password' }, h))).toEqual([403, 'mfa_required']);
    expect(code(await call(t, 'PATCH', 'user', { email: email() }, h))).toEqual([403, 'mfa_required']);
    expect(code(await call(t, 'POST', 'factors', { factor_type: 'totp' }, h))).toEqual([403, 'mfa_required']);
    expect(code(await del(`factors/${factor.id}`, h))).toEqual([403, 'mfa_required']);
    expect(code(await call(t, 'POST', 'factors/recovery-codes', {}, h))).toEqual([403, 'mfa_required']);
    expect(code(await call(t, 'POST', 'reauthenticate', {}, h))).toEqual([403, 'mfa_required']);
    await expect(rtConnect(base, t.keys.publicKey, { authorization: `Bearer ${aal1.access_token}` })).rejects.toThrow(/403/);
    // What it may do: read the user, list factors, step up.
    expect((await call(t, 'GET', 'user', undefined, h)).statusCode).toBe(200);
    expect((await call(t, 'GET', 'factors', undefined, h)).json().factors).toHaveLength(1);
    nextStep();
    const up = await verify(aal1.access_token, factor.id, secret);
    expect(up.statusCode, up.body).toBe(200);
    expect((await rest(up.json().access_token)).statusCode).toBe(200);
    const rpc = await t.app.inject({
      method: 'POST',
      url: '/api/v1/rpc/my_notes',
      headers: asUser(t, up.json().access_token),
      payload: {},
    });
    expect(rpc.statusCode, rpc.body).toBe(200);
    expect((await call(t, 'PATCH', 'user', { name: 'Ada' }, asUser(t, up.json().access_token))).statusCode).toBe(200);
  });

  it('an open realtime connection of an aal1 token ends when its user verifies a factor', async () => {
    const addr = email();
    const { session } = await signUp(t, addr);
    const ws = await rtConnect(base, t.keys.publicKey);
    ws.send({ type: 'auth', access_token: session.access_token });
    ws.send({ type: 'subscribe', id: 's', table: 'notes' });
    await ws.next((m) => m.type === 'subscribed');
    const enrol = (await call(t, 'POST', 'factors', { factor_type: 'totp' }, asUser(t, session.access_token))).json();
    expect((await verify(session.access_token, enrol.id, enrol.totp.secret)).statusCode).toBe(200);
    expect(await ws.closed).toBe(4001);
  });

  it('a code works once: a replay in its window is refused', async () => {
    const { factor, secret, aal2 } = await enrolled();
    const used = totpCode(secret, t.clock.now());
    const replay = await verify(aal2.access_token, factor.id, secret, used);
    expect(code(replay)).toEqual([400, 'invalid_code']);
    // The previous step's code (still inside the ±1 window) is older than the one used: refused too.
    expect(code(await verify(aal2.access_token, factor.id, secret, totpCode(secret, t.clock.now() - 30_000)))).toEqual([
      400,
      'invalid_code',
    ]);
    nextStep();
    expect((await verify(aal2.access_token, factor.id, secret)).statusCode).toBe(200);
  });

  it('5 wrong codes void the challenge; a challenge is the session’s own and lasts 5 minutes', async () => {
    const { addr, factor, secret } = await enrolled();
    const { access_token: token } = await signIn(t, addr);
    const h = asUser(t, token);
    nextStep();
    const id = await challenge(token, factor.id);
    const good = totpCode(secret, t.clock.now());
    const wrong = good === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++)
      expect(code(await call(t, 'POST', `factors/${factor.id}/verify`, { challenge_id: id, code: wrong }, h))).toEqual([
        400,
        'invalid_code',
      ]);
    expect(code(await call(t, 'POST', `factors/${factor.id}/verify`, { challenge_id: id, code: good }, h))).toEqual([
      400,
      'challenge_invalid',
    ]);
    // Another session cannot use this session's challenge.
    const other = await signIn(t, addr);
    const mine = await challenge(token, factor.id);
    expect(
      code(await call(t, 'POST', `factors/${factor.id}/verify`, { challenge_id: mine, code: good }, asUser(t, other.access_token))),
    ).toEqual([400, 'challenge_invalid']);
    t.clock.advance(5 * 60_000 + 1);
    expect(
      code(await call(t, 'POST', `factors/${factor.id}/verify`, { challenge_id: mine, code: totpCode(secret, t.clock.now()) }, h)),
    ).toEqual([400, 'challenge_invalid']);
    // Someone else's factor: 404.
    const stranger = await signUp(t, email());
    expect(code(await call(t, 'POST', `factors/${factor.id}/challenge`, {}, asUser(t, stranger.session.access_token)))).toEqual([
      404,
      'factor_not_found',
    ]);
  });

  it('wrong codes are limited per user across challenges (429)', async () => {
    const limited = await createAuthServer({ AUTH_RATE_MFA_USER: '3/900' });
    try {
      const addr = email();
      const { session } = (
        await limited.app.inject({
          method: 'POST',
          url: '/v1/auth/signup',
          headers: limited.as.anon,
          payload: { email: addr, password: 'correct horse battery' },
        })
      ).json();
      const h = limited.as.user(session.access_token);
      const f = (
        await limited.app.inject({ method: 'POST', url: '/v1/auth/factors', headers: h, payload: { factor_type: 'totp' } })
      ).json();
      const attempt = async () => {
        const c = (await limited.app.inject({ method: 'POST', url: `/v1/auth/factors/${f.id}/challenge`, headers: h, payload: {} })).json();
        return limited.app.inject({
          method: 'POST',
          url: `/v1/auth/factors/${f.id}/verify`,
          headers: h,
          payload: { challenge_id: c.id, code: 'abcdef' },
        });
      };
      for (let i = 0; i < 3; i++) expect(code(await attempt())).toEqual([400, 'invalid_code']);
      const refused = await attempt();
      expect(code(refused)).toEqual([429, 'rate_limited']);
      expect(refused.headers['retry-after']).toBeDefined();
    } finally {
      await limited.stop();
    }
  });

  it('at most 10 factors per user', async () => {
    const { session } = await signUp(t, email());
    const h = asUser(t, session.access_token);
    for (let i = 0; i < 10; i++) expect((await call(t, 'POST', 'factors', { factor_type: 'totp' }, h)).statusCode).toBe(200);
    expect(code(await call(t, 'POST', 'factors', { factor_type: 'totp' }, h))).toEqual([409, 'too_many_factors']);
    expect(code(await call(t, 'POST', 'factors', { factor_type: 'sms' }, h))).toEqual([400, 'invalid_request']);
  });
});

describe('recovery codes', () => {
  it('need aal2; each works once for a new aal2 session; a new set voids the old', async () => {
    const { addr, aal2 } = await enrolled();
    const res = await call(t, 'POST', 'factors/recovery-codes', {}, asUser(t, aal2.access_token));
    expect(res.statusCode, res.body).toBe(200);
    const { codes } = res.json();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const aal1 = await signIn(t, addr);
    const used = await call(t, 'POST', 'factors/recover', { code: codes[0].toUpperCase() }, asUser(t, aal1.access_token));
    expect(used.statusCode, used.body).toBe(200);
    expect(claims(used.json().access_token)).toMatchObject({ aal: 'aal2', amr: [{ method: 'password' }, { method: 'recovery' }] });
    expect((await rest(used.json().access_token)).statusCode).toBe(200);
    const again = await signIn(t, addr);
    expect(code(await call(t, 'POST', 'factors/recover', { code: codes[0] }, asUser(t, again.access_token)))).toEqual([
      400,
      'recovery_code_invalid',
    ]);
    // A new set: the old codes are void.
    const fresh = (await call(t, 'POST', 'factors/recovery-codes', {}, asUser(t, used.json().access_token))).json().codes;
    expect(code(await call(t, 'POST', 'factors/recover', { code: codes[1] }, asUser(t, again.access_token)))).toEqual([
      400,
      'recovery_code_invalid',
    ]);
    expect((await call(t, 'POST', 'factors/recover', { code: fresh[1] }, asUser(t, again.access_token))).statusCode).toBe(200);
  });
});

describe('downgrades and modes', () => {
  it('removing the last factor downgrades at once: aal1 tokens work, aal2 tokens count as aal1', async () => {
    const { addr, factor, aal2 } = await enrolled();
    const aal1 = await signIn(t, addr);
    expect(code(await rest(aal1.access_token))).toEqual([403, 'mfa_required']);
    expect((await rest(aal2.access_token, 'POST', { secret: 's' }, 'vault')).statusCode).toBe(201);
    expect((await rest(aal2.access_token, 'GET', undefined, 'vault')).json()).toHaveLength(1);
    expect((await del(`factors/${factor.id}`, asUser(t, aal2.access_token))).statusCode).toBe(200);
    expect((await rest(aal1.access_token)).statusCode).toBe(200);
    // The session is aal1 now: its token's aal2 no longer opens the aal2-only policy.
    expect((await rest(aal2.access_token, 'GET', undefined, 'vault')).json()).toEqual([]);
    const refreshed = (await call(t, 'POST', 'refresh', { refresh_token: aal2.refresh_token })).json();
    expect(claims(refreshed.access_token).aal).toBe('aal1');
    expect(refreshed.next_aal).toBe('aal1');
  });

  it('an admin reset removes the factors and downgrades at once', async () => {
    const { addr } = await enrolled();
    const aal1 = await signIn(t, addr);
    expect(code(await rest(aal1.access_token))).toEqual([403, 'mfa_required']);
    const user = aal1.user.id;
    const listed = await t.app.inject({ method: 'GET', url: `/api/v1/users/${user}/factors`, headers: t.as.service });
    expect(listed.json()).toMatchObject({ factors: [expect.objectContaining({ status: 'verified' })], passkeys: [] });
    const reset = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${user}/factors`, headers: t.as.service });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.json()).toEqual({ removed: 1 });
    expect((await rest(aal1.access_token)).statusCode).toBe(200);
  });

  it('mfa_enforcement "policies" lets aal1 through to policies that read auth.jwt()->>\'aal\'', async () => {
    const { addr, aal2 } = await enrolled();
    expect((await rest(aal2.access_token, 'POST', { secret: 'kept' }, 'vault')).statusCode).toBe(201);
    const aal1 = await signIn(t, addr);
    await setAuth(t, { mfa_enforcement: 'policies' });
    try {
      expect((await rest(aal1.access_token, 'GET', undefined, 'vault')).json()).toEqual([]);
      expect((await rest(aal1.access_token)).statusCode).toBe(200);
      expect((await rest(aal2.access_token, 'GET', undefined, 'vault')).json()).toEqual([expect.objectContaining({ secret: 'kept' })]);
    } finally {
      await setAuth(t, { mfa_enforcement: 'server' });
    }
    expect(code(await rest(aal1.access_token))).toEqual([403, 'mfa_required']);
  });
});

describe('a factor enrolled from the password alone (review round 3, R9)', () => {
  it("the owner's first verification removes the attacker's pending factor and ends the attacker's session; it never reaches aal2", async () => {
    const addr = email('r9');
    const owner = (await signUp(t, addr)).session;
    // The attacker knows the password (reused, phished) and enrols a factor of theirs, left pending.
    const att = await signIn(t, addr);
    const fa = (await call(t, 'POST', 'factors', { factor_type: 'totp', friendly_name: 'Phone' }, asUser(t, att.access_token))).json();
    expect(fa.status).toBe('unverified');
    // The owner enrols and verifies her own: her session is the one that steps up.
    const mine = (await call(t, 'POST', 'factors', { factor_type: 'totp', friendly_name: 'Phone' }, asUser(t, owner.access_token))).json();
    nextStep();
    const aal2 = await verify(owner.access_token, mine.id, mine.totp.secret);
    expect(aal2.statusCode, aal2.body).toBe(200);
    expect(claims(aal2.json().access_token).aal).toBe('aal2');
    // Her list shows her factor alone: the pending one is gone.
    const list = (await call(t, 'GET', 'factors', undefined, asUser(t, aal2.json().access_token))).json().factors;
    expect(list.map((f: { id: string; status: string }) => [f.id, f.status])).toEqual([[mine.id, 'verified']]);
    // The attacker's session ended (its access token and its refresh token).
    expect(code(await rest(att.access_token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'refresh', { refresh_token: att.refresh_token }))).toEqual([401, 'invalid_refresh_token']);
    // Later, from a new aal1 session (the password still works), the pending factor steps up to nothing.
    const later = await signIn(t, addr);
    expect(later.next_aal).toBe('aal2');
    nextStep();
    const ch = await call(t, 'POST', `factors/${fa.id}/challenge`, {}, asUser(t, later.access_token));
    expect(code(ch)).toEqual([404, 'factor_not_found']);
    // The owner's new session works.
    expect((await rest(aal2.json().access_token)).statusCode).toBe(200);
  });

  it('two first verifications at once (the owner and the attacker): one factor ends verified, the other is gone', async () => {
    const addr = email('r9race');
    const owner = (await signUp(t, addr)).session;
    const att = await signIn(t, addr);
    const enrol = async (token: string) =>
      (await call(t, 'POST', 'factors', { factor_type: 'totp' }, asUser(t, token))).json() as { id: string; totp: { secret: string } };
    const [mine, theirs] = [await enrol(owner.access_token), await enrol(att.access_token)];
    nextStep();
    const [a, b] = [await challenge(owner.access_token, mine.id), await challenge(att.access_token, theirs.id)];
    const at = (token: string, f: typeof mine, ch: string) =>
      call(t, 'POST', `factors/${f.id}/verify`, { challenge_id: ch, code: totpCode(f.totp.secret, t.clock.now()) }, asUser(t, token));
    const results = await Promise.all([at(owner.access_token, mine, a), at(att.access_token, theirs, b)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    const userId = (decodeJwt(owner.access_token) as { sub: string }).sub;
    const left = await t.db.query<{ status: string }>('select status from auth.mfa_factors where user_id = $1', [userId]);
    expect(left.rows.map((r) => r.status)).toEqual(['verified']);
  });

  it('with a verified factor, verifying another, never-verified one needs aal2 (it is an enrolment)', async () => {
    const { addr, secret, aal2, factor } = await enrolled(email('r9b'));
    // A pending factor (enrolled at aal2 here; left from before this rule, or from a race, elsewhere).
    const pending = (await call(t, 'POST', 'factors', { factor_type: 'totp' }, asUser(t, aal2.access_token))).json();
    const aal1 = await signIn(t, addr);
    nextStep();
    expect(code(await verify(aal1.access_token, pending.id, pending.totp.secret))).toEqual([403, 'mfa_required']);
    const rows = await t.db.query<{ status: string }>('select status from auth.mfa_factors where id = $1', [pending.id]);
    expect(rows.rows[0].status).toBe('unverified');
    // From aal2 it is an ordinary enrolment; and the verified factor itself steps up from aal1.
    nextStep();
    expect((await verify(aal2.access_token, pending.id, pending.totp.secret)).statusCode).toBe(200);
    nextStep();
    expect((await verify(aal1.access_token, factor.id, secret)).statusCode).toBe(200);
  });

  it('enrolment lists the passkeys already registered: each signs in at aal2 by itself', async () => {
    const { session } = await signUp(t, email('r9c'));
    const userId = (decodeJwt(session.access_token) as { sub: string }).sub;
    // A passkey registered from aal1 before any factor (registration needs a browser: the row it leaves).
    await t.db.query(
      `insert into auth.passkeys (user_id, credential_id, public_key, name, created_at) values ($1, $2, 'pk', 'Laptop (not mine)', now())`,
      [userId, `cred-${userId}`],
    );
    const enrol = await call(t, 'POST', 'factors', { factor_type: 'totp' }, asUser(t, session.access_token));
    expect(enrol.statusCode, enrol.body).toBe(200);
    expect(enrol.json().passkeys).toEqual([
      { id: expect.any(String), name: 'Laptop (not mine)', created_at: expect.any(String), last_used_at: null, backed_up: false },
    ]);
  });
});

describe('the proof rule', () => {
  it('factors enrolled before the owner proved the address do not survive the proof', async () => {
    // The attacker signs up with the owner's address (no confirmation asked) and enrols a
    // factor of theirs: the owner would be locked out behind the attacker's authenticator.
    const addr = email('owner');
    const { session } = await signUp(t, addr);
    const f = (await call(t, 'POST', 'factors', { factor_type: 'totp' }, asUser(t, session.access_token))).json();
    const attacker = await verify(session.access_token, f.id, f.totp.secret);
    expect(attacker.statusCode).toBe(200);
    const codes = (await call(t, 'POST', 'factors/recovery-codes', {}, asUser(t, attacker.json().access_token))).json().codes;
    // The owner proves the address with a magic link.
    expect((await call(t, 'POST', 'request-magic-link', { email: addr })).statusCode).toBe(200);
    const owner = await call(t, 'POST', 'signin-magic-link', { token: await lastToken(t, addr, 'magic_link') });
    expect(owner.statusCode, owner.body).toBe(200);
    expect(owner.json().next_aal).toBe('aal1');
    expect((await rest(owner.json().access_token)).statusCode).toBe(200);
    expect((await call(t, 'GET', 'factors', undefined, asUser(t, owner.json().access_token))).json().factors).toEqual([]);
    // The attacker's aal2 session ended with the proof, and their recovery codes are void.
    expect(code(await rest(attacker.json().access_token))).toEqual([401, 'invalid_token']);
    expect(code(await call(t, 'POST', 'factors/recover', { code: codes[0] }, asUser(t, owner.json().access_token)))).toEqual([
      400,
      'recovery_code_invalid',
    ]);
  });
});

describe('WebAuthn factors (factor_type webauthn)', () => {
  const ORIGIN = 'http://localhost:5173';
  beforeAll(() => setAuth(t, { passkey_enabled: true, passkey_rp_id: 'localhost', passkey_origins: [ORIGIN] }));

  it('enrol → creation options → the new credential verifies (aal2); a later session answers request options for that credential only, from its own challenge', async () => {
    const addr = email();
    const { session } = await signUp(t, addr);
    const h = asUser(t, session.access_token);
    const enrol = await call(t, 'POST', 'factors', { factor_type: 'webauthn', friendly_name: 'YubiKey' }, h);
    expect(enrol.statusCode, enrol.body).toBe(200);
    expect(enrol.json()).toMatchObject({ factor_type: 'webauthn', status: 'unverified', friendly_name: 'YubiKey', passkeys: [] });
    expect(enrol.json().totp).toBeUndefined();
    const id = enrol.json().id;
    const created = await call(t, 'POST', `factors/${id}/challenge`, {}, h);
    expect(created.json().webauthn).toMatchObject({ type: 'create', options: { rp: { id: 'localhost' } } });
    // A code is no answer to a WebAuthn challenge, and spends it.
    const asCode = await call(t, 'POST', `factors/${id}/verify`, { challenge_id: created.json().id, code: '123456' }, h);
    expect(code(asCode)).toEqual([400, 'passkey_invalid']);
    const fresh = await call(t, 'POST', `factors/${id}/challenge`, {}, h);
    const key = new TestAuthenticator({ rpId: 'localhost', origin: ORIGIN });
    const first = await call(
      t,
      'POST',
      `factors/${id}/verify`,
      { challenge_id: fresh.json().id, credential: key.create(fresh.json().webauthn.options) },
      h,
    );
    expect(first.statusCode, first.body).toBe(200);
    expect(claims(first.json().access_token).aal).toBe('aal2');
    expect(claims(first.json().access_token).amr.map((m) => m.method)).toContain('webauthn');

    const later = await signIn(t, addr);
    const h2 = asUser(t, later.access_token);
    expect(code(await rest(later.access_token))).toEqual([403, 'mfa_required']);
    const ch = await call(t, 'POST', `factors/${id}/challenge`, {}, h2);
    expect(ch.json().webauthn.type).toBe('request');
    expect(ch.json().webauthn.options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([key.id]);
    // The challenge is bound to the session that asked: the aal2 session cannot answer it (nor spend it).
    const elsewhere = await call(
      t,
      'POST',
      `factors/${id}/verify`,
      { challenge_id: ch.json().id, credential: key.get(ch.json().webauthn.options) },
      asUser(t, first.json().access_token),
    );
    expect(code(elsewhere)).toEqual([400, 'challenge_invalid']);
    // Another authenticator, even with the right challenge, is not this factor's.
    const other = new TestAuthenticator({ rpId: 'localhost', origin: ORIGIN });
    other.create({ challenge: 'x' });
    const wrongKey = await call(
      t,
      'POST',
      `factors/${id}/verify`,
      { challenge_id: ch.json().id, credential: other.get(ch.json().webauthn.options) },
      h2,
    );
    expect(code(wrongKey)).toEqual([400, 'passkey_invalid']);
    const ch2 = await call(t, 'POST', `factors/${id}/challenge`, {}, h2);
    const ok = await call(
      t,
      'POST',
      `factors/${id}/verify`,
      { challenge_id: ch2.json().id, credential: key.get(ch2.json().webauthn.options) },
      h2,
    );
    expect(ok.statusCode, ok.body).toBe(200);
    expect(claims(ok.json().access_token).aal).toBe('aal2');
  });
});
