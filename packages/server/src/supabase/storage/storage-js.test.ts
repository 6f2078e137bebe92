import { StorageApiError, StorageClient } from '@supabase/storage-js';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SupabaseStorageServer, supabaseStorageServer } from '../../../test/supabase-storage.js';

// storage-js (npm, as apps use it) against /storage/v1: buckets and objects on storage's own
// services, so the policies on storage.objects, the limits and the names rules are storage's.

let s: SupabaseStorageServer;
let ada: Awaited<ReturnType<SupabaseStorageServer['user']>>;

beforeAll(async () => {
  s = await supabaseStorageServer();
  ada = await s.user();
  await s.sqlOk(`create policy "own folder" on storage.objects for all to authenticated
    using ((storage.foldername(name))[1] = auth.uid()::text) with check ((storage.foldername(name))[1] = auth.uid()::text);`);
});
afterAll(async () => {
  await s?.stop();
});

const text = (d: Blob | null) => d?.text();

describe('buckets', () => {
  it('are created, read, listed, updated, emptied and deleted in Supabase shapes, with the secret key', async () => {
    const made = await s.service.createBucket('avatars', { public: false, fileSizeLimit: '20mb', allowedMimeTypes: ['image/*'] });
    expect(made).toEqual({ data: { name: 'avatars' }, error: null });
    const got = await s.service.getBucket('avatars');
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      id: 'avatars',
      name: 'avatars',
      owner: null,
      public: false,
      file_size_limit: 20_000_000,
      allowed_mime_types: ['image/*'],
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect((await s.service.listBuckets()).data?.map((b) => b.id)).toContain('avatars');
    // A bucket made in SQL with Supabase's columns (a Supabase project's seed) keeps its owner.
    await s.sqlOk(`insert into storage.buckets (id, name, owner, public) values ('seeded', 'seeded', '${ada.id}', false)`);
    expect((await s.service.getBucket('seeded')).data).toMatchObject({ id: 'seeded', owner: ada.id });

    // A partial update leaves the rest as it was.
    expect(await s.service.updateBucket('avatars', { public: true })).toEqual({ data: { message: 'Successfully updated' }, error: null });
    const after = (await s.service.getBucket('avatars')).data;
    expect(after?.public).toBe(true);
    expect(after?.file_size_limit).toBe(20_000_000);
    expect(after?.allowed_mime_types).toEqual(['image/*']);

    // Not empty: 409 in Supabase's words; emptied, it goes.
    expect((await s.service.from('avatars').upload('a.png', Buffer.from('x'), { contentType: 'image/png' })).error).toBeNull();
    const refused = await s.service.deleteBucket('avatars');
    expect(refused.error).toBeInstanceOf(StorageApiError);
    expect(refused.error).toMatchObject({ status: 409, statusCode: '409', message: 'The bucket you tried to delete is not empty' });
    expect((await s.service.emptyBucket('avatars')).error).toBeNull();
    expect((await s.service.from('avatars').list()).data).toEqual([]);
    expect(await s.service.deleteBucket('avatars')).toEqual({ data: { message: 'Successfully deleted' }, error: null });
  });

  it('an unknown bucket, a taken name and a bad name answer {statusCode, code, error, message}', async () => {
    const missing = await s.service.getBucket('nope');
    expect(missing.error).toMatchObject({ status: 404, statusCode: '404', code: 'NoSuchBucket', message: 'Bucket not found' });
    await s.service.createBucket('taken');
    expect((await s.service.createBucket('taken')).error).toMatchObject({ status: 409, code: 'BucketAlreadyExists' });
    expect((await s.service.createBucket('Bad Name!')).error).toMatchObject({ status: 400, code: 'InvalidBucketName' });
    const raw = await fetch(`${s.url}/bucket/nope`, { headers: { apikey: s.keys.secretKey } });
    expect(await raw.json()).toEqual({ statusCode: '404', code: 'NoSuchBucket', error: 'Bucket not found', message: 'Bucket not found' });
  });

  it('are not for users or the public key (Plinth keeps buckets to the secret key)', async () => {
    expect((await ada.client.listBuckets()).error).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect((await s.anon.createBucket('mine')).error).toMatchObject({ status: 403 });
    // No key and no token at all: Supabase's own words for it.
    const bare = await new StorageClient(s.url).listBuckets();
    expect(bare.error).toMatchObject({ status: 401, code: 'InvalidJWT', message: 'Invalid Compact JWS' });
    expect((await s.service.getBucket('mine')).error?.message).toBe('Bucket not found');
  });
});

describe('objects', () => {
  beforeAll(async () => {
    await s.service.createBucket('files', { public: false });
    await s.service.createBucket('limited', { public: false, fileSizeLimit: '1kb', allowedMimeTypes: ['image/png'] });
  });

  it('uploads a buffer, a Blob (multipart), a FormData and a stream, and reads each back', async () => {
    const files = ada.client.from('files');
    const put = await files.upload(`${ada.id}/buf.txt`, Buffer.from('from a buffer'));
    expect(put.error).toBeNull();
    expect(put.data).toEqual({ path: `${ada.id}/buf.txt`, fullPath: `files/${ada.id}/buf.txt`, id: expect.any(String) });
    expect((await files.upload(`${ada.id}/blob.txt`, new Blob(['from a blob'], { type: 'text/plain' }))).error).toBeNull();
    const form = new FormData();
    form.append('', new Blob(['from a form'], { type: 'text/csv' }), 'x.csv');
    expect((await files.upload(`${ada.id}/form.csv`, form, { metadata: { from: 'form' } })).error).toBeNull();
    expect((await files.upload(`${ada.id}/stream.txt`, Readable.from([Buffer.from('from '), Buffer.from('a stream')]))).error).toBeNull();

    expect(await text((await files.download(`${ada.id}/buf.txt`)).data)).toBe('from a buffer');
    expect(await text((await files.download(`${ada.id}/blob.txt`)).data)).toBe('from a blob');
    const csv = (await files.download(`${ada.id}/form.csv`)).data;
    expect(await text(csv)).toBe('from a form');
    expect(csv?.type).toBe('text/csv');
    expect(await text((await files.download(`${ada.id}/stream.txt`)).data)).toBe('from a stream');
    expect((await files.info(`${ada.id}/form.csv`)).data?.metadata).toEqual({ from: 'form' });
  });

  it("a multipart upload streams any bytes through, the boundary's look-alikes and chunk edges included", async () => {
    const files = s.service.from('files');
    // 8 MiB of random bytes with CRLF-dash runs sprinkled in (what the parser looks for).
    const bytes = randomBytes(8 * 1024 * 1024);
    for (let i = 1000; i < bytes.length; i += 65_521) bytes.write('\r\n--\r\n------', i, 'latin1');
    expect((await files.upload('big/random.bin', new Blob([bytes], { type: 'application/octet-stream' }))).error).toBeNull();
    const back = Buffer.from(await ((await files.download('big/random.bin')).data as Blob).arrayBuffer());
    expect(back.length).toBe(bytes.length);
    expect(createHash('sha256').update(back).digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
    // A form without a file part, or a truncated one, is 400 and leaves nothing.
    const noFile = await fetch(`${s.url}/object/files/big/none.bin`, {
      method: 'POST',
      headers: { apikey: s.keys.secretKey, 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: '--XyZ\r\ncontent-disposition: form-data; name="cacheControl"\r\n\r\n3600\r\n--XyZ--\r\n',
    });
    expect(noFile.status).toBe(400);
    const cut = await fetch(`${s.url}/object/files/big/cut.bin`, {
      method: 'POST',
      headers: { apikey: s.keys.secretKey, 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: '--XyZ\r\ncontent-disposition: form-data; name=""; filename="a"\r\n\r\nno end here',
    });
    expect(cut.status).toBe(400);
    expect((await files.list('big')).data?.map((e) => e.name)).toEqual(['random.bin']);
  });

  it('a taken name is 409 without upsert; upsert and update replace; info, exists and custom metadata', async () => {
    const files = ada.client.from('files');
    const path = `${ada.id}/note.txt`;
    expect((await files.upload(path, 'one', { metadata: { a: 1 } })).error).toBeNull();
    const again = await files.upload(path, 'two');
    expect(again.error).toMatchObject({ status: 409, statusCode: '409', message: 'The resource already exists' });
    expect((await files.upload(path, 'two', { upsert: true })).error).toBeNull();
    expect((await files.update(path, 'three')).error).toBeNull();
    expect(await text((await files.download(path)).data)).toBe('three');

    const info = await files.info(path);
    expect(info.error).toBeNull();
    expect(info.data).toMatchObject({ name: path, bucketId: 'files', size: 5, contentType: 'text/plain;charset=UTF-8', metadata: {} });
    expect(info.data).not.toHaveProperty('updatedAt');
    expect(await files.exists(path)).toEqual({ data: true, error: null });
    expect((await files.exists(`${ada.id}/none.txt`)).data).toBe(false);
  });

  it("size and media type limits are the bucket's, in Supabase's words (413, 415)", async () => {
    const limited = s.service.from('limited');
    const big = await limited.upload('big.png', Buffer.alloc(2000), { contentType: 'image/png' });
    expect(big.error).toMatchObject({ statusCode: '413', message: 'The object exceeded the maximum allowed size' });
    const bigForm = await limited.upload('big2.png', new Blob([Buffer.alloc(2000)], { type: 'image/png' }));
    expect(bigForm.error).toMatchObject({ statusCode: '413' });
    const jpeg = await limited.upload('a.jpg', Buffer.from('x'), { contentType: 'image/jpeg' });
    expect(jpeg.error).toMatchObject({ statusCode: '415', code: 'InvalidMimeType', message: 'mime type image/jpeg is not supported' });
    expect((await limited.upload('ok.png', Buffer.from('png'), { contentType: 'image/png' })).error).toBeNull();
    expect((await s.service.from('limited').list()).data?.map((e) => e.name)).toEqual(['ok.png']);
    expect((await s.service.from('nowhere').upload('a.txt', 'x')).error?.message).toBe('Bucket not found');
  });

  it('lists a folder with prefix, limit, offset, sortBy and search; folders have a null id', async () => {
    const files = s.service.from('files');
    for (const n of ['b.txt', 'a.txt', 'c.log', 'sub/d.txt']) expect((await files.upload(`listing/${n}`, n)).error).toBeNull();
    const all = await files.list('listing');
    expect(all.error).toBeNull();
    expect(all.data?.map((e) => [e.name, e.id === null])).toEqual([
      ['a.txt', false],
      ['b.txt', false],
      ['c.log', false],
      ['sub', true],
    ]);
    expect(all.data?.[0]).toMatchObject({ metadata: { size: 5, mimetype: 'text/plain;charset=UTF-8' }, created_at: expect.any(String) });
    const page = await files.list('listing', { limit: 2, offset: 1, sortBy: { column: 'name', order: 'desc' } });
    expect(page.data?.map((e) => e.name)).toEqual(['c.log', 'b.txt']);
    expect((await files.list('listing', { search: 'LOG' })).data?.map((e) => e.name)).toEqual(['c.log']);
    const byTime = await files.list('listing', { sortBy: { column: 'created_at', order: 'asc' } });
    expect(byTime.data?.map((e) => e.name)).toEqual(['sub', 'b.txt', 'a.txt', 'c.log']);
  });

  it('listV2: flat under a prefix, or a folder with its sub-folders, paged by a cursor in any order', async () => {
    const files = s.service.from('files');
    for (const n of ['zz', 'bb', 'xx', 'aa', 'cc']) expect((await files.upload(`v2/f-${n}`, n)).error).toBeNull();
    expect((await files.upload('v2/deep/inner.txt', 'x')).error).toBeNull();
    const flat = await files.listV2({ prefix: 'v2/f-' });
    expect(flat.error).toBeNull();
    expect(flat.data).toMatchObject({ hasNext: false, folders: [] });
    expect(flat.data?.objects.map((o) => o.name)).toEqual(['v2/f-aa', 'v2/f-bb', 'v2/f-cc', 'v2/f-xx', 'v2/f-zz']);
    const folder = await files.listV2({ prefix: 'v2/', with_delimiter: true, limit: 100 });
    expect(folder.data?.folders).toEqual([{ key: 'v2/deep', name: 'v2/deep/' }]);
    expect(folder.data?.objects).toHaveLength(5);
    for (const [sortBy, expected] of [
      [{ column: 'name', order: 'desc' }, ['zz', 'xx', 'cc', 'bb', 'aa']],
      [{ column: 'created_at', order: 'asc' }, ['zz', 'bb', 'xx', 'aa', 'cc']],
    ] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 1; ; pages++) {
        const res = await files.listV2({ prefix: 'v2/f-', limit: 2, sortBy, ...(cursor ? { cursor } : {}) });
        expect(res.error).toBeNull();
        seen.push(...(res.data?.objects.map((o) => o.name.slice('v2/f-'.length)) ?? []));
        if (!res.data?.hasNext) {
          expect(pages).toBe(3);
          break;
        }
        cursor = res.data.nextCursor;
      }
      expect(seen).toEqual(expected);
    }
    expect((await files.listV2({ cursor: 'not-ours' })).error).toMatchObject({ status: 400 });
  });

  it('removes by prefixes (the deleted ones back), moves and copies within a bucket', async () => {
    const files = ada.client.from('files');
    const dir = ada.id;
    for (const n of ['m.txt', 'r1.txt', 'r2.txt']) expect((await files.upload(`${dir}/${n}`, n)).error).toBeNull();
    expect(await files.move(`${dir}/m.txt`, `${dir}/moved.txt`)).toEqual({ data: { message: 'Successfully moved' }, error: null });
    expect(await text((await files.download(`${dir}/moved.txt`)).data)).toBe('m.txt');
    expect((await files.download(`${dir}/m.txt`)).error).toMatchObject({ status: 404 });
    expect(await files.copy(`${dir}/moved.txt`, `${dir}/copy.txt`)).toEqual({ data: { path: `files/${dir}/copy.txt` }, error: null });
    expect(await text((await files.download(`${dir}/copy.txt`)).data)).toBe('m.txt');
    expect((await files.move(`${dir}/none.txt`, `${dir}/x.txt`)).error).toMatchObject({ status: 404 });
    // To another bucket: under its limits (415 here, nothing moved), then into one that takes it.
    const refused = await s.service.from('files').move(`${dir}/copy.txt`, 'x.txt', { destinationBucket: 'limited' });
    expect(refused.error).toMatchObject({ status: 415 });
    expect(await text((await files.download(`${dir}/copy.txt`)).data)).toBe('m.txt');
    await s.service.createBucket('other');
    expect((await s.service.from('files').copy(`${dir}/copy.txt`, 'c.txt', { destinationBucket: 'other' })).data).toEqual({
      path: 'other/c.txt',
    });
    expect((await s.service.from('files').move(`${dir}/copy.txt`, 'm.txt', { destinationBucket: 'other' })).error).toBeNull();
    expect((await files.exists(`${dir}/copy.txt`)).data).toBe(false);
    expect(await text((await s.service.from('other').download('m.txt')).data)).toBe('m.txt');
    expect(await text((await s.service.from('other').download('c.txt')).data)).toBe('m.txt');
    // Across buckets the UPDATE policy still decides: ada's policy keeps her objects in her folder.
    expect((await files.move(`${dir}/moved.txt`, 'elsewhere.txt', { destinationBucket: 'other' })).error).toMatchObject({ status: 403 });
    expect(await text((await files.download(`${dir}/moved.txt`)).data)).toBe('m.txt');

    const removed = await files.remove([`${dir}/r1.txt`, `${dir}/r2.txt`, `${dir}/none.txt`]);
    expect(removed.error).toBeNull();
    expect(removed.data?.map((o) => o.name).sort()).toEqual([`${dir}/r1.txt`, `${dir}/r2.txt`]);
    expect(removed.data?.[0]).toMatchObject({ id: expect.any(String), bucket_id: 'files' });
    expect((await files.exists(`${dir}/r1.txt`)).data).toBe(false);
  });
});
