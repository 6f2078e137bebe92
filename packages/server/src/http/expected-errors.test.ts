import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { TEST_DB_KIND } from '../../test/db.js';

// A 503 that describes the server's state (no SMS provider, the database down) is expected: it
// is logged as one warning naming the cause, not as an error with a stack on every request.
describe('expected 5xx answers in the log', () => {
  let t: TestServer;
  const lines: string[] = [];
  const logged = () =>
    lines.map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string }; reason?: string; code?: string });
  beforeAll(async () => {
    t = await createTestServer({ LOG_LEVEL: 'info', AUTH_RATE_REQUESTS_IP: '100000/60', AUTH_RATE_SMS_IP: '100000/3600' }, { logs: lines });
    await t.settings.updateProject({ plan: 'team' });
    await t.settings.updateAuth({ phone_enabled: true });
    expect((await t.sql('create table things (id int primary key)')).statusCode).toBe(200);
  });
  afterAll(() => t?.stop());

  it('sms_not_configured: one warning for three requests, no error, no stack', async () => {
    lines.length = 0;
    for (const n of ['+46701740605', '+46701740606', '+46701740607']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/auth/phone/send-otp', headers: t.as.anon, payload: { phone: n } });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().code).toBe('sms_not_configured');
    }
    const about = logged().filter((l) => JSON.stringify(l).includes('sms_not_configured'));
    expect(about).toHaveLength(1);
    expect(about[0].level).toBe(40); // warn
    expect(about[0].msg).toMatch(/503 sms_not_configured: No SMS provider is configured/);
    expect(logged().filter((l) => l.level >= 50)).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/stack|\bat .+:\d+:\d+/);
  });

  it('database_unavailable: the warning and /health name the database and the cause; the client gets neither', async () => {
    lines.length = 0;
    await t.db.close(); // the database goes away under the running server
    const where = TEST_DB_KIND === 'pglite' ? t.config.dataDir : new URL(t.config.databaseUrl as string).host;
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ url: '/api/v1/db/things', headers: t.as.service });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toEqual({ code: 'database_unavailable', message: 'The database is unavailable; try again shortly.' });
      const health = await t.app.inject({ url: '/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json().message).toContain(where);
    }
    // One warning for the whole outage (not one per request, per /health, or per part of the
    // instance that meets it: the fallback's schema poll too), at most once a minute.
    const warnings = logged().filter((l) => l.level >= 40 && JSON.stringify(l).includes('unavailable'));
    expect(warnings, lines.join('')).toHaveLength(1);
    expect(warnings[0].code).toBe('database_unavailable');
    expect(warnings[0].msg).toContain(where);
    expect(warnings[0].msg).toMatch(/stopped|unavailable: connection ended \(CONNECTION_ENDED\)/);
    expect(warnings[0].msg).toMatch(/repeats at most once a minute while it lasts$/);
    expect(logged().filter((l) => l.level >= 50)).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/stack|\bat .+:\d+:\d+/);
  });
});
