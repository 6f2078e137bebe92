import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Plinth, buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';
import { type TestDbTarget, freshDbTarget } from '../../test/db.js';

describe('settings across instances on one PostgreSQL', () => {
  let target: TestDbTarget;
  let a: Plinth;
  let b: Plinth;
  beforeAll(async () => {
    target = await freshDbTarget();
    const config = loadConfig({ LOG_LEVEL: 'silent' }, { databaseUrl: target.databaseUrl, port: 0 });
    a = await buildApp({ config, logger: pino({ level: 'silent' }) });
    b = await buildApp({ config, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await target.cleanup();
  });

  it('a CORS change saved on one instance applies on the other within a second', async () => {
    const origin = 'https://app.example.com';
    const preflight = () =>
      b.app.inject({ method: 'OPTIONS', url: '/api/v1/db/x', headers: { origin, 'access-control-request-method': 'GET' } });
    expect((await preflight()).headers['access-control-allow-origin']).toBeUndefined();
    const res = await a.app.inject({
      method: 'PATCH',
      url: '/api/v1/settings/auth',
      headers: { authorization: `Bearer ${a.keys.secretKey}` },
      payload: { cors_origins: ['https://app.example.com'], min_password_length: 12 },
    });
    expect(res.statusCode).toBe(200);
    await expect.poll(async () => (await preflight()).headers['access-control-allow-origin'], { timeout: 1000, interval: 50 }).toBe(origin);
    expect(b.settings.auth().min_password_length).toBe(12);
  });
});
