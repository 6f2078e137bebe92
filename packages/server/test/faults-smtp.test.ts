import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './auth.js';
import { createTestServer, type TestServer } from './harness.js';

// SMTP down during sign-ups (docs/operations.md): the sign-ups still answer, their mails wait in the
// outbox, and once the mail server is back every one is delivered, none twice.
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ AUTH_RATE_REQUESTS_IP: '100000/60' }, { smtp: true });
  await t.settings.updateAuth({
    require_email_confirmation: true,
    allowed_redirect_urls: ['http://app.test'],
    email_verification_url: 'http://app.test/verify',
  });
});
afterAll(async () => {
  await t?.stop();
});

const queued = async () =>
  Number((await t.db.query<{ n: number }>("select count(*)::int as n from plinth.outbox where status = 'queued'")).rows[0].n);

describe('SMTP down during sign-ups', () => {
  it('sign-ups answer, mails wait, and all are delivered exactly once when SMTP is back', async () => {
    const sink = t.mail;
    if (!sink) throw new Error('the test server has an SMTP sink');
    await sink.stop();
    const to = Array.from({ length: 8 }, (_, i) => `down-${i}-${process.pid}@example.com`);
    for (const email of to) {
      const res = await call(t, 'POST', 'signup', { email, password: 'correct horse battery' });
      expect(res.statusCode, res.body).toBe(200);
    }
    await t.auth.settled();
    // Tried once each, refused (connection refused), kept for a retry.
    await t.messaging.outbox.drain();
    expect(await queued()).toBe(to.length);
    const tried = await t.db.query<{ attempts: number }>("select attempts from plinth.outbox where status = 'queued'");
    expect(tried.rows).toHaveLength(to.length);
    expect(tried.rows.every((r) => Number(r.attempts) >= 1)).toBe(true);
    expect(sink.received).toHaveLength(0);

    await sink.start();
    t.clock.advance(6_000); // the first retry is due 5 s after the failure
    await t.messaging.outbox.drain();
    expect(await queued()).toBe(0);
    for (const email of to) {
      const got = sink.received.filter((m) => m.to.includes(email));
      expect(got, email).toHaveLength(1);
      expect(got[0].kind).toBe('verification');
    }
    // Nothing left to send twice.
    t.clock.advance(600_000);
    await t.messaging.outbox.drain();
    expect(sink.received).toHaveLength(to.length);
  });
});
