import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3 } from '../../../test/s3.js';
import { type SupabaseStorageServer, supabaseStorageServer } from '../../../test/supabase-storage.js';

// Resumable uploads (TUS 1.0.0) at /storage/v1/upload/resumable and /api/v1/storage/upload/resumable,
// spoken with raw HTTP as the protocol says (no TUS client is installed): an upload cut mid-way
// resumes from HEAD's Upload-Offset and ends as a plain upload would (same policy, limits, types).

type User = Awaited<ReturnType<SupabaseStorageServer['user']>>;

const b64 = (v: string) => Buffer.from(v).toString('base64');
const metadata = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');

/** A TUS client of one server: the headers of a caller, the protocol's requests. */
function tusOf(s: SupabaseStorageServer, base = '/storage/v1/upload/resumable') {
  const origin = new URL(s.url).origin;
  const auth = (token: string) => ({ apikey: s.keys.publicKey, authorization: `Bearer ${token}`, 'tus-resumable': '1.0.0' });
  return {
    origin,
    auth,
    create(token: string, m: Record<string, string>, length: number, extra: Record<string, string> = {}, body?: Buffer) {
      return fetch(`${origin}${base}`, {
        method: 'POST',
        headers: {
          ...auth(token),
          'upload-length': String(length),
          'upload-metadata': metadata(m),
          ...(body ? { 'content-type': 'application/offset+octet-stream' } : {}),
          ...extra,
        },
        body: body ? new Uint8Array(body) : undefined,
      });
    },
    patch(token: string, location: string, offset: number, chunk: Buffer) {
      return fetch(`${origin}${location}`, {
        method: 'PATCH',
        headers: { ...auth(token), 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body: new Uint8Array(chunk),
      });
    },
    head(token: string, location: string) {
      return fetch(`${origin}${location}`, { method: 'HEAD', headers: auth(token) });
    },
    /**
     * A PATCH that sends `sent` of `chunk`'s bytes (declaring them all), then loses its
     * connection. Resolves, once the server has seen the cut (the upload is no longer being
     * written), to HEAD's offset: what arrived, at least `stored` and at most `sent` (bytes read
     * from the socket but not yet stored go with the connection).
     */
    async cutPatch(token: string, location: string, chunk: Buffer, sent: number, stored: number): Promise<number> {
      const url = new URL(`${origin}${location}`);
      const req = request(url, {
        method: 'PATCH',
        headers: {
          ...auth(token),
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': String(chunk.length),
        },
      });
      req.on('error', () => undefined);
      await new Promise<void>((resolve, reject) => req.write(chunk.subarray(0, sent), (err) => (err ? reject(err) : resolve())));
      const id = location.split('/').pop() as string;
      // HEAD follows the stored bytes while the PATCH goes on: `stored` of them are, before the cut.
      await expect
        .poll(async () => Number((await this.head(token, location)).headers.get('upload-offset')), { timeout: 10_000 })
        .toBeGreaterThanOrEqual(stored);
      req.destroy();
      await expect
        .poll(
          async () =>
            (await s.db.query<{ idle: boolean }>('select writer is null as idle from storage.uploads where id = $1', [id])).rows[0]?.idle,
          {
            timeout: 10_000,
          },
        )
        .toBe(true);
      return Number((await this.head(token, location)).headers.get('upload-offset'));
    },
  };
}

describe.each(['disk', 's3'] as const)('on the %s backend', (kind) => {
  let s3: LocalS3 | null = null;
  let s: SupabaseStorageServer;
  let ada: User;

  beforeAll(async () => {
    s3 = kind === 's3' ? await startS3() : null;
    s = await supabaseStorageServer(s3?.env ?? {});
    ada = await s.user();
    await s.sqlOk(`create policy "own folder" on storage.objects for all to authenticated
      using ((storage.foldername(name))[1] = auth.uid()::text) with check ((storage.foldername(name))[1] = auth.uid()::text);`);
    expect((await s.service.createBucket('big')).error).toBeNull();
  });
  afterAll(async () => {
    await s?.stop();
    await s3?.stop();
  });

  it('an upload whose connection is cut mid-way resumes from HEAD’s offset and ends as the uploader’s object', async () => {
    const tus = tusOf(s);
    // On S3 the bytes are stored in 8 MiB parts (the rest waits for the next): the cut comes past the first.
    const step = kind === 's3' ? 8 * 2 ** 20 : 2 ** 20;
    const bytes = randomBytes(step + 2 * 2 ** 20 + 17);
    const created = await tus.create(
      ada.token,
      { bucketName: 'big', objectName: `${ada.id}/video.bin`, contentType: 'video/mp4' },
      bytes.length,
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('tus-resumable')).toBe('1.0.0');
    const location = created.headers.get('location') as string;
    expect(location).toMatch(/^\/storage\/v1\/upload\/resumable\/[0-9a-f-]{36}$/);
    expect(created.headers.get('upload-expires')).toBeTruthy();

    const arrived = await tus.cutPatch(ada.token, location, bytes, step + 2 ** 19, step);
    expect(arrived).toBeGreaterThanOrEqual(step);
    expect(arrived).toBeLessThanOrEqual(step + 2 ** 19);
    const head = await tus.head(ada.token, location);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe(String(arrived));
    expect(head.headers.get('upload-length')).toBe(String(bytes.length));

    // Not yet an object: nothing is visible before the last byte.
    expect((await ada.client.from('big').list(ada.id)).data).toEqual([]);

    const rest = await tus.patch(ada.token, location, arrived, bytes.subarray(arrived));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-offset')).toBe(String(bytes.length));

    const got = await ada.client.from('big').download(`${ada.id}/video.bin`);
    expect(got.error).toBeNull();
    expect(Buffer.from(await (got.data as Blob).arrayBuffer()).equals(bytes)).toBe(true);
    const info = await ada.client.from('big').info(`${ada.id}/video.bin`);
    expect(info.data).toMatchObject({ contentType: 'video/mp4', size: bytes.length });
    const [owner] = await s.sqlOk(`select owner::text from storage.objects where name = '${ada.id}/video.bin'`);
    expect(owner.rows).toEqual([{ owner: ada.id }]);
    // The upload is over: its URL is gone, and its staging files with it.
    expect((await tus.head(ada.token, location)).status).toBe(404);
    expect(await s.storage.resumable.sweep()).toBe(0);
  });
});

describe('resumable uploads: the rules of a plain upload', () => {
  let s: SupabaseStorageServer;
  let ada: User;
  let bob: User;

  beforeAll(async () => {
    s = await supabaseStorageServer();
    [ada, bob] = [await s.user(), await s.user()];
    await s.sqlOk(`create policy "own folder" on storage.objects for all to authenticated
      using ((storage.foldername(name))[1] = auth.uid()::text) with check ((storage.foldername(name))[1] = auth.uid()::text);`);
    expect((await s.service.createBucket('small', { public: false, fileSizeLimit: 1000 })).error).toBeNull();
    expect((await s.service.createBucket('images', { public: false, allowedMimeTypes: ['image/*'] })).error).toBeNull();
    expect((await s.service.createBucket('files')).error).toBeNull();
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('creation with upload: the first bytes come with the POST; a zero-length upload is done at once', async () => {
    const tus = tusOf(s);
    const created = await tus.create(
      ada.token,
      { bucketName: 'files', objectName: `${ada.id}/a.txt`, contentType: 'text/plain' },
      11,
      {},
      Buffer.from('hello'),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('upload-offset')).toBe('5');
    const location = created.headers.get('location') as string;
    expect((await tus.patch(ada.token, location, 5, Buffer.from(' world'))).status).toBe(204);
    expect(await (await ada.client.from('files').download(`${ada.id}/a.txt`)).data?.text()).toBe('hello world');

    const empty = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/empty.txt` }, 0);
    expect(empty.status).toBe(201);
    expect((await ada.client.from('files').info(`${ada.id}/empty.txt`)).data).toMatchObject({ size: 0 });
  });

  it('an upload over the bucket’s size limit is refused at creation, and a chunk past Upload-Length too', async () => {
    const tus = tusOf(s);
    const over = await tus.create(ada.token, { bucketName: 'small', objectName: `${ada.id}/big.bin` }, 1001);
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ statusCode: '413', code: 'EntityTooLarge' });

    const created = await tus.create(ada.token, { bucketName: 'small', objectName: `${ada.id}/ok.bin` }, 10);
    const location = created.headers.get('location') as string;
    const long = await tus.patch(ada.token, location, 0, Buffer.alloc(11));
    expect(long.status).toBe(413);
    expect((await tus.head(ada.token, location)).headers.get('upload-offset')).toBe('0');
    const offByOne = await tus.patch(ada.token, location, 3, Buffer.alloc(7));
    expect(offByOne.status).toBe(409);
  });

  it('a type the bucket refuses is refused at creation', async () => {
    const res = await tusOf(s).create(ada.token, { bucketName: 'images', objectName: `${ada.id}/a.txt`, contentType: 'text/plain' }, 5);
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: 'InvalidMimeType', message: 'mime type text/plain is not supported' });
  });

  it('an unauthorized caller is refused: another’s folder (403), no key (401), another’s upload (404)', async () => {
    const tus = tusOf(s);
    const intruder = await tus.create(bob.token, { bucketName: 'files', objectName: `${ada.id}/evil.txt` }, 4);
    expect(intruder.status).toBe(403);
    expect(await intruder.json()).toMatchObject({ code: 'AccessDenied' });

    const nokey = await fetch(`${tus.origin}/storage/v1/upload/resumable`, {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '4', 'upload-metadata': metadata({ bucketName: 'files', objectName: 'x' }) },
    });
    expect(nokey.status).toBe(401);

    const created = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/mine.txt` }, 4);
    const location = created.headers.get('location') as string;
    expect((await tus.head(bob.token, location)).status).toBe(404);
    expect((await tus.patch(bob.token, location, 0, Buffer.from('evil'))).status).toBe(404);
    expect((await tus.patch(ada.token, location, 0, Buffer.from('mine'))).status).toBe(204);
    expect(await (await ada.client.from('files').download(`${ada.id}/mine.txt`)).data?.text()).toBe('mine');
  });

  it('the policy and the name are checked again at the finish: a name taken meanwhile is 409 and the upload ends', async () => {
    const tus = tusOf(s);
    const created = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/race.txt` }, 3);
    const location = created.headers.get('location') as string;
    expect((await ada.client.from('files').upload(`${ada.id}/race.txt`, 'first')).error).toBeNull();
    const late = await tus.patch(ada.token, location, 0, Buffer.from('two'));
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: 'Duplicate' });
    expect(await (await ada.client.from('files').download(`${ada.id}/race.txt`)).data?.text()).toBe('first');
    expect((await tus.head(ada.token, location)).status).toBe(404);

    // With x-upsert the finish replaces it.
    const again = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/race.txt` }, 3, { 'x-upsert': 'true' });
    expect((await tus.patch(ada.token, again.headers.get('location') as string, 0, Buffer.from('two'))).status).toBe(204);
    expect(await (await ada.client.from('files').download(`${ada.id}/race.txt`)).data?.text()).toBe('two');
  });

  it('termination: DELETE ends an upload and its URL', async () => {
    const tus = tusOf(s);
    const created = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/gone.txt` }, 4);
    const location = created.headers.get('location') as string;
    const del = await fetch(`${tus.origin}${location}`, { method: 'DELETE', headers: tus.auth(ada.token) });
    expect(del.status).toBe(204);
    expect((await tus.head(ada.token, location)).status).toBe(404);
    expect((await tus.patch(ada.token, location, 0, Buffer.from('gone'))).status).toBe(404);
  });

  it('OPTIONS says the version, the extensions and the largest size', async () => {
    const res = await fetch(`${tusOf(s).origin}/storage/v1/upload/resumable`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe('creation,creation-with-upload,termination,expiration');
    expect(Number(res.headers.get('tus-max-size'))).toBeGreaterThan(0);
  });

  it('Plinth’s own path speaks it too, with Plinth’s errors', async () => {
    const tus = tusOf(s, '/api/v1/storage/upload/resumable');
    const over = await tus.create(ada.token, { bucketName: 'small', objectName: `${ada.id}/x.bin` }, 5000);
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ code: 'payload_too_large', details: { limit: 1000 } });
    const created = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/plinth.txt` }, 6);
    const location = created.headers.get('location') as string;
    expect(location).toMatch(/^\/api\/v1\/storage\/upload\/resumable\//);
    expect((await tus.patch(ada.token, location, 0, Buffer.from('plinth'))).status).toBe(204);
    expect(await (await ada.client.from('files').download(`${ada.id}/plinth.txt`)).data?.text()).toBe('plinth');
  });

  // Last: it moves the clock a day on.
  it('an abandoned upload expires after a day: its URL is 404 and the sweep deletes its bytes', async () => {
    const tus = tusOf(s);
    const created = await tus.create(ada.token, { bucketName: 'files', objectName: `${ada.id}/abandoned.bin` }, 100, {}, Buffer.alloc(50));
    const location = created.headers.get('location') as string;
    s.clock.advance(24 * 3600_000 + 1000);
    const token = await s.mintToken(ada.id);
    expect(await s.storage.resumable.sweep()).toBeGreaterThanOrEqual(1);
    expect((await tus.head(token, location)).status).toBe(404);
    expect((await tus.patch(token, location, 50, Buffer.alloc(50))).status).toBe(404);
  });
});
