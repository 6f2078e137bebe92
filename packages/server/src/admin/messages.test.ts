import { TEMPLATE_KINDS } from '@plinth/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email, lastToken, mailsTo, setAuth, signUp } from '../../test/auth.js';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { backoffMs } from '../messaging/outbox.js';

const VERIFY_PAGE = 'https://app.example.com/verify';
const confirmOn = {
  allowed_redirect_urls: ['https://app.example.com'],
  email_verification_url: VERIFY_PAGE,
  require_email_confirmation: true,
};

describe('email through SMTP', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createAuthServer();
    await setAuth(t, confirmOn);
  });
  afterAll(() => t?.stop());

  const messages = (query = '') => t.app.inject({ url: `/api/v1/messages${query}`, headers: t.as.service });

  it('SMTP down during a sign-up: the sign-up succeeds and the mail arrives once SMTP is back, exactly once', async () => {
    const sink = t.mail!;
    const addr = email('down');
    await sink.stop();
    const res = await call(t, 'POST', 'signup', { email: addr, password: 'correct horse battery' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await mailsTo(t, addr)).toEqual([]);
    const queued = (await messages(`?to=${encodeURIComponent(addr)}`)).json();
    expect(queued).toMatchObject([{ kind: 'verification', status: 'queued', attempts: 1 }]);
    expect(queued[0].last_response).toMatch(/ECONNREFUSED/);

    await sink.start();
    t.clock.advance(backoffMs(1));
    const mails = await mailsTo(t, addr);
    expect(mails).toHaveLength(1);
    expect(await mailsTo(t, addr)).toHaveLength(1);
    // The link in the real message works.
    const verified = await call(t, 'POST', 'verify-email', { token: await lastToken(t, addr) });
    expect(verified.statusCode, verified.body).toBe(200);
    const sent = (await messages(`?to=${encodeURIComponent(addr)}`)).json();
    expect(sent).toMatchObject([{ status: 'sent', attempts: 2, transport: 'smtp' }]);
    expect(sent[0].last_response).toMatch(/^250/);
  });

  it('the delivery log lists kind, recipient, status, attempts and the answer, newest first, and never a link', async () => {
    const addr = email('log');
    await signUp(t, addr);
    const token = await lastToken(t, addr);
    const res = await messages('?limit=5');
    expect(res.statusCode).toBe(200);
    const log = res.json();
    expect(log.length).toBeLessThanOrEqual(5);
    expect(log[0]).toMatchObject({ channel: 'email', kind: 'verification', to: addr, status: 'sent', attempts: 1, transport: 'smtp' });
    expect(Object.keys(log[0]).sort()).toEqual(
      [
        'attempts',
        'channel',
        'created_at',
        'id',
        'kind',
        'last_response',
        'next_attempt_at',
        'sent_at',
        'status',
        'to',
        'transport',
        'updated_at',
      ].sort(),
    );
    expect(Number(log[0].id)).toBeGreaterThan(Number(log.at(-1).id) - 1);
    expect(res.body).not.toContain(token);
    const { rows } = await t.db.query<{ n: number }>(
      `select count(*)::int as n from plinth.outbox where payload::text like '%' || $1 || '%'`,
      [token],
    );
    expect(rows[0].n).toBe(0);
    // The SQL runner cannot read the outbox or the dev inbox.
    for (const table of ['plinth.outbox', 'plinth.dev_inbox']) {
      const res = await t.sql(`select * from ${table}`);
      expect(res.statusCode, table).toBe(400);
      expect(res.json().details.sqlstate, table).toBe('42501');
    }
  });

  it.each([
    ['?status=bogus', 'invalid_parameter'],
    ['?channel=fax', 'invalid_parameter'],
    ['?limit=-1', 'invalid_parameter'],
    ['?offset=1.5', 'invalid_parameter'],
    ['?nope=1', 'invalid_request'],
  ])('GET /api/v1/messages%s → 400 %s', async (query, code) => {
    const res = await messages(query);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(code);
  });

  it('filters by status and channel', async () => {
    type Row = { id: string; status: string; channel: string };
    const all: Row[] = (await messages('?limit=100')).json();
    expect(all.length).toBeLessThan(100);
    // The earlier tests sent email: one filter matches rows, the others none, each exactly the matching rows.
    expect(all.filter((m) => m.status === 'sent' && m.channel === 'email').length).toBeGreaterThan(0);
    for (const [status, channel] of [
      ['sent', 'email'],
      ['failed', 'email'],
      ['sent', 'sms'],
    ]) {
      const got: Row[] = (await messages(`?status=${status}&channel=${channel}&limit=100`)).json();
      expect(
        got.map((m) => m.id),
        `${status} ${channel}`,
      ).toEqual(all.filter((m) => m.status === status && m.channel === channel).map((m) => m.id));
    }
  });

  it('POST /api/v1/email/test answers with the SMTP result and the message arrives', async () => {
    const to = email('test');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/email/test', headers: t.as.service, payload: { to } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ sent: true, to, transport: 'smtp' });
    expect(res.json().response).toMatch(/^250/);
    const got = t.mail!.received.filter((m) => m.to.includes(to));
    expect(got).toHaveLength(1);
    expect(got[0].kind).toBe('test');
    expect((await messages(`?to=${encodeURIComponent(to)}`)).json()).toMatchObject([{ kind: 'test', status: 'sent' }]);
  });

  it('POST /api/v1/email/test passes on a refusal as 502 email_send_failed with the server answer', async () => {
    t.mail!.refuseWith = { code: 550, message: 'no such user here' };
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/email/test',
        headers: t.as.service,
        payload: { to: email('refused') },
      });
      expect(res.statusCode).toBe(502);
      expect(res.json().code).toBe('email_send_failed');
      expect(res.json().details.response).toContain('550');
    } finally {
      t.mail!.refuseWith = null;
    }
  });

  it.each([
    [{ to: 'not-an-address' }, 400, 'invalid_email'],
    [{ to: 'a@b.example\r\nBcc: evil@example.com' }, 400, 'invalid_email'],
    [{ to: 'Ada <ada@example.com>' }, 400, 'invalid_email'],
    [{}, 400, 'invalid_request'],
    [{ to: 'a@example.com', cc: 'b@example.com' }, 400, 'invalid_request'],
  ])('POST /api/v1/email/test %j → %i %s', async (payload, status, code) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/email/test', headers: t.as.service, payload });
    expect(res.statusCode).toBe(status);
    expect(res.json().code).toBe(code);
  });

  it('the management endpoints need the secret key', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/messages'],
      ['GET', '/api/v1/dev/inbox'],
      ['POST', '/api/v1/email/test'],
    ] as const) {
      const anon = await t.app.inject({
        method,
        url,
        headers: t.as.anon,
        payload: method === 'POST' ? { to: 'a@example.com' } : undefined,
      });
      expect(anon.statusCode, url).toBe(403);
      const none = await t.app.inject({ method, url, payload: method === 'POST' ? { to: 'a@example.com' } : undefined });
      expect(none.statusCode, url).toBe(401);
    }
  });

  it('templates: a project override replaces the default subject and text; values are escaped in HTML', async () => {
    await setAuth(t, {
      email_templates: { verification: { subject: 'Welcome to {{project}}', text: 'Hi {{email}}, confirm here: {{link}}' } },
    });
    await t.settings.updateProject({ name: 'Acme <b>Apps</b>' });
    try {
      const addr = email('tpl');
      await signUp(t, addr);
      await mailsTo(t, addr);
      const got = t.mail!.received.filter((m) => m.to.includes(addr));
      expect(got).toHaveLength(1);
      expect(got[0].subject).toBe('Welcome to Acme <b>Apps</b>');
      expect(got[0].text).toMatch(new RegExp(`^Hi ${addr.replace(/[.+]/g, '\\$&')}, confirm here: ${VERIFY_PAGE}\\?token=`));
      // The default HTML part is kept, with the project name escaped.
      expect(got[0].html).toContain('Acme &lt;b&gt;Apps&lt;/b&gt;');
      expect(got[0].html).not.toContain('<b>Apps</b>');
    } finally {
      await setAuth(t, { email_templates: { verification: null } });
      await t.settings.updateProject({ name: 'Plinth project' });
    }
  });
});

describe('email without SMTP: the dev inbox', () => {
  let plinth: TestServer;
  const lines: string[] = [];
  beforeAll(async () => {
    plinth = await createTestServer({ LOG_LEVEL: 'info', AUTH_RATE_REQUESTS_IP: '100000/60' }, { logs: lines });
    await plinth.settings.updateAuth(confirmOn);
  });
  afterAll(() => plinth?.stop());

  it('stores the message, logs its link, and serves it at GET /api/v1/dev/inbox', async () => {
    const addr = email('dev');
    const res = await plinth.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: { apikey: plinth.keys.publicKey },
      payload: { email: addr, password: 'correct horse battery' },
    });
    expect(res.statusCode, res.body).toBe(200);
    await plinth.messaging.outbox.drain();
    const inbox = await plinth.app.inject({
      url: `/api/v1/dev/inbox?to=${encodeURIComponent(addr)}`,
      headers: { authorization: `Bearer ${plinth.keys.secretKey}` },
    });
    expect(inbox.statusCode).toBe(200);
    const [msg] = inbox.json();
    expect(msg).toMatchObject({ channel: 'email', kind: 'verification', to: addr, subject: 'Confirm your email for Plinth project' });
    const link = /https:\/\/\S+/.exec(msg.text)?.[0] ?? '';
    expect(link.startsWith(`${VERIFY_PAGE}?token=`)).toBe(true);
    expect(msg.html).toContain('Confirm email');
    expect(lines.some((l) => l.includes(link) && l.includes('dev inbox'))).toBe(true);
    // The link from the dev inbox works.
    const ok = await plinth.app.inject({
      method: 'POST',
      url: '/v1/auth/verify-email',
      headers: { apikey: plinth.keys.publicKey },
      payload: { token: new URL(link).searchParams.get('token') },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const log = await plinth.app.inject({ url: '/api/v1/messages?limit=1', headers: { authorization: `Bearer ${plinth.keys.secretKey}` } });
    expect(log.json()[0]).toMatchObject({ status: 'sent', transport: 'dev_inbox' });
  });

  it('the test email goes to the dev inbox too', async () => {
    const res = await plinth.app.inject({
      method: 'POST',
      url: '/api/v1/email/test',
      headers: { authorization: `Bearer ${plinth.keys.secretKey}` },
      payload: { to: 'owner@example.com' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ sent: true, transport: 'dev_inbox' });
    const inbox = await plinth.app.inject({
      url: '/api/v1/dev/inbox?to=owner%40example.com',
      headers: { authorization: `Bearer ${plinth.keys.secretKey}` },
    });
    expect(inbox.json()[0]).toMatchObject({ kind: 'test', subject: 'Test email from Plinth project' });
  });
});

describe('newest first past nine messages (issue 9: the ids were ordered as text, 9 after 10)', () => {
  it('inbox?limit=1 and messages?limit=1 give the latest of twelve', async () => {
    const plinth = await createTestServer();
    try {
      const sk = { authorization: `Bearer ${plinth.keys.secretKey}` };
      for (let i = 1; i <= 12; i++) {
        const res = await plinth.app.inject({
          method: 'POST',
          url: '/api/v1/email/test',
          headers: sk,
          payload: { to: `n${i}@example.com` },
        });
        expect(res.statusCode).toBe(200);
      }
      const inbox = (await plinth.app.inject({ url: '/api/v1/dev/inbox?limit=1', headers: sk })).json();
      expect(inbox[0].to).toBe('n12@example.com');
      const log = (await plinth.app.inject({ url: '/api/v1/messages?limit=1', headers: sk })).json();
      expect(log[0].to).toBe('n12@example.com');
      const all = (await plinth.app.inject({ url: '/api/v1/dev/inbox', headers: sk })).json();
      expect(all.map((m: { to: string }) => m.to)).toEqual(Array.from({ length: 12 }, (_, i) => `n${12 - i}@example.com`));
    } finally {
      await plinth.stop();
    }
  });

  it('the template preview renders with the sending renderer, overrides and escaping included', async () => {
    const plinth = await createTestServer();
    try {
      const res = await plinth.app.inject({
        method: 'POST',
        url: '/api/v1/email/preview',
        headers: { authorization: `Bearer ${plinth.keys.secretKey}` },
        payload: { kind: 'magic_link', template: { subject: 'Hi {{email}}\nBcc: x', html: '<a href="{{link}}">{{project}}</a>' } },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        subject: 'Hi ada@example.com Bcc: x',
        html: '<a href="https://app.example.com/page?token=preview-token">Plinth project</a>',
        text: expect.stringContaining('Sign in to Plinth project as ada@example.com'),
      });
    } finally {
      await plinth.stop();
    }
  });
});

describe('the built-in templates (GET /api/v1/email/templates/defaults)', () => {
  it('are the texts the renderer falls back to, with their variables, for every kind; management only', async () => {
    const plinth = await createTestServer();
    try {
      const res = await plinth.app.inject({ url: '/api/v1/email/templates/defaults', headers: plinth.as.service });
      expect(res.statusCode, res.body).toBe(200);
      const defaults = res.json();
      expect(Object.keys(defaults).sort()).toEqual([...TEMPLATE_KINDS].sort());
      expect(defaults.verification.subject).toBe('Confirm your email for {{project}}');
      expect(defaults.verification.text).toContain('{{link}}');
      // Previewing the default as an override renders what no override renders.
      const preview = (template?: object) =>
        plinth.app.inject({
          method: 'POST',
          url: '/api/v1/email/preview',
          headers: plinth.as.service,
          payload: { kind: 'reset', template },
        });
      expect((await preview(defaults.reset)).json()).toEqual((await preview()).json());
      expect((await plinth.app.inject({ url: '/api/v1/email/templates/defaults', headers: plinth.as.anon })).statusCode).toBe(403);
    } finally {
      await plinth.stop();
    }
  });
});

describe('management query strings never answer 500', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createTestServer();
  });
  afterAll(() => t?.stop());

  it('random query strings on the delivery log and the dev inbox are 200 or 400', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/api/v1/messages', '/api/v1/dev/inbox'),
        fc.dictionary(fc.constantFrom('limit', 'offset', 'to', 'status', 'channel', 'x'), fc.string()),
        async (path, params) => {
          const res = await t.app.inject({ url: `${path}?${new URLSearchParams(params)}`, headers: t.as.service });
          expect([200, 400]).toContain(res.statusCode);
          if (res.statusCode === 400) expect(res.json().code).toMatch(/^[a-z_]+$/);
        },
      ),
      { numRuns: 150 },
    );
  });
});
