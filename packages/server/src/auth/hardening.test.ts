import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, code, createAuthServer, email, mailsTo, setAuth, signUp } from '../../test/auth.js';
import type { TestServer } from '../../test/harness.js';

// The account-integrity review's smaller findings, each as the attack that found it.
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
  await setAuth(t, {
    allowed_redirect_urls: ['https://app.example.com/'],
    password_reset_url: 'https://app.example.com/reset',
    email_verification_url: 'https://app.example.com/verify',
    magic_link_enabled: true,
    magic_link_url: 'https://app.example.com/magic',
  });
});
afterAll(() => t?.stop());

describe('one settings request cannot take the server down', () => {
  it.each([
    ['toString', { providers: { toString: { call: 1 } } }],
    ['__proto__', JSON.parse('{"providers":{"__proto__":{"polluted":1}}}')],
    ['constructor', { providers: { constructor: { prototype: { polluted: 1 } } } }],
    ['a template __proto__', JSON.parse('{"email_templates":{"reset":{"__proto__":{"polluted":1}}}}')],
    ['a provider field of Object.prototype', { providers: { github: { hasOwnProperty: 1 } } }],
  ])('%s: refused with invalid_settings, nothing polluted, every route still answers', async (_name, body) => {
    const res = await t.app.inject({ method: 'PATCH', url: '/api/v1/settings/auth', headers: t.as.service, payload: body });
    expect(res.statusCode, res.body).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof Object.prototype.toString.call).toBe('function');
    expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    expect((await call(t, 'GET', 'settings')).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/v1/settings/auth', headers: t.as.service })).statusCode).toBe(200);
  });
});

describe('input that used to make a 500', () => {
  it('sign-up data nested thousands deep: 400', async () => {
    const deep = `${'{"d":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: { ...t.as.anon, 'content-type': 'application/json' },
      payload: `{"email":"${email()}","password":"correct horse battery","data":{"deep":${deep}}}`,
    });
    expect(code(res)).toEqual([400, 'invalid_request']);
  });

  it('lone surrogates in sign-up data (value or key) or an email: 400', async () => {
    const payloads = [
      '{"email":"EMAIL","password":"correct horse battery","data":{"x":"\\ud800"}}',
      '{"email":"EMAIL","password":"correct horse battery","data":{"\\udc00":1}}',
    ];
    for (const p of payloads) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/auth/signup',
        headers: { ...t.as.anon, 'content-type': 'application/json' },
        payload: p.replace('EMAIL', email()),
      });
      expect(code(res)).toEqual([400, 'invalid_value']);
    }
    for (const route of ['request-magic-link', 'signup', 'forgot-password']) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1/auth/${route}`,
        headers: { ...t.as.anon, 'content-type': 'application/json' },
        payload: '{"email":"a\\ud800b@example.com","password":"correct horse battery"}',
      });
      expect(code(res)).toEqual([400, 'invalid_email']);
    }
  });
});

describe('email addresses', () => {
  it.each([
    'root,victim@example.com',
    'bcc:x,y@example.com',
    '"a b"@example.com',
    'a@[127.0.0.1]',
    'a..b@example.com',
    '.a@example.com',
    'a@example..com',
    'a(b)@example.com',
    'a<b>@example.com',
  ])('refuses %s (a mail library would read another recipient into it)', async (addr) => {
    expect(code(await call(t, 'POST', 'signup', { email: addr, password: 'correct horse battery' }))).toEqual([400, 'invalid_email']);
    expect(code(await call(t, 'POST', 'request-magic-link', { email: addr }))).toEqual([400, 'invalid_email']);
  });

  it.each(["o'brien@example.com", 'ada+news@example.com', 'élodie@exemple.fr', 'a_b-c.d@sub.example.co.uk'])('accepts %s', async (addr) => {
    expect((await call(t, 'POST', 'signup', { email: addr, password: 'correct horse battery' })).statusCode).toBe(200);
  });

  it('a mail goes to exactly its one address (SMTP envelope)', async () => {
    const addr = `o'brien+${Date.now()}@example.com`;
    await call(t, 'POST', 'request-magic-link', { email: addr });
    expect(await mailsTo(t, addr)).toHaveLength(1);
    const mail = t.mail?.received.find((m) => m.to.includes(addr));
    expect(mail?.to).toEqual([addr]); // the SMTP envelope's recipients
  });
});

describe('email bombing', () => {
  it('+tags and Gmail dots share one per-recipient budget', async () => {
    const base = `bomb${Date.now()}`;
    await call(t, 'POST', 'forgot-password', { email: `${base}@gmail.com` });
    expect(code(await call(t, 'POST', 'forgot-password', { email: `${base}+1@gmail.com` }))).toEqual([429, 'rate_limited']);
    expect(code(await call(t, 'POST', 'forgot-password', { email: `${base.slice(0, 2)}.${base.slice(2)}@gmail.com` }))).toEqual([
      429,
      'rate_limited',
    ]);
  });

  it('magic links to addresses with no account stop after a per-IP budget (still 200: a 429 would tell)', async () => {
    const s = await createAuthServer({ AUTH_RATE_EMAIL_UNKNOWN_IP: '2/3600' });
    try {
      await setAuth(s, {
        allowed_redirect_urls: ['https://app.example.com/'],
        magic_link_enabled: true,
        magic_link_url: 'https://app.example.com/magic',
      });
      const strangers = [email('s1'), email('s2'), email('s3')];
      for (const addr of strangers) expect((await call(s, 'POST', 'request-magic-link', { email: addr })).statusCode).toBe(200);
      // Each answer comes before the lookup and the mail (no timing oracle), so the three run
      // concurrently: which two get a mail is theirs to race for; that only two do is the budget.
      const mailed = await Promise.all(strangers.map(async (addr) => (await mailsTo(s, addr)).length));
      expect(mailed.reduce((a, b) => a + b, 0)).toBe(2);
      expect(mailed.every((n) => n <= 1)).toBe(true);
      // Known addresses are not held back by it.
      const known = email('known');
      await signUp(s, known);
      await call(s, 'POST', 'request-magic-link', { email: known });
      expect((await mailsTo(s, known)).map((m) => m.kind)).toEqual(['magic_link']);
    } finally {
      await s.stop();
    }
  });
});

describe('targeted lockout', () => {
  it('ten wrong passwords from one IP do not lock the owner out from another', async () => {
    const addr = email('target');
    await signUp(t, addr);
    const from = (ip: string, password: string) =>
      t.app.inject({ method: 'POST', url: '/v1/auth/signin', remoteAddress: ip, headers: t.as.anon, payload: { email: addr, password } });
    for (let i = 0; i < 10; i++) expect(code(await from('203.0.113.66', 'wrong password'))).toEqual([400, 'invalid_credentials']);
    expect(code(await from('203.0.113.66', 'correct horse battery'))).toEqual([429, 'rate_limited']);
    expect((await from('198.51.100.20', 'correct horse battery')).statusCode).toBe(200);
  });
});

describe('timing', () => {
  /**
   * Whether the route answers without waiting for the database: every query is held until
   * released, so a handler that looked the address up before answering could not answer.
   */
  async function answersBeforeLookup(route: string, addr: string): Promise<boolean> {
    await t.auth.settled();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = t.db.query.bind(t.db);
    const realTx = t.db.transaction.bind(t.db);
    const query = vi.spyOn(t.db, 'query').mockImplementation(async (...args) => {
      await held;
      return real(...args);
    });
    const transaction = vi.spyOn(t.db, 'transaction').mockImplementation(async (fn) => {
      await held;
      return realTx(fn);
    });
    try {
      const answer = call(t, 'POST', route, { email: addr }).then((res) => res.statusCode);
      const outcome = await Promise.race([answer, new Promise((resolve) => setTimeout(() => resolve('waited'), 5000))]);
      return outcome === 200;
    } finally {
      release();
      query.mockRestore();
      transaction.mockRestore();
      await t.auth.settled();
    }
  }

  it.each(['forgot-password', 'resend-verification', 'request-magic-link'])(
    '%s answers known and unknown emails before looking them up',
    async (route) => {
      const known = email('known');
      const { user } = await signUp(t, known);
      await t.db.query('update auth.users set email_confirmed_at = null where id = $1', [user.id]);
      t.clock.advance(61_000);
      expect(await answersBeforeLookup(route, known)).toBe(true);
      expect(await answersBeforeLookup(route, email('nobody'))).toBe(true);
    },
  );
});
