import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUser, call, code, codesTo, createAuthServer, email, lastCode, lastToken, setAuth, signUp } from '../../../test/auth.js';
import { createTestServer, type TestServer } from '../../../test/harness.js';

// Phone sign-in end to end: codes go out through the outbox to a webhook SMS sink.
let t: TestServer;
let n = 0;
/** A fresh valid Swedish mobile number per call (+46 70 …), so limits of one test stay in it. */
const phone = () => `+4670${String((process.pid * 7919 + ++n * 104_729) % 10_000_000).padStart(7, '0')}`;

beforeAll(async () => {
  t = await createAuthServer({ AUTH_RATE_SMS_IP: '1000/3600' }, { sms: true });
  await t.settings.updateProject({ plan: 'pro' });
  await setAuth(t, {
    phone_enabled: true,
    allowed_redirect_urls: ['https://app.example.com/'],
    email_verification_url: 'https://app.example.com/verify',
  });
});
afterAll(() => t?.stop());

const send = (p: string, headers?: Record<string, string>) => call(t, 'POST', 'phone/send-otp', { phone: p }, headers);
const verify = (p: string, c: string) => call(t, 'POST', 'phone/verify', { phone: p, code: c });
const wrong = (c: string) => (c === '000000' ? '000001' : '000000');

describe('send-otp and verify', () => {
  it('texts a 6-digit code to a new number, makes a user without email, and the code signs in once', async () => {
    const p = phone();
    const res = await send(p);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ sent: true });
    const texts = t.sms!.received.filter((m) => m.to === p);
    expect(texts).toHaveLength(0); // nothing before the outbox runs…
    const c = await lastCode(t, p); // …then exactly one text
    expect(t.sms!.received.filter((m) => m.to === p)).toEqual([
      { to: p, body: `${c} is your Plinth project code. It expires in 10 minutes.` },
    ]);
    expect(c).toMatch(/^\d{6}$/);

    const { rows } = await t.db.query<{ email: string | null; phone_confirmed_at: string | null }>(
      'select email, phone_confirmed_at from auth.users where phone = $1',
      [p],
    );
    expect(rows).toEqual([{ email: null, phone_confirmed_at: null }]);

    const ok = await verify(p, c);
    expect(ok.statusCode, ok.body).toBe(200);
    const session = ok.json();
    expect(session).toMatchObject({ token_type: 'bearer', user: { phone: p, email: null } });
    expect(session.user.phone_confirmed_at).toMatch(/Z$/);
    expect(session.user.identities).toMatchObject([{ provider: 'phone' }]);
    expect(typeof session.access_token).toBe('string');
    const me = await call(t, 'GET', 'user', undefined, asUser(t, session.access_token));
    expect(me.json()).toMatchObject({ id: session.user.id, phone: p });
    expect(code(await verify(p, c))).toEqual([400, 'invalid_code']);
  });

  it('a known number gets a code for the same user', async () => {
    const p = phone();
    await send(p);
    const first = (await verify(p, await lastCode(t, p))).json();
    t.clock.advance(61_000);
    await send(p);
    const second = (await verify(p, await lastCode(t, p))).json();
    expect(second.user.id).toBe(first.user.id);
  });

  it('five wrong codes void the code: the right one no longer works', async () => {
    const p = phone();
    await send(p);
    const c = await lastCode(t, p);
    for (let i = 0; i < 4; i++) expect(code(await verify(p, wrong(c)))).toEqual([400, 'invalid_code']);
    expect((await verify(p, c)).statusCode).toBe(200); // four wrong tries leave it usable

    t.clock.advance(61_000);
    await send(p);
    const d = await lastCode(t, p);
    for (let i = 0; i < 5; i++) expect(code(await verify(p, wrong(d)))).toEqual([400, 'invalid_code']);
    expect(code(await verify(p, d))).toEqual([400, 'invalid_code']);
  });

  it('a code lasts 10 minutes, then answers 400 code_expired', async () => {
    const p = phone();
    await send(p);
    const c = await lastCode(t, p);
    t.clock.advance(10 * 60_000);
    expect(code(await verify(p, c))).toEqual([400, 'code_expired']);
    expect(code(await verify(p, c))).toEqual([400, 'invalid_code']); // gone after that

    const q = phone();
    await send(q);
    const d = await lastCode(t, q);
    t.clock.advance(10 * 60_000 - 1000);
    expect((await verify(q, d)).statusCode).toBe(200);
  });

  it('a new code voids the old one', async () => {
    const p = phone();
    await send(p);
    const old = await lastCode(t, p);
    t.clock.advance(61_000);
    await send(p);
    const codes = await codesTo(t, p);
    expect(codes).toHaveLength(2);
    const fresh = codes[1];
    if (fresh !== old) expect(code(await verify(p, old))).toEqual([400, 'invalid_code']);
    expect((await verify(p, fresh)).statusCode).toBe(200);
  });

  it('one code used by several requests at the same instant signs in once', async () => {
    const p = phone();
    await send(p);
    const c = await lastCode(t, p);
    const results = await Promise.all(Array.from({ length: 4 }, () => verify(p, c)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400]);
  });

  it('concurrent wrong guesses are all counted: at most five tries per code', async () => {
    const p = phone();
    await send(p);
    const c = await lastCode(t, p);
    const guesses = Array.from({ length: 12 }, (_, i) => String(100_000 + i)).filter((g) => g !== c);
    await Promise.all(guesses.map((g) => verify(p, g)));
    expect(code(await verify(p, c))).toEqual([400, 'invalid_code']);
  });

  it('the code is stored only as a hash, and not left in the outbox once sent', async () => {
    const p = phone();
    await send(p);
    const c = await lastCode(t, p);
    const { rows } = await t.db.query<{ code_hash: string }>('select code_hash from auth.phone_codes where phone = $1', [p]);
    expect(rows[0].code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].code_hash).not.toContain(c);
    const outbox = await t.db.query<{ n: number }>(
      `select count(*)::int as n from plinth.outbox where recipient = $1 and payload::text like '%' || $2 || '%'`,
      [p, c],
    );
    expect(outbox.rows[0].n).toBe(0);
    const runner = await t.sql('select * from auth.phone_codes');
    expect(code(runner)).toEqual([400, 'sql_error']);
  });
});

describe('limits', () => {
  it('one code a minute per number, 429 with Retry-After', async () => {
    const p = phone();
    expect((await send(p)).statusCode).toBe(200);
    const again = await send(p);
    expect(code(again)).toEqual([429, 'rate_limited']);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    expect(await codesTo(t, p)).toHaveLength(1);
  });

  it('five codes an hour per number', async () => {
    const p = phone();
    for (let i = 0; i < 5; i++) {
      expect((await send(p)).statusCode).toBe(200);
      t.clock.advance(61_000);
    }
    expect(code(await send(p))).toEqual([429, 'rate_limited']);
    t.clock.advance(3600_000);
    expect((await send(p)).statusCode).toBe(200);
  });

  it('one IP asking codes for many numbers is stopped (SMS pumping)', async () => {
    const s = await createAuthServer({ AUTH_RATE_SMS_IP: '3/3600' }, { sms: true });
    try {
      await s.settings.updateProject({ plan: 'pro' });
      await s.settings.updateAuth({ phone_enabled: true });
      const sendFrom = (p: string, ip: string) =>
        s.app.inject({ method: 'POST', url: '/v1/auth/phone/send-otp', remoteAddress: ip, headers: s.as.anon, payload: { phone: p } });
      for (let i = 0; i < 3; i++) expect((await sendFrom(phone(), '203.0.113.9')).statusCode).toBe(200);
      expect(code(await sendFrom(phone(), '203.0.113.9'))).toEqual([429, 'rate_limited']);
      expect((await sendFrom(phone(), '203.0.113.10')).statusCode).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

describe('input', () => {
  it.each([
    '0701234567',
    '+46 70 123 45 67',
    '46701234567',
    '+1',
    '+0701234567',
    '+4670123456789012',
    '+999123456789',
    '+46701234567\n',
    'abc',
    '',
  ])('%j → 400 invalid_phone', async (p) => {
    expect(code(await send(p))).toEqual([400, 'invalid_phone']);
    expect(code(await verify(p, '123456'))).toEqual([400, 'invalid_phone']);
  });

  it.each([
    [{}, 'invalid_request'],
    [{ phone: 46701234567 }, 'invalid_request'],
  ])('send-otp %j → 400 %s', async (body, errorCode) => {
    expect(code(await call(t, 'POST', 'phone/send-otp', body))).toEqual([400, errorCode]);
  });

  it.each(['12345', '1234567', 'abcdef', ''])('verify with code %j → 400 invalid_code', async (c) => {
    const p = phone();
    await send(p);
    expect(code(await verify(p, c))).toEqual([400, 'invalid_code']);
  });

  it('random phone numbers and codes never answer 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 20 }), fc.stringMatching(/^\+[0-9]{1,16}$/)),
        fc.string({ maxLength: 8 }),
        async (p, c) => {
          const sent = await t.app.inject({
            method: 'POST',
            url: '/v1/auth/phone/send-otp',
            remoteAddress: `198.51.100.${++n % 250}`,
            headers: t.as.anon,
            payload: { phone: p },
          });
          expect([200, 400, 429]).toContain(sent.statusCode);
          const checked = await verify(p, c);
          expect([400, 429]).toContain(checked.statusCode);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('account linking', () => {
  it('a phone-only user adds an email: a link goes to it, and using it sets and confirms the email', async () => {
    const p = phone();
    await send(p);
    const session = (await verify(p, await lastCode(t, p))).json();
    const addr = email('linked');
    const patched = await call(t, 'PATCH', 'user', { email: addr }, asUser(t, session.access_token));
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().email).toBeNull(); // not before the address is proven
    const done = await call(t, 'POST', 'verify-email', { token: await lastToken(t, addr, 'email_change') });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().user).toMatchObject({ id: session.user.id, email: addr, phone: p });
    expect(done.json().user.email_confirmed_at).toMatch(/Z$/);
    expect(
      done
        .json()
        .user.identities.map((i: { provider: string }) => i.provider)
        .sort(),
    ).toEqual(['email', 'phone']);
  });

  it('an email that belongs to another user: accepted like any (no enumeration), and its link answers 409 email_exists', async () => {
    const taken = email('taken');
    await signUp(t, taken);
    const p = phone();
    await send(p);
    const session = (await verify(p, await lastCode(t, p))).json();
    expect((await call(t, 'PATCH', 'user', { email: taken }, asUser(t, session.access_token))).statusCode).toBe(200);
    const link = await call(t, 'POST', 'verify-email', { token: await lastToken(t, taken, 'email_change') });
    expect(code(link)).toEqual([409, 'email_exists']);
  });

  it('phone works beside email and password for the same project', async () => {
    const addr = email('both');
    await signUp(t, addr);
    expect((await call(t, 'POST', 'signin', { email: addr, password: 'correct horse battery' })).statusCode).toBe(200);
    const p = phone();
    await send(p);
    expect((await verify(p, await lastCode(t, p))).statusCode).toBe(200);
  });
});

describe('plan and configuration', () => {
  it('phone off: 403 provider_disabled', async () => {
    await setAuth(t, { phone_enabled: false });
    try {
      expect(code(await send(phone()))).toEqual([403, 'provider_disabled']);
    } finally {
      await setAuth(t, { phone_enabled: true });
    }
  });

  it('free plan: 402 paid_plan_required on send-otp and on switching phone on', async () => {
    const free = await createAuthServer({}, { sms: true });
    try {
      const res = await free.app.inject({
        method: 'POST',
        url: '/v1/auth/phone/send-otp',
        headers: free.as.anon,
        payload: { phone: phone() },
      });
      expect(code(res)).toEqual([402, 'paid_plan_required']);
      const patch = await free.app.inject({
        method: 'PATCH',
        url: '/api/v1/settings/auth',
        headers: free.as.service,
        payload: { phone_enabled: true },
      });
      expect(code(patch)).toEqual([402, 'paid_plan_required']);
      // Downgrading a project that had phone on switches it off: send-otp is 402 again.
      await free.settings.updateProject({ plan: 'pro' });
      await free.settings.updateAuth({ phone_enabled: true });
      expect(
        (await free.app.inject({ method: 'POST', url: '/v1/auth/phone/send-otp', headers: free.as.anon, payload: { phone: phone() } }))
          .statusCode,
      ).toBe(200);
      await free.settings.updateProject({ plan: 'free' });
      const after = await free.app.inject({
        method: 'POST',
        url: '/v1/auth/phone/send-otp',
        headers: free.as.anon,
        payload: { phone: phone() },
      });
      expect(code(after)).toEqual([402, 'paid_plan_required']);
    } finally {
      await free.stop();
    }
  });

  it('no SMS provider: 503 sms_not_configured', async () => {
    const bare = await createTestServer();
    try {
      await bare.settings.updateProject({ plan: 'team' });
      await bare.settings.updateAuth({ phone_enabled: true });
      const res = await bare.app.inject({
        method: 'POST',
        url: '/v1/auth/phone/send-otp',
        headers: bare.as.anon,
        payload: { phone: phone() },
      });
      expect(code(res)).toEqual([503, 'sms_not_configured']);
    } finally {
      await bare.stop();
    }
  });

  it('SMS_PROVIDER=dev puts the code in the dev inbox', async () => {
    const dev = await createTestServer({ SMS_PROVIDER: 'dev', AUTH_RATE_REQUESTS_IP: '100000/60' });
    try {
      await dev.settings.updateProject({ plan: 'pro' });
      await dev.settings.updateAuth({ phone_enabled: true });
      const p = phone();
      expect(
        (await dev.app.inject({ method: 'POST', url: '/v1/auth/phone/send-otp', headers: dev.as.anon, payload: { phone: p } })).statusCode,
      ).toBe(200);
      const c = await lastCode(dev, p);
      const inbox = await dev.app.inject({ url: `/api/v1/dev/inbox?channel=sms&to=${encodeURIComponent(p)}`, headers: dev.as.service });
      expect(inbox.json()[0]).toMatchObject({
        channel: 'sms',
        kind: 'sms_otp',
        to: p,
        text: `${c} is your Plinth project code. It expires in 10 minutes.`,
      });
      const ok = await dev.app.inject({
        method: 'POST',
        url: '/v1/auth/phone/verify',
        headers: dev.as.anon,
        payload: { phone: p, code: c },
      });
      expect(ok.statusCode).toBe(200);
    } finally {
      await dev.stop();
    }
  });

  it('an SMS provider failure is retried by the outbox: the code arrives once the provider is back', async () => {
    const p = phone();
    t.sms!.failWith = 503;
    try {
      expect((await send(p)).statusCode).toBe(200);
      expect(await codesTo(t, p)).toEqual([]);
    } finally {
      t.sms!.failWith = null;
    }
    t.clock.advance(5_000);
    const c = await lastCode(t, p);
    expect((await verify(p, c)).statusCode).toBe(200);
    const log = await t.app.inject({ url: `/api/v1/messages?channel=sms&to=${encodeURIComponent(p)}`, headers: t.as.service });
    expect(log.json()[0]).toMatchObject({ kind: 'sms_otp', status: 'sent', attempts: 2, transport: 'sms' });
  });
});
