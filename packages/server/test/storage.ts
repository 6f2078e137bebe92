import type { LightMyRequestResponse } from 'fastify';
import { createTestServer, type TestServer } from './harness.js';
import { startS3 } from './s3.js';

/** The two backends every storage scenario runs against. */
export const BACKENDS = ['disk', 's3'] as const;
export type BackendKind = (typeof BACKENDS)[number];

export interface StorageServer extends TestServer {
  kind: BackendKind;
  /** Creates a bucket with the secret key; fails the test when refused. */
  bucket(name: string, fields?: Record<string, unknown>): Promise<void>;
  upload(
    bucket: string,
    path: string,
    body: string | Buffer,
    headers?: Record<string, string>,
    method?: 'POST' | 'PUT',
  ): Promise<LightMyRequestResponse>;
  get(path: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Every key the backend holds (the sweep's view). */
  storedKeys(): Promise<string[]>;
}

/**
 * A test server on the disk backend, or on a local s3rver, with helpers for storage calls.
 * @example const s = await storageServer('s3'); await s.bucket('docs'); await s.upload('docs', 'a.txt', 'hi', s.as.service);
 */
export async function storageServer(kind: BackendKind, env: Record<string, string> = {}): Promise<StorageServer> {
  const s3 = kind === 's3' ? await startS3() : null;
  let t: TestServer;
  try {
    t = await createTestServer({ ...(s3?.env ?? {}), ...env });
  } catch (err) {
    await s3?.stop();
    throw err;
  }
  return {
    ...t,
    kind,
    async bucket(name, fields = {}) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/storage/buckets',
        headers: t.as.service,
        payload: { name, ...fields },
      });
      if (res.statusCode !== 201) throw new Error(`bucket ${name}: ${res.statusCode} ${res.body}`);
    },
    upload(bucket, path, body, headers = {}, method = 'POST') {
      return t.app.inject({
        method,
        url: `/api/v1/storage/object/${bucket}/${path}`,
        headers: { 'content-type': 'text/plain', ...headers },
        payload: body,
      });
    },
    get(path, headers = {}) {
      return t.app.inject({ method: 'GET', url: path, headers });
    },
    async storedKeys() {
      const out: string[] = [];
      for await (const k of t.storage.backend.list()) out.push(k.key);
      return out.sort();
    },
    async stop() {
      await t.stop();
      await s3?.stop();
    },
  };
}
