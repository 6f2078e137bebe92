import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type LocalS3, startS3 } from '../../test/s3.js';

// The S3 service going away is the backend's failure: 503 storage_unavailable with Retry-After,
// never a 500, and nothing half-written; what needs only the database still works.

describe('storage while the S3 service is down', () => {
  let s3: LocalS3;
  let t: TestServer;
  beforeAll(async () => {
    s3 = await startS3();
    t = await createTestServer(s3.env);
    const b = await t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: t.as.service, payload: { name: 'b' } });
    expect(b.statusCode).toBe(201);
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/b/before.txt',
      headers: t.as.service,
      payload: 'stored before',
    });
    expect(up.statusCode).toBe(201);
    await s3.stop();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('uploads and downloads answer 503 storage_unavailable; listing and metadata still answer', async () => {
    const up = await t.app.inject({ method: 'POST', url: '/api/v1/storage/object/b/during.txt', headers: t.as.service, payload: 'x' });
    expect(up.statusCode).toBe(503);
    expect(up.json().code).toBe('storage_unavailable');
    expect(up.headers['retry-after']).toBe('1');
    const down = await t.app.inject({ url: '/api/v1/storage/object/b/before.txt', headers: t.as.service });
    expect(down.statusCode).toBe(503);
    expect(down.json().code).toBe('storage_unavailable');
    const head = await t.app.inject({ method: 'HEAD', url: '/api/v1/storage/object/b/before.txt', headers: t.as.service });
    expect(head.statusCode).toBe(200);
    const list = await t.app.inject({ url: '/api/v1/storage/object/b', headers: t.as.service });
    expect(list.json().map((e: { name: string }) => e.name)).toEqual(['before.txt']);
  });
});
