import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, TEST_DB_KIND, type TestServer } from '../../test/harness.js';

// GET /metrics (docs/operations.md): Prometheus text for the secret key or a console admin, nobody else.
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ AUTH_RATE_REQUESTS_IP: '3/60' });
  await t.sql('create table metered (id int primary key); create policy open on metered for select using (true)');
});
afterAll(async () => {
  await t?.stop();
});

const scrape = async (headers: Record<string, string> = t.as.service) => {
  const res = await t.app.inject({ url: '/metrics', headers });
  expect(res.statusCode, res.body).toBe(200);
  return res;
};
/** The value of the one sample whose line starts with `series`, or 0 when absent. */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('GET /metrics', () => {
  it('refuses anyone without the secret key or an admin session', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{}, 401, 'unauthorized'],
      [{ authorization: 'Bearer nope' }, 401, 'unauthorized'],
      [t.as.anon, 403, 'forbidden'],
      [t.as.user(await t.mintToken('44444444-4444-4444-8444-444444444444')), 403, 'forbidden'],
    ];
    for (const [headers, status, code] of cases) {
      const res = await t.app.inject({ url: '/metrics', headers });
      expect([res.statusCode, res.json().code]).toEqual([status, code]);
    }
  });

  it('counts requests by route pattern and status, with a latency histogram', async () => {
    const before = (await scrape()).body;
    const okSeries = 'plinth_http_requests_total{method="GET",route="/api/v1/db/*",status="200"}';
    const missing = 'plinth_http_requests_total{method="GET",route="/api/v1/db/*",status="404"}';
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url: '/api/v1/db/metered', headers: t.as.anon })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/v1/db/no_such_table', headers: t.as.anon })).statusCode).toBe(404);
    const res = await scrape();
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(value(res.body, okSeries) - value(before, okSeries)).toBe(3);
    expect(value(res.body, missing) - value(before, missing)).toBe(1);
    // The table's name is never a label: one series per route pattern.
    expect(res.body).not.toContain('no_such_table');
    const count = 'plinth_http_request_duration_seconds_count{method="GET",route="/api/v1/db/*"}';
    expect(value(res.body, count) - value(before, count)).toBe(4);
    expect(res.body).toMatch(/plinth_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/v1\/db\/\*"\} \d+/);
  });

  it('counts the requests of the last hour (the console overview shows it)', async () => {
    const before = value((await scrape()).body, 'plinth_http_requests_last_hour');
    for (let i = 0; i < 3; i++) await t.app.inject({ url: '/api/v1/db/metered', headers: t.as.anon });
    // The three, and the first scrape itself (counted once answered).
    expect(value((await scrape()).body, 'plinth_http_requests_last_hour')).toBe(before + 4);
  });

  it('counts rate-limit refusals', async () => {
    const series = 'plinth_rate_limited_total{route="/v1/auth/resend-verification"}';
    const before = value((await scrape()).body, series);
    let refused = 0;
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/auth/resend-verification',
        headers: t.as.anon,
        payload: { email: 'm@example.com' },
      });
      if (res.statusCode === 429) refused++;
    }
    expect(refused).toBeGreaterThan(0);
    expect(value((await scrape()).body, series) - before).toBe(refused);
  });

  it('reports the outbox queue, and the database pool on PostgreSQL', async () => {
    const before = value((await scrape()).body, 'plinth_outbox_queued');
    await t.db.query(
      `insert into plinth.outbox (channel, kind, recipient, payload, next_attempt_at) values ('email', 'test', 'q@example.com', '{}', now() + interval '1 hour')`,
    );
    const failedBefore = value((await scrape()).body, 'plinth_outbox_failed');
    await t.db.query(
      `insert into plinth.outbox (channel, kind, recipient, payload, status) values ('email', 'test', 'f@example.com', '{}', 'failed')`,
    );
    const text = (await scrape()).body;
    expect(value(text, 'plinth_outbox_queued')).toBe(before + 1);
    expect(value(text, 'plinth_outbox_failed')).toBe(failedBefore + 1);
    if (TEST_DB_KIND === 'postgres') {
      expect(value(text, 'plinth_db_pool_size')).toBeGreaterThan(0);
      expect(text).toMatch(/^plinth_db_queries_in_flight \d+$/m);
    }
  });

  it('a console admin session may read it too', async () => {
    await t.admin.admins.upsert('metrics@example.com', 'a long admin passphrase');
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/login',
      payload: { email: 'metrics@example.com', password: 'a long admin passphrase' },
    });
    const cookie = String(login.headers['set-cookie']).match(/plinth_admin=([^;]*)/)?.[1];
    expect(cookie).toBeTruthy();
    expect((await scrape({ cookie: `plinth_admin=${cookie}`, 'x-plinth-admin': '1' })).body).toContain('plinth_http_requests_total');
  });
});
