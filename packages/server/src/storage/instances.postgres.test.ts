import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Plinth, buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { type LocalS3, startS3 } from '../../test/s3.js';

// Scale-out: two instances on one PostgreSQL and one S3 bucket (each with a data dir of its
// own, as on two machines) serve the same objects, signed URLs and deletions.

describe('storage across instances on one PostgreSQL with S3', () => {
  let target: TestDbTarget;
  let s3: LocalS3;
  let a: Plinth;
  let b: Plinth;
  const dirs = [mkdtempSync(join(tmpdir(), 'plinth-a-')), mkdtempSync(join(tmpdir(), 'plinth-b-'))];
  const service = () => ({ authorization: `Bearer ${a.keys.secretKey}` });

  beforeAll(async () => {
    target = await freshDbTarget();
    s3 = await startS3();
    const start = (dataDir: string) =>
      buildApp({
        config: loadConfig({ LOG_LEVEL: 'silent', ...s3.env }, { databaseUrl: target.databaseUrl, dataDir, port: 0 }),
        logger: pino({ level: 'silent' }),
      });
    a = await start(dirs[0]);
    b = await start(dirs[1]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await s3?.stop();
    await target.cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('an object uploaded through one is read, listed, signed, moved and deleted through the other', async () => {
    expect(
      (await a.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: service(), payload: { name: 'shared' } })).statusCode,
    ).toBe(201);
    const up = await a.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/shared/docs/a.txt',
      headers: { ...service(), 'content-type': 'text/plain' },
      payload: 'from instance a',
    });
    expect(up.statusCode, up.body).toBe(201);

    const read = await b.app.inject({ url: '/api/v1/storage/object/shared/docs/a.txt', headers: service() });
    expect(read.statusCode).toBe(200);
    expect(read.body).toBe('from instance a');
    expect(read.headers.etag).toBe(up.json().etag);
    const list = await b.app.inject({ url: '/api/v1/storage/object/shared?prefix=docs', headers: service() });
    expect(list.json().map((e: { name: string }) => e.name)).toEqual(['a.txt']);

    // A URL signed by one instance (the project's key is shared) is honoured by the other.
    const signed = await a.app.inject({
      method: 'POST',
      url: '/api/v1/storage/sign/shared/docs/a.txt',
      headers: service(),
      payload: { expires_in: 60 },
    });
    const url = new URL(signed.json().signed_url);
    expect((await b.app.inject({ url: `${url.pathname}${url.search}` })).body).toBe('from instance a');

    const moved = await b.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/shared/move',
      headers: service(),
      payload: { from: 'docs/a.txt', to: 'docs/b.txt' },
    });
    expect(moved.statusCode).toBe(200);
    expect((await a.app.inject({ url: '/api/v1/storage/object/shared/docs/b.txt', headers: service() })).body).toBe('from instance a');

    const del = await a.app.inject({ method: 'DELETE', url: '/api/v1/storage/object/shared/docs/b.txt', headers: service() });
    expect(del.statusCode).toBe(200);
    expect((await b.app.inject({ url: '/api/v1/storage/object/shared/docs/b.txt', headers: service() })).statusCode).toBe(404);
    await a.storage.sweeper.drain();
    const keys: string[] = [];
    for await (const k of b.storage.backend.list()) keys.push(k.key);
    expect(keys).toEqual([]);
  });

  it('two concurrent uploads of one name on the two instances: one 201, one 409', async () => {
    const put = (p: Plinth, body: string) =>
      p.app.inject({
        method: 'POST',
        url: '/api/v1/storage/object/shared/race.txt',
        headers: { ...service(), 'content-type': 'text/plain' },
        payload: body,
      });
    const results = await Promise.all([put(a, 'a'), put(b, 'b')]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    const keys: string[] = [];
    for await (const k of a.storage.backend.list()) keys.push(k.key);
    expect(keys).toHaveLength(1);
  });
});
