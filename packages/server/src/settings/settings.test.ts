import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, createTestServer } from '../../test/harness.js';

describe('auth settings', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createTestServer();
  });
  afterAll(() => t.stop());

  const patch = (body: unknown) =>
    t.app.inject({ method: 'PATCH', url: '/api/v1/settings/auth', headers: t.as.service, payload: body as object });
  const get = async () => (await t.app.inject({ url: '/api/v1/settings/auth', headers: t.as.service })).json();

  it('has the defaults of docs/api.md §4', async () => {
    expect(await get()).toMatchObject({
      email_password_enabled: true,
      magic_link_enabled: false,
      phone_enabled: false,
      min_password_length: 8,
      require_email_confirmation: false,
      session_duration_seconds: 3600,
      allowed_redirect_urls: [],
      cors_origins: [],
      cors_allow_localhost: true,
      email_verification_url: null,
      providers: { google: { enabled: false }, apple: { enabled: false } },
    });
  });

  const base = { allowed_redirect_urls: ['https://app.example.com/auth', 'http://localhost:3000'] };
  it.each([
    ['min_password_length 8', { min_password_length: 8 }, true],
    ['min_password_length 128', { min_password_length: 128 }, true],
    ['min_password_length 7', { min_password_length: 7 }, false],
    ['min_password_length 129', { min_password_length: 129 }, false],
    ['min_password_length 8.5', { min_password_length: 8.5 }, false],
    ['session 3600', { session_duration_seconds: 3600 }, true],
    ['session 2592000', { session_duration_seconds: 2592000 }, true],
    ['session 3599', { session_duration_seconds: 3599 }, false],
    ['session 2592001', { session_duration_seconds: 2592001 }, false],
    ['verification URL under the allowlist', { email_verification_url: 'https://app.example.com/auth/verify' }, true],
    ['lookalike host', { email_verification_url: 'https://app.example.com.evil.com/auth' }, false],
    ['userinfo', { password_reset_url: 'https://evil@app.example.com/auth' }, false],
    ['javascript: URL', { magic_link_url: 'javascript:alert(1)' }, false],
    ['path prefix /authx', { magic_link_url: 'https://app.example.com/authx' }, false],
    ['other scheme', { magic_link_url: 'http://app.example.com/auth' }, false],
    ['other port', { magic_link_url: 'https://app.example.com:8443/auth' }, false],
    ['redirect entry with userinfo', { allowed_redirect_urls: ['https://u:p@app.example.com'] }, false],
    ['relative redirect entry', { allowed_redirect_urls: ['/auth'] }, false],
    ['cors exact origin', { cors_origins: ['https://app.example.com'] }, true],
    ['cors loopback port wildcard', { cors_origins: ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'] }, true],
    ['cors_allow_localhost off', { cors_allow_localhost: false }, true],
    ['cors_allow_localhost as a string', { cors_allow_localhost: 'no' }, false],
    ['cors wildcard on non-loopback host', { cors_origins: ['https://app.example.com:*'] }, false],
    ['cors subdomain wildcard', { cors_origins: ['https://*.example.com'] }, false],
    ['cors with a path', { cors_origins: ['https://app.example.com/x'] }, false],
    ['confirmation without verification URL', { require_email_confirmation: true, email_verification_url: null }, false],
    [
      'confirmation with verification URL',
      { require_email_confirmation: true, email_verification_url: 'https://app.example.com/auth/v' },
      true,
    ],
    ['provider enabled without secret', { providers: { github: { enabled: true, client_id: 'id' } } }, false],
    ['provider enabled with both', { providers: { github: { enabled: true, client_id: 'id', client_secret: 'shh' } } }, true],
    ['apple without key', { providers: { apple: { enabled: true, service_id: 's', team_id: 't', key_id: 'k' } } }, false],
    ['unknown provider', { providers: { myspace: { enabled: true } } }, false],
    ['unknown field', { nope: 1 }, false],
    ['boolean as string', { magic_link_enabled: 'yes' }, false],
  ])('%s → accepted: %s', async (_name, body, ok) => {
    await patch({
      require_email_confirmation: false,
      email_verification_url: null,
      password_reset_url: null,
      magic_link_url: null,
      cors_origins: [],
      ...base,
    });
    const res = await patch({ ...base, ...body });
    expect(res.statusCode, res.body).toBe(ok ? 200 : 400);
    if (!ok) {
      expect(res.json().code).toBe('invalid_settings');
      expect(res.json().details.length).toBeGreaterThan(0);
      expect(res.json().details[0]).toHaveProperty('field');
    }
  });

  it('refuses an invalid update whole, with one detail per bad field, saving nothing', async () => {
    const before = await get();
    const res = await patch({
      min_password_length: 12,
      cors_origins: ['https://ok.example.com', 'https://*.bad.com'],
      session_duration_seconds: 1,
    });
    expect(res.statusCode).toBe(400);
    const fields = res.json().details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['cors_origins[1]', 'session_duration_seconds']));
    expect(await get()).toEqual(before);
  });

  it('masks secrets and keeps them when the mask is sent back', async () => {
    await patch({ providers: { google: { enabled: true, client_id: 'gid', client_secret: 'real-secret' } } });
    const s = await get();
    expect(s.providers.google.client_secret).toBe('********');
    expect(JSON.stringify(s)).not.toContain('real-secret');
    await patch({ providers: { google: s.providers.google } });
    expect(t.settings.auth().providers.google.client_secret).toBe('real-secret');
    const pub = await t.app.inject({ url: '/v1/auth/settings', headers: t.as.anon });
    // Offered to clients now that it is enabled; the credentials never are.
    expect(pub.json().providers.google).toBe(true);
    expect(pub.body).not.toContain('gid');
    expect(pub.body).not.toContain('real-secret');
  });

  it('phone needs a paid plan: 402 on free, accepted on pro, switched off on a downgrade', async () => {
    const free = await patch({ phone_enabled: true });
    expect(free.statusCode).toBe(402);
    expect(free.json().code).toBe('paid_plan_required');
    const pro = await t.app.inject({ method: 'PATCH', url: '/api/v1/project', headers: t.as.service, payload: { plan: 'pro' } });
    expect(pro.json()).toMatchObject({ plan: 'pro', public_url: 'http://localhost:8080' });
    expect((await patch({ phone_enabled: true })).statusCode).toBe(200);
    await t.app.inject({ method: 'PATCH', url: '/api/v1/project', headers: t.as.service, payload: { plan: 'free' } });
    expect((await get()).phone_enabled).toBe(false);
    const bad = await t.app.inject({ method: 'PATCH', url: '/api/v1/project', headers: t.as.service, payload: { plan: 'gold' } });
    expect(bad.statusCode).toBe(400);
  });

  it('CORS follows the settings at once: preflight allowed, refused, own origin always', async () => {
    const preflight = (origin: string) =>
      t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/db/x',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'apikey' },
      });
    const own = await preflight('http://localhost:8080');
    expect(own.statusCode).toBe(204);
    expect(own.headers['access-control-allow-origin']).toBe('http://localhost:8080');
    // PUBLIC_URL is on localhost (development): local pages on any port are allowed by default
    // (the table above left its last accepted values: back to the defaults).
    await patch({ cors_allow_localhost: true, cors_origins: [] });
    for (const local of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:4321', 'https://localhost:8443']) {
      expect((await preflight(local)).headers['access-control-allow-origin'], local).toBe(local);
    }
    expect((await preflight('https://app.example.com')).headers['access-control-allow-origin']).toBeUndefined();
    await patch({ cors_allow_localhost: false });
    const refused = await preflight('http://localhost:5173');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // Answered, with a reason a developer can read in the network tab: the setting that allows it.
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden' });
    expect(refused.json().message).toBe(
      'The origin http://localhost:5173 may not call this API: cors_allow_localhost is off: turn it on, or add http://localhost:5173 to the cors_origins auth setting.',
    );
    await patch({ cors_origins: ['http://localhost:*', 'https://app.example.com'] });
    const ok = await preflight('http://localhost:5173');
    expect(ok.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(String(ok.headers['access-control-allow-headers'])).toContain('apikey');
    expect((await preflight('https://app.example.com')).headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect((await preflight('https://app.example.com.evil.com')).headers['access-control-allow-origin']).toBeUndefined();
    await patch({ cors_origins: ['http://[::1]:*', 'http://127.0.0.1:*'] });
    expect((await preflight('http://[::1]:5173')).headers['access-control-allow-origin']).toBe('http://[::1]:5173');
    expect((await preflight('http://127.0.0.1:3000')).headers['access-control-allow-origin']).toBe('http://127.0.0.1:3000');
    expect((await preflight('https://[::1]:5173')).headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight('http://localhost:5173')).headers['access-control-allow-origin']).toBeUndefined();
    await patch({ cors_origins: [] });
    expect((await preflight('http://localhost:5173')).headers['access-control-allow-origin']).toBeUndefined();
    await patch({ cors_allow_localhost: true });
    expect((await preflight('http://localhost:5173')).headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('arbitrary PATCH bodies never produce a 500', async () => {
    // Any code point, NUL included (fc.string() alone never makes one).
    const str = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string().map((x) => `${x}\u0000`),
    );
    const value = fc.oneof(
      str,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(str, { maxLength: 3 }),
      fc.dictionary(fc.string(), str, { maxKeys: 3 }),
      fc.dictionary(fc.constantFrom('verification', 'reset', 'magic_link'), fc.dictionary(fc.constantFrom('subject', 'html', 'text'), str)),
    );
    const key = fc.constantFrom(
      'min_password_length',
      'cors_origins',
      'allowed_redirect_urls',
      'email_verification_url',
      'providers',
      'email_templates',
      'session_duration_seconds',
      'x',
    );
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, value, { maxKeys: 4 }), async (body) => {
        const res = await patch(body);
        expect(res.statusCode).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
  });
});
