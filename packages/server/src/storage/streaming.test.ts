import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type StorageServer, storageServer } from '../../test/storage.js';
import { until } from '../../test/until.js';
import { truncateSync } from 'node:fs';
import { diskTempFiles } from './backends/index.js';
import { keyPath } from './backends/disk.js';

// Uploads and downloads over a real socket, on each backend: a refused upload is answered
// before its body is sent, an over-size one as soon as it passes the limit, an aborted one
// leaves nothing, and a file larger than one S3 part streams through both ways.

const MiB = 2 ** 20;

/** Waits for `check` to hold, polling; fails after `ms` (generous: the machine may be busy). */

/** The answer to a request whose body is still being written: status and JSON. */
function answer(req: ClientRequest): Promise<{ status: number; body: { code?: string } }> {
  return new Promise((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    req.on('error', reject);
  });
}

describe.each(BACKENDS)('streaming on the %s backend', (kind) => {
  let s: StorageServer;
  let port: number;
  let alice: Record<string, string>;

  beforeAll(async () => {
    s = await storageServer(kind, { STORAGE_MAX_FILE_SIZE: '64MiB' });
    alice = s.as.user(await s.mintToken(randomUUID()));
    await s.bucket('private');
    await s.bucket('small', { file_size_limit: MiB });
    const res = await s.sql(`create policy "own files" on storage.objects for all to authenticated
      using (owner = auth.uid()) with check (owner = auth.uid());`);
    expect(res.statusCode, res.body).toBe(200);
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    port = (s.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await s?.stop();
  });

  const open = (path: string, headers: Record<string, string | number>, method = 'POST') =>
    request({ host: '127.0.0.1', port, path, method, headers: { 'content-type': 'application/octet-stream', ...headers } });

  it('a policy refuses an upload before its body is sent (403 while the client is still sending)', async () => {
    const req = open('/api/v1/storage/object/private/refused.bin', { ...s.as.anon, 'content-length': 10 * MiB });
    const answered = answer(req);
    req.write(Buffer.alloc(64 * 1024));
    const res = await answered; // 9.9 MiB never sent
    req.destroy();
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('rls_violation');
  });

  it('a declared size over the limit is 413 before the body; a chunked one as soon as it passes', async () => {
    const declared = open('/api/v1/storage/object/small/big.bin', { ...alice, 'content-length': 2 * MiB });
    const early = answer(declared);
    declared.write(Buffer.alloc(1024));
    expect((await early).status).toBe(413);
    declared.destroy();

    const chunked = open('/api/v1/storage/object/small/chunked.bin', { ...alice, 'transfer-encoding': 'chunked' });
    let done = false;
    const res = answer(chunked).finally(() => {
      done = true;
    });
    res.catch(() => undefined);
    let sent = 0;
    // Up to 64 MiB offered; the answer must come long before (1 MiB limit).
    while (!done && sent < 64 * MiB) {
      const ok = chunked.write(Buffer.alloc(64 * 1024));
      sent += 64 * 1024;
      if (!ok) await new Promise((r) => chunked.once('drain', r).once('close', r));
      await new Promise((r) => setImmediate(r));
    }
    const r = await res;
    chunked.destroy();
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
    expect(sent).toBeLessThan(64 * MiB);
    expect(await s.storedKeys()).toEqual([]);
  });

  it('an upload aborted mid-body leaves neither row nor bytes nor temporary file', async () => {
    const req = open('/api/v1/storage/object/private/aborted.bin', { ...alice, 'content-length': 20 * MiB });
    req.on('error', () => undefined);
    for (let i = 0; i < 12; i++) {
      if (!req.write(randomBytes(MiB))) await new Promise((r) => req.once('drain', r));
    }
    const root = `${s.config.dataDir}/storage`;
    if (kind === 'disk') await until('the upload has a temporary file', async () => (await diskTempFiles(root)).length > 0);
    req.destroy();
    await until('the temporary file is gone', async () => (await diskTempFiles(root)).length === 0);
    const rows = (await s.sql(`select count(*)::int as n from storage.objects where name = 'aborted.bin'`)).json().results[0].rows[0];
    expect(rows.n).toBe(0);
    expect(await s.storedKeys()).toEqual([]);
    // The server is fine afterwards.
    expect((await s.upload('private', 'after.txt', 'after', alice)).statusCode).toBe(201);
  });

  it('a 20 MiB file (several S3 parts) streams up and down, whole and in a range across a part boundary', async () => {
    const data = randomBytes(20 * MiB + 123);
    const req = open('/api/v1/storage/object/private/big.bin', { ...alice, 'content-length': data.length });
    const res = answer(req);
    req.end(data);
    expect((await res).status).toBe(201);
    const down = await fetch(`http://127.0.0.1:${port}/api/v1/storage/object/private/big.bin`, { headers: alice });
    expect(down.status).toBe(200);
    expect(down.headers.get('content-length')).toBe(String(data.length));
    const got = Buffer.from(await down.arrayBuffer());
    expect(createHash('md5').update(got).digest('hex')).toBe(createHash('md5').update(data).digest('hex'));
    const part = await fetch(`http://127.0.0.1:${port}/api/v1/storage/object/private/big.bin`, {
      headers: { ...alice, range: `bytes=${8 * MiB - 10}-${8 * MiB + 9}` },
    });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(data.subarray(8 * MiB - 10, 8 * MiB + 10));
  });

  it('files either side of 1 MiB (the disk reads up to 1 MiB whole) come back byte for byte, whole and in ranges', async () => {
    for (const size of [MiB - 1, MiB, MiB + 1]) {
      const data = randomBytes(size);
      const up = await s.upload('private', `edge-${size}.bin`, data, { ...alice, 'content-type': 'application/octet-stream' });
      expect(up.statusCode, up.body).toBe(201);
      const url = `http://127.0.0.1:${port}/api/v1/storage/object/private/edge-${size}.bin`;
      const whole = await fetch(url, { headers: alice });
      expect(whole.headers.get('content-length')).toBe(String(size));
      expect(Buffer.from(await whole.arrayBuffer()).equals(data)).toBe(true);
      for (const [start, end] of [
        [0, 0],
        [size - 10, size - 1],
        [1000, size - 1000],
      ]) {
        const part = await fetch(url, { headers: { ...alice, range: `bytes=${start}-${end}` } });
        expect(part.status).toBe(206);
        expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
        expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(start, end + 1))).toBe(true);
      }
    }
  });

  it.each(['/api/v1/storage/object/private/%2e%2e/escape.txt', '/api/v1/storage/object/private/a/../../escape.txt'])(
    'a raw path with ".." (%s) is 400 invalid_object_name',
    async (path) => {
      const req = open(path, { ...alice, 'content-length': 1 });
      const res = answer(req);
      req.end('x');
      expect((await res).status).toBe(400);
      expect((await res).body.code).toBe('invalid_object_name');
    },
  );
});

describe('the disk backend', () => {
  let s: StorageServer;
  let alice: Record<string, string>;
  beforeAll(async () => {
    s = await storageServer('disk');
    alice = s.as.user(await s.mintToken(randomUUID()));
    await s.bucket('private');
    const res = await s.sql(`create policy "own files" on storage.objects for all to authenticated
      using (owner = auth.uid()) with check (owner = auth.uid());`);
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('a file cut short on the disk is 503 storage_unavailable, not a short answer', async () => {
    const data = randomBytes(4096);
    expect((await s.upload('private', 'cut.bin', data, alice)).statusCode).toBe(201);
    const row = (await s.sql(`select bucket_id, version::text from storage.objects where name = 'cut.bin'`)).json().results[0].rows[0];
    const path = keyPath(`${s.config.dataDir}/storage/objects`, `${row.bucket_id}/${row.version}`);
    truncateSync(path, 100);
    const res = await s.get('/api/v1/storage/object/private/cut.bin', alice);
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json().code).toBe('storage_unavailable');
    // The rest of the file's life is the sweep's and the owner's: a new upload replaces it.
    expect((await s.upload('private', 'cut.bin', data, { ...alice, 'x-upsert': 'true' })).statusCode).toBe(201);
    expect(Buffer.from((await s.get('/api/v1/storage/object/private/cut.bin', alice)).rawPayload).equals(data)).toBe(true);
  });
});
