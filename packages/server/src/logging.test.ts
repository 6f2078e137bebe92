import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailsTo } from '../test/auth.js';
import { createTestServer, type TestServer } from '../test/harness.js';

// Every log line at the most verbose level, captured while requests carry secrets.
describe('logs never carry secrets', () => {
  let plinth: TestServer;
  const lines: string[] = [];
  beforeAll(async () => {
    plinth = await createTestServer({ LOG_LEVEL: 'trace', AUTH_RATE_REQUESTS_IP: '100000/60' }, { logs: lines, smtp: true });
  });
  afterAll(() => plinth?.stop());

  it('keys, user tokens and passwords in requests do not appear in any log line', async () => {
    const token = (await plinth.tokens.sign({ sub: crypto.randomUUID() }, 3600)).token;
    const secrets = [plinth.keys.secretKey, plinth.keys.publicKey, token, 'hunter2-correct-horse'];
    const send = (headers: Record<string, string>, payload: unknown, url = '/api/v1/sql') =>
      plinth.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
    await send({ authorization: `Bearer ${plinth.keys.secretKey}` }, { query: "select 'ok'" });
    await send({ authorization: `Bearer ${plinth.keys.secretKey}` }, { query: 'select * from nowhere' });
    await send({ apikey: plinth.keys.publicKey, authorization: `Bearer ${token}` }, { query: 'select 1' });
    await send({ apikey: plinth.keys.publicKey }, { email: 'a@example.com', password: 'hunter2-correct-horse' }, '/v1/auth/signin');
    await send({ apikey: plinth.keys.publicKey }, { email: 'a@example.com', password: 'hunter2-correct-horse' }, '/v1/auth/signup');
    await plinth.app.inject({ url: `/api/v1/db/nowhere?apikey=${plinth.keys.publicKey}`, headers: { authorization: `Bearer ${token}` } });
    expect(lines.length).toBeGreaterThan(0);
    const all = lines.join('\n');
    for (const s of secrets) expect(all).not.toContain(s);
  });

  it('refresh tokens, emailed links and their tokens do not appear in any log line (SMTP configured)', async () => {
    await plinth.settings.updateAuth({
      allowed_redirect_urls: ['https://app.example.com'],
      magic_link_url: 'https://app.example.com/magic',
      password_reset_url: 'https://app.example.com/reset',
      magic_link_enabled: true,
    });
    const headers = { apikey: plinth.keys.publicKey };
    const addr = 'logs@example.com';
    const up = await plinth.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers,
      payload: { email: addr, password: 'hunter2-correct-horse' },
    });
    const refresh = up.json().session.refresh_token as string;
    const rotated = (
      await plinth.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers, payload: { refresh_token: refresh } })
    ).json();
    await plinth.app.inject({ method: 'POST', url: '/v1/auth/request-magic-link', headers, payload: { email: addr } });
    plinth.clock.advance(61_000);
    await plinth.app.inject({ method: 'POST', url: '/v1/auth/forgot-password', headers, payload: { email: addr } });
    const links = (await mailsTo(plinth, addr)).map((m) => m.link);
    expect(links).toHaveLength(2);
    const tokens = links.map((l) => new URL(l).searchParams.get('token') as string);
    await plinth.app.inject({ method: 'POST', url: '/v1/auth/signin-magic-link', headers, payload: { token: tokens[0] } });
    const all = lines.join('\n');
    for (const s of [refresh, rotated.refresh_token, rotated.access_token, ...links, ...tokens]) expect(all).not.toContain(s);
  });
});
