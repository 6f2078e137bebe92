import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlinthClient } from '../../src/index.js';
import { clientOf, type E2eServer, email, startServer, tracker } from './server.js';

// client.storage against the real server and database: each user's files under an owner
// policy written in SQL, every kind of body, signed and public URLs, and a refresh when the
// access token has expired.

let s: E2eServer;
const { track, disposeAll } = tracker();
let alice: PlinthClient;
let bob: PlinthClient;
let aliceId: string;

async function user(tag: string) {
  const c = track(clientOf(s, { auth: { autoRefreshToken: false } }));
  const { data, error } = await c.auth.signUp({ email: email(tag), password: 'correct horse battery' });
  expect(error).toBeNull();
  return { c, id: data!.user.id };
}

beforeAll(async () => {
  s = await startServer();
  const service = s.t.as.service;
  for (const payload of [{ name: 'files' }, { name: 'site', public: true }]) {
    const res = await s.t.app.inject({ method: 'POST', url: '/api/v1/storage/buckets', headers: service, payload });
    expect(res.statusCode, res.body).toBe(201);
  }
  const res = await s.t.sql(`create policy "own folder" on storage.objects for all to authenticated
    using (bucket_id = 'files' and (storage.foldername(name))[1] = auth.uid()::text)
    with check (bucket_id = 'files' and (storage.foldername(name))[1] = auth.uid()::text);`);
  expect(res.statusCode, res.body).toBe(200);
  ({ c: alice, id: aliceId } = await user('alice'));
  ({ c: bob } = await user('bob'));
});
afterAll(async () => {
  disposeAll();
  await s?.t.stop();
});

const text = async (blob: Blob | null) => (blob ? await blob.text() : null);

describe('client.storage', () => {
  it('uploads a Blob, File, ArrayBuffer, typed array, string and ReadableStream, and downloads each as a Blob', async () => {
    const files = alice.storage.from('files');
    const bodies: Array<[string, Parameters<typeof files.upload>[1], string]> = [
      ['blob.txt', new Blob(['from a blob'], { type: 'text/plain' }), 'text/plain'],
      ['file.json', new File(['{"a":1}'], 'file.json', { type: 'application/json' }), 'application/json'],
      ['buffer.bin', new TextEncoder().encode('from an array buffer').buffer as ArrayBuffer, 'application/octet-stream'],
      ['typed.bin', new TextEncoder().encode('from a typed array'), 'application/octet-stream'],
      ['string.txt', 'from a string', 'application/octet-stream'],
      [
        'stream.txt',
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('from a '));
            controller.enqueue(new TextEncoder().encode('stream'));
            controller.close();
          },
        }),
        'application/octet-stream',
      ],
    ];
    for (const [name, body, type] of bodies) {
      const up = await files.upload(`${aliceId}/${name}`, body);
      expect(up.error, name).toBeNull();
      expect(up.data).toMatchObject({ bucket: 'files', name: `${aliceId}/${name}`, mime_type: type });
    }
    const down = await files.download(`${aliceId}/blob.txt`);
    expect(down.error).toBeNull();
    expect(down.data?.type).toBe('text/plain');
    expect(await text(down.data)).toBe('from a blob');
    expect(await text((await files.download(`${aliceId}/stream.txt`)).data)).toBe('from a stream');
    expect(await text((await files.download(`${aliceId}/typed.bin`)).data)).toBe('from a typed array');
    expect(await text((await files.download(`${aliceId}/buffer.bin`)).data)).toBe('from an array buffer');
    const typed = await files.upload(`${aliceId}/typed.png`, 'png', { contentType: 'image/png' });
    expect(typed.data?.mime_type).toBe('image/png');
  });

  it('answers {data, error} with the server codes: policies refuse (rls_violation), hide (not_found), names conflict', async () => {
    const files = bob.storage.from('files');
    const refused = await files.upload(`${aliceId}/mine-now.txt`, 'x');
    expect(refused).toMatchObject({ data: null, error: { code: 'rls_violation', status: 403 } });
    expect((await files.download(`${aliceId}/blob.txt`)).error).toMatchObject({ code: 'not_found', status: 404 });
    const again = await alice.storage.from('files').upload(`${aliceId}/blob.txt`, 'again');
    expect(again.error?.code).toBe('object_exists');
    const upsert = await alice.storage
      .from('files')
      .upload(`${aliceId}/blob.txt`, new Blob(['replaced'], { type: 'text/plain' }), { upsert: true });
    expect(upsert.error).toBeNull();
    expect(await text((await alice.storage.from('files').download(`${aliceId}/blob.txt`)).data)).toBe('replaced');
    const anon = track(clientOf(s));
    expect((await anon.storage.from('files').list(aliceId)).data).toEqual([]);
    for (const bad of ['../x', `${aliceId}/./x`, `/${aliceId}/x`]) {
      expect((await alice.storage.from('files').upload(bad, 'x')).error?.code, bad).toBe('invalid_object_name');
    }
  });

  it('lists, moves, copies and removes', async () => {
    const files = alice.storage.from('files');
    const list = await files.list(aliceId, { search: 'B' });
    expect(list.error).toBeNull();
    expect(list.data?.map((e) => e.name)).toEqual(['blob.txt', 'buffer.bin', 'typed.bin']);
    expect((await files.list(aliceId, { limit: 2, offset: 1 })).data?.map((e) => e.name)).toEqual(['buffer.bin', 'file.json']);
    expect((await files.list('', {})).data?.map((e) => [e.name, e.id])).toEqual([[aliceId, null]]);
    const moved = await files.move(`${aliceId}/string.txt`, `${aliceId}/moved/string.txt`);
    expect(moved.data).toMatchObject({ name: `${aliceId}/moved/string.txt`, owner: aliceId });
    const copied = await files.copy(`${aliceId}/moved/string.txt`, `${aliceId}/copy.txt`);
    expect(copied.data?.name).toBe(`${aliceId}/copy.txt`);
    const removed = await files.remove([`${aliceId}/copy.txt`, `${aliceId}/moved/string.txt`, `${aliceId}/nothing.txt`]);
    expect(removed.data?.map((o) => o.name).sort()).toEqual([`${aliceId}/copy.txt`, `${aliceId}/moved/string.txt`]);
    expect((await files.list(`${aliceId}/moved`)).data).toEqual([]);
  });

  it('signed URLs read without headers; public URLs need no request', async () => {
    const signed = await alice.storage.from('files').createSignedUrl(`${aliceId}/file.json`, 60, { download: 'data.json' });
    expect(signed.error).toBeNull();
    const res = await fetch(signed.data!.signedUrl.replace('http://localhost:8080', s.url));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"a":1}');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="data.json"/);
    expect((await bob.storage.from('files').createSignedUrl(`${aliceId}/file.json`, 60)).error?.code).toBe('not_found');

    const admin = track(clientOf({ ...s, publicKey: s.t.keys.secretKey }));
    expect((await admin.storage.from('site').upload('hello world.txt', 'public bytes')).error).toBeNull();
    const { data } = alice.storage.from('site').getPublicUrl('hello world.txt');
    expect(data.publicUrl).toBe(`${s.url}/api/v1/storage/public/site/hello%20world.txt`);
    expect(await (await fetch(data.publicUrl)).text()).toBe('public bytes');
  });

  it('bucket management works with the secret key and is refused with the public key', async () => {
    const admin = track(clientOf({ ...s, publicKey: s.t.keys.secretKey }));
    expect((await admin.storage.createBucket('made-by-sdk', { file_size_limit: 1024 })).data).toMatchObject({
      name: 'made-by-sdk',
      file_size_limit: 1024,
    });
    expect((await admin.storage.listBuckets()).data?.map((b) => b.name)).toContain('made-by-sdk');
    expect((await admin.storage.updateBucket('made-by-sdk', { public: true })).data?.public).toBe(true);
    expect((await admin.storage.deleteBucket('made-by-sdk')).error).toBeNull();
    expect((await alice.storage.listBuckets()).error?.code).toBe('forbidden');
  });

  it('an expired access token is refreshed once and the call retried, as for the database', async () => {
    const before = (await alice.auth.getSession()).data?.session?.access_token;
    s.t.clock.advance(2 * 3600_000);
    const down = await alice.storage.from('files').download(`${aliceId}/file.json`);
    expect(down.error).toBeNull();
    expect(await text(down.data)).toBe('{"a":1}');
    const up = await alice.storage.from('files').upload(`${aliceId}/after-refresh.txt`, new Blob(['ok']));
    expect(up.error).toBeNull();
    expect((await alice.auth.getSession()).data?.session?.access_token).not.toBe(before);
  });
});
