import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, createTestServer } from '../test/harness.js';

// The composition root: a whole server starts on a fresh database and answers. What each area
// does is tested beside that area.
describe('the server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createTestServer();
  });
  afterAll(() => t.stop());

  it('GET /health answers ok', async () => {
    const res = await t.app.inject({ url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('makes opaque pk_/sk_ keys of at least 32 random bytes at its first start', () => {
    expect(t.keys.publicKey).toMatch(/^pk_[A-Za-z0-9_-]{43,}$/);
    expect(t.keys.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(t.keys.publicKey).not.toBe(t.keys.secretKey);
  });
});
