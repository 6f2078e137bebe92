import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Plinth, buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';
import { freshDbTarget, type TestDbTarget } from '../../test/db.js';
import { type LocalS3, startS3 } from '../../test/s3.js';

// Resumable (TUS) uploads behind a load balancer: two instances on one PostgreSQL, sharing the
// storage backend (on the disk, one storage directory both mount; on S3, one bucket with a data
// dir each, as on two machines). An upload begun on one goes on on the other after a cut
// connection and ends on the first; two PATCHes at one offset on the two: one appends, one is 409.

const b64 = (v: string) => Buffer.from(v).toString('base64');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const BASE = '/storage/v1/upload/resumable';

describe.each(['disk', 's3'] as const)('resumable uploads across two instances (%s)', (kind) => {
  let target: TestDbTarget;
  let s3: LocalS3 | null = null;
  let a: Plinth;
  let b: Plinth;
  const dirs: string[] = [];
  const origin = (p: Plinth) => `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}`;
  const headers = () => ({ apikey: a.keys.secretKey, authorization: `Bearer ${a.keys.secretKey}`, 'tus-resumable': '1.0.0' });
  /** On S3 the bytes are stored in 8 MiB parts; on the disk HEAD follows every MiB. */
  const step = kind === 's3' ? 8 * 2 ** 20 : 2 ** 20;

  beforeAll(async () => {
    target = await freshDbTarget();
    s3 = kind === 's3' ? await startS3() : null;
    const shared = mkdtempSync(join(tmpdir(), 'plinth-shared-'));
    dirs.push(shared);
    const start = async (dataDir: string) => {
      const p = await buildApp({
        config: loadConfig({ LOG_LEVEL: 'silent', ...(s3?.env ?? {}) }, { databaseUrl: target.databaseUrl, dataDir, port: 0 }),
        logger: pino({ level: 'silent' }),
      });
      await p.app.listen({ port: 0, host: '127.0.0.1' });
      return p;
    };
    // The disk backend's instances share its directory; S3's have a data dir each.
    const own = () => {
      const d = mkdtempSync(join(tmpdir(), 'plinth-own-'));
      dirs.push(d);
      return d;
    };
    a = await start(kind === 'disk' ? shared : own());
    b = await start(kind === 'disk' ? shared : own());
    const made = await a.app.inject({
      method: 'POST',
      url: '/api/v1/storage/buckets',
      headers: { authorization: `Bearer ${a.keys.secretKey}` },
      payload: { name: 'big' },
    });
    expect(made.statusCode).toBe(201);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await s3?.stop();
    await target?.cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function create(p: Plinth, name: string, length: number): Promise<string> {
    const res = await fetch(`${origin(p)}${BASE}`, {
      method: 'POST',
      headers: { ...headers(), 'upload-length': String(length), 'upload-metadata': `bucketName ${b64('big')},objectName ${b64(name)}` },
    });
    expect(res.status).toBe(201);
    return res.headers.get('location') as string;
  }
  const head = async (p: Plinth, location: string) => {
    const res = await fetch(`${origin(p)}${location}`, { method: 'HEAD', headers: headers() });
    return { status: res.status, offset: Number(res.headers.get('upload-offset')) };
  };
  const patch = (p: Plinth, location: string, offset: number, chunk: Buffer) =>
    fetch(`${origin(p)}${location}`, {
      method: 'PATCH',
      headers: { ...headers(), 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(chunk),
    });
  const idOf = (location: string) => location.split('/').pop() as string;

  it('begun on A, cut mid-way, continued on B, finished on A: the object is whole', async () => {
    const bytes = randomBytes(2 * step + 2 ** 20 + 17);
    const location = await create(a, 'movie.bin', bytes.length);

    // On A: a PATCH of everything, cut once `step` bytes are stored (B's HEAD sees them).
    const req = request(`${origin(a)}${location}`, {
      method: 'PATCH',
      headers: {
        ...headers(),
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        'content-length': String(bytes.length),
      },
    });
    req.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => req.write(bytes.subarray(0, step + 2 ** 19), (err) => (err ? reject(err) : resolve())));
    await expect.poll(async () => (await head(b, location)).offset, { timeout: 15_000 }).toBeGreaterThanOrEqual(step);
    req.destroy();
    // A records what it stored once it sees the cut.
    await expect
      .poll(
        async () =>
          (await b.db.query<{ idle: boolean }>('select writer is null as idle from storage.uploads where id = $1', [idOf(location)]))
            .rows[0]?.idle,
        {
          timeout: 15_000,
        },
      )
      .toBe(true);
    const arrived = (await head(b, location)).offset;
    expect(arrived).toBeGreaterThanOrEqual(step);
    expect(arrived).toBeLessThanOrEqual(step + 2 ** 19);

    // On B: the next bytes, up to one MiB before the end.
    const upTo = bytes.length - 2 ** 20;
    const middle = await patch(b, location, arrived, bytes.subarray(arrived, upTo));
    expect(middle.status).toBe(204);
    expect(middle.headers.get('upload-offset')).toBe(String(upTo));
    expect((await head(a, location)).offset).toBe(upTo);

    // On A: the rest, which finishes the upload.
    const last = await patch(a, location, upTo, bytes.subarray(upTo));
    expect(last.status).toBe(204);
    expect((await head(b, location)).status).toBe(404);

    const got = await b.app.inject({
      url: '/api/v1/storage/object/big/movie.bin',
      headers: { authorization: `Bearer ${a.keys.secretKey}` },
    });
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.length).toBe(bytes.length);
    expect(sha(got.rawPayload)).toBe(sha(bytes));
    // Nothing is left staged.
    expect((await a.db.query('select 1 from storage.uploads')).rows).toEqual([]);
    const staged: string[] = [];
    for await (const s of a.storage.backend.staging.list(Number.POSITIVE_INFINITY)) staged.push(s.id);
    expect(staged).not.toContain(idOf(location));
  });

  it('two PATCHes at one offset on the two instances: one appends, the other is 409', async () => {
    const length = 2 * step;
    const location = await create(a, 'race.bin', length);
    const chunk = randomBytes(step);
    const results = await Promise.all([patch(a, location, 0, chunk), patch(b, location, 0, chunk)]);
    expect(results.map((r) => r.status).sort()).toEqual([204, 409]);
    expect((await head(a, location)).offset).toBe(step);
    // The loser goes on from HEAD's offset.
    expect((await patch(b, location, step, chunk)).status).toBe(204);
    const got = await a.app.inject({
      url: '/api/v1/storage/object/big/race.bin',
      headers: { authorization: `Bearer ${a.keys.secretKey}` },
    });
    expect(sha(got.rawPayload)).toBe(sha(Buffer.concat([chunk, chunk])));
  });

  it('an abandoned upload expires: its URL is 404 on both and its staged bytes are deleted', async () => {
    const location = await create(b, 'abandoned.bin', 2 * step);
    expect((await patch(b, location, 0, randomBytes(step))).status).toBe(204);
    const id = idOf(location);
    const file = join(dirs[0], 'storage', 'uploads', `${id}.part`);
    if (kind === 'disk') expect(existsSync(file)).toBe(true);
    // A day on (the row's expiry moved back, the instances' clocks being real).
    await a.db.query('update storage.uploads set expires_at = $2 where id = $1', [id, Date.now() - 1]);
    expect((await head(a, location)).status).toBe(404);
    expect(await a.storage.resumable.sweep()).toBe(1);
    expect((await head(b, location)).status).toBe(404);
    expect((await patch(b, location, step, randomBytes(step))).status).toBe(404);
    if (kind === 'disk') expect(existsSync(file)).toBe(false);
  });

  it('the uploads table is closed to the API roles and the SQL runner', async () => {
    for (const role of ['anon', 'authenticated', 'plinth_sql']) {
      const { rows } = await a.db.query<{ ok: boolean }>(`select has_table_privilege($1, 'storage.uploads', 'select') as ok`, [role]);
      expect(rows[0].ok, role).toBe(false);
    }
    const res = await a.app.inject({
      method: 'GET',
      url: '/rest/v1/uploads?select=*',
      headers: { apikey: a.keys.publicKey, 'accept-profile': 'storage' },
    });
    expect(res.statusCode).not.toBe(200);
  });
});
