import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';

// A page on another origin (a Vite dev server, allowed as localhost) calls Plinth through
// Supabase's clients and a TUS client: the browser's preflight must allow every header they
// send, and the answer must expose every header they read, or the call fails in the page only.
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.stop());

const ORIGIN = 'http://localhost:5173';
const list = (v: unknown) =>
  String(v ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());

describe("CORS for Supabase's clients and TUS", () => {
  it.each([
    [
      'auth-js',
      '/auth/v1/token?grant_type=password',
      'POST',
      ['apikey', 'authorization', 'content-type', 'x-client-info', 'x-supabase-api-version'],
    ],
    ['postgrest-js with a schema', '/rest/v1/notes', 'POST', ['apikey', 'authorization', 'prefer', 'accept-profile', 'content-profile']],
    ['functions-js', '/functions/v1/hello', 'POST', ['authorization', 'x-region', 'content-type']],
    [
      'tus-js-client',
      '/storage/v1/upload/resumable',
      'PATCH',
      ['tus-resumable', 'upload-length', 'upload-offset', 'upload-metadata', 'x-upsert'],
    ],
  ])('%s: the preflight allows what it sends', async (_client, url, method, sent) => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url,
      headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': sent.join(', ') },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN);
    const allowed = list(preflight.headers['access-control-allow-headers']);
    for (const h of sent) expect(allowed, h).toContain(h);
  });

  it('an answer exposes what the clients read (API version, Preference-Applied, TUS offsets and Location)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health', headers: { origin: ORIGIN } });
    const exposed = list(res.headers['access-control-expose-headers']);
    for (const h of [
      'content-range',
      'x-supabase-api-version',
      'preference-applied',
      'x-relay-error',
      'location',
      'upload-offset',
      'tus-resumable',
    ])
      expect(exposed, h).toContain(h);
  });
});
