import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SupabaseStorageServer, supabaseStorageServer } from '../../../test/supabase-storage.js';

// Image transforms (storage's transform.ts) through Supabase's /render/image/{authenticated,public,sign}
// with storage-js's own transform options, and through /api/v1/storage's reads: the read's own
// access rule first, then the pixels; bounds on sizes and inputs.

type User = Awaited<ReturnType<SupabaseStorageServer['user']>>;

let s: SupabaseStorageServer;
let ada: User;
let bob: User;
let photo: Buffer;

const size = async (res: Response) => {
  const m = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  return { width: m.width, height: m.height, format: m.format };
};

/** A PNG that claims 10000 × 6000 pixels (its header and a token of data: the bound is checked before decoding). */
function hugePng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(10000, 0);
  ihdr.writeUInt32BE(6000, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(10))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

beforeAll(async () => {
  s = await supabaseStorageServer();
  [ada, bob] = [await s.user(), await s.user()];
  await s.sqlOk(`create policy "own folder" on storage.objects for all to authenticated
    using ((storage.foldername(name))[1] = auth.uid()::text) with check ((storage.foldername(name))[1] = auth.uid()::text);`);
  expect((await s.service.createBucket('photos', { public: false })).error).toBeNull();
  expect((await s.service.createBucket('site', { public: true })).error).toBeNull();
  photo = await sharp({ create: { width: 2000, height: 1000, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .jpeg()
    .toBuffer();
  const up = (c: typeof ada.client, bucket: string, path: string, body: Buffer | string, contentType: string) =>
    c.from(bucket).upload(path, new Blob([new Uint8Array(Buffer.from(body))], { type: contentType }), { contentType });
  expect((await up(ada.client, 'photos', `${ada.id}/big.jpg`, photo, 'image/jpeg')).error).toBeNull();
  expect((await up(ada.client, 'photos', `${ada.id}/notes.txt`, 'plain text', 'text/plain')).error).toBeNull();
  expect((await up(ada.client, 'photos', `${ada.id}/fake.png`, 'not a png at all', 'image/png')).error).toBeNull();
  expect((await up(ada.client, 'photos', `${ada.id}/huge.png`, hugePng(), 'image/png')).error).toBeNull();
  expect((await up(s.service, 'site', 'hero.jpg', photo, 'image/jpeg')).error).toBeNull();
});
afterAll(async () => {
  await s?.stop();
});

describe('/storage/v1/render/image', () => {
  it('authenticated: storage-js download with transform resizes (cover, contain, fill) as the reader may read', async () => {
    for (const [resize, expected] of [
      ['cover', { width: 200, height: 200 }],
      ['contain', { width: 200, height: 200 }],
      ['fill', { width: 200, height: 200 }],
    ] as const) {
      const got = await ada.client.from('photos').download(`${ada.id}/big.jpg`, { transform: { width: 200, height: 200, resize } });
      expect(got.error, resize).toBeNull();
      const m = await sharp(Buffer.from(await (got.data as Blob).arrayBuffer())).metadata();
      expect({ width: m.width, height: m.height }, resize).toEqual(expected);
    }
    // Width alone keeps the ratio.
    const res = await fetch(`${s.url}/render/image/authenticated/photos/${ada.id}/big.jpg?width=300&format=origin`, {
      headers: { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(await size(res)).toEqual({ width: 300, height: 150, format: 'jpeg' });

    // Supabase's description of what was done, as storage-js's own tests read it.
    const described = await fetch(`${s.url}/render/image/authenticated/photos/${ada.id}/big.jpg?width=200&height=200&quality=60`, {
      headers: { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` },
    });
    expect(described.headers.get('x-transformations')).toBe('height:200,width:200,resizing_type:fill,quality:60');

    const hidden = await bob.client.from('photos').download(`${ada.id}/big.jpg`, { transform: { width: 100 } });
    expect(hidden.error).toMatchObject({ status: 404 });
  });

  it('format: WebP when the client accepts it (Vary: Accept), AVIF when asked; the ETag revalidates to 304', async () => {
    const headers = { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` };
    const url = `${s.url}/render/image/authenticated/photos/${ada.id}/big.jpg?width=200&quality=60`;
    const webp = await fetch(url, { headers: { ...headers, accept: 'image/avif,image/webp,*/*' } });
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(webp.headers.get('vary')).toBe('Accept');
    expect(await size(webp)).toMatchObject({ width: 200, format: 'webp' });
    const avif = await fetch(`${url}&format=avif`, { headers });
    expect(avif.headers.get('content-type')).toBe('image/avif');
    expect((await size(avif)).format).toBe('heif');
    const etag = avif.headers.get('etag') as string;
    const again = await fetch(`${url}&format=avif`, { headers: { ...headers, 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('public: getPublicUrl with transform reads a public bucket only', async () => {
    const { data } = s.anon.from('site').getPublicUrl('hero.jpg', { transform: { width: 100, height: 100 } });
    expect(data.publicUrl).toContain('/render/image/public/site/hero.jpg');
    const res = await fetch(data.publicUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, no-cache');
    expect(await size(res)).toMatchObject({ width: 100, height: 100 });
    const priv = await fetch(`${s.url}/render/image/public/photos/${ada.id}/big.jpg?width=100`);
    expect(priv.status).toBe(404);
  });

  it('signed: createSignedUrl with transform binds it in the token; the query cannot change it', async () => {
    const signed = await ada.client.from('photos').createSignedUrl(`${ada.id}/big.jpg`, 60, { transform: { width: 120, height: 60 } });
    expect(signed.error).toBeNull();
    const url = signed.data?.signedUrl as string;
    expect(url).toContain('/render/image/sign/photos/');
    expect(await size(await fetch(url))).toMatchObject({ width: 120, height: 60 });
    expect(await size(await fetch(`${url}&width=2000&height=1000`))).toMatchObject({ width: 120, height: 60 });
    // Without transform the URL reads the original.
    const plain = await ada.client.from('photos').createSignedUrl(`${ada.id}/big.jpg`, 60);
    expect(await size(await fetch(plain.data?.signedUrl as string))).toMatchObject({ width: 2000, height: 1000 });
  });

  it('the bytes, not the stored type, decide: a photo uploaded as text/plain is transformed', async () => {
    expect((await ada.client.from('photos').upload(`${ada.id}/as-text`, new Uint8Array(photo))).error).toBeNull();
    const got = await ada.client.from('photos').download(`${ada.id}/as-text`, { transform: { width: 100, height: 100 } });
    expect(got.error).toBeNull();
    expect(got.data?.type).toBe('image/jpeg');
  });

  it('bounds: not an image is 415, a side over 2500 is 400, over 50 megapixels is 413', async () => {
    const headers = { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` };
    const render = (path: string, q: string) => fetch(`${s.url}/render/image/authenticated/photos/${ada.id}/${path}?${q}`, { headers });
    const text = await render('notes.txt', 'width=100');
    expect(text.status).toBe(415);
    const fake = await render('fake.png', 'width=100');
    expect(fake.status).toBe(415);
    expect((await render('big.jpg', 'width=2501')).status).toBe(400);
    expect((await render('big.jpg', 'width=100&resize=stretch')).status).toBe(400);
    const huge = await render('huge.png', 'width=100');
    expect(huge.status).toBe(413);
  });
});

describe('/api/v1/storage reads take the same transform options', () => {
  it('a user’s read, a public read and a signed read; no option is the original, byte for byte', async () => {
    const headers = { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` };
    const api = new URL(s.url).origin;
    const mine = await fetch(`${api}/api/v1/storage/object/photos/${ada.id}/big.jpg?width=50&format=webp`, { headers });
    expect(mine.status).toBe(200);
    expect(await size(mine)).toEqual({ width: 50, height: 25, format: 'webp' });
    const original = await fetch(`${api}/api/v1/storage/object/photos/${ada.id}/big.jpg`, { headers });
    expect(Buffer.from(await original.arrayBuffer()).equals(photo)).toBe(true);
    const pub = await fetch(`${api}/api/v1/storage/public/site/hero.jpg?height=40`);
    expect(await size(pub)).toMatchObject({ width: 80, height: 40 });
    const signed = await fetch(`${api}/api/v1/storage/sign/photos/${ada.id}/big.jpg`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ expires_in: 60 }),
    });
    const link = new URL(((await signed.json()) as { signed_url: string }).signed_url);
    const url = `${api}${link.pathname}${link.search}`;
    expect(await size(await fetch(`${url}&width=64`))).toMatchObject({ width: 64, height: 32 });
  });
});

describe('stored results (image-cache.ts)', () => {
  const headers = () => ({ apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` });
  const get = (path: string, query: string) =>
    fetch(`${new URL(s.url).origin}/api/v1/storage/object/photos/${ada.id}/${path}?${query}`, { headers: headers() });
  const variantsOf = async (path: string) =>
    (
      await s.db.query<{ key: string }>(
        `select v.key from storage.variants v join storage.objects o on o.version = v.version where o.bucket_id = 'photos' and o.name = $1`,
        [`${ada.id}/${path}`],
      )
    ).rows.map((r) => r.key);
  const upload = (path: string, body: Buffer) =>
    ada.client
      .from('photos')
      .upload(`${ada.id}/${path}`, new Blob([new Uint8Array(body)], { type: 'image/jpeg' }), { contentType: 'image/jpeg', upsert: true });

  it('a transform asked again is read back, not made again; a replaced or deleted object takes its results with it', async () => {
    expect((await upload('kept.jpg', photo)).error).toBeNull();
    const first = await get('kept.jpg', 'width=120&format=webp');
    expect(first.headers.get('x-transform-cache')).toBe('miss');
    const made = Buffer.from(await first.arrayBuffer());
    // Kept after the answer went out (named, then written): ask until it is read back.
    let again = await get('kept.jpg', 'width=120&format=webp');
    await expect
      .poll(async () => {
        again = await get('kept.jpg', 'width=120&format=webp');
        return again.headers.get('x-transform-cache');
      })
      .toBe('hit');
    expect(await variantsOf('kept.jpg')).toHaveLength(1);
    expect(again.headers.get('content-type')).toBe('image/webp');
    expect(Buffer.from(await again.arrayBuffer()).equals(made)).toBe(true);
    // Other options are another result.
    expect((await get('kept.jpg', 'width=121&format=webp')).headers.get('x-transform-cache')).toBe('miss');
    await expect.poll(() => variantsOf('kept.jpg')).toHaveLength(2);
    const keys = await variantsOf('kept.jpg');
    for (const key of keys) await expect.poll(() => s.storage.backend.get(key)).not.toBeNull();

    // A new upload under the name: the old results go with the old bytes, the new picture is made afresh.
    const red = await sharp({ create: { width: 300, height: 300, channels: 3, background: { r: 0, g: 0, b: 250 } } })
      .jpeg()
      .toBuffer();
    expect((await upload('kept.jpg', red)).error).toBeNull();
    await expect
      .poll(async () => (await s.db.query('select 1 from storage.variants where key = any($1::text[])', [keys])).rows.length)
      .toBe(0);
    for (const key of keys) await expect.poll(() => s.storage.backend.get(key)).toBeNull();
    const fresh = await get('kept.jpg', 'width=120&format=webp');
    expect(fresh.headers.get('x-transform-cache')).toBe('miss');
    expect(await size(fresh)).toEqual({ width: 120, height: 120, format: 'webp' });

    // Deleted: its results go too.
    await expect.poll(() => variantsOf('kept.jpg')).toHaveLength(1);
    const [last] = await variantsOf('kept.jpg');
    // Named first, then written: wait for its bytes, else the delete's drain may come between the
    // two and leave the bytes to the orphan sweep (image-cache.ts), which this test does not run.
    await expect.poll(() => s.storage.backend.get(last)).not.toBeNull();
    expect((await ada.client.from('photos').remove([`${ada.id}/kept.jpg`])).error).toBeNull();
    await expect.poll(async () => (await s.db.query('select 1 from storage.variants where key = $1', [last])).rows.length).toBe(0);
    await expect.poll(() => s.storage.backend.get(last)).toBeNull();
  });

  it('at most 16 results are kept per object; more are served, not kept', async () => {
    expect((await upload('many.jpg', photo)).error).toBeNull();
    for (let w = 10; w < 30; w++) {
      const res = await get('many.jpg', `width=${w}`);
      expect(res.status).toBe(200);
      expect((await size(res)).width).toBe(w);
    }
    // Each kept one is written after its answer: wait until the writes settle at the cap.
    await expect.poll(() => variantsOf('many.jpg')).toHaveLength(16);
    const over = await get('many.jpg', 'width=29');
    expect(over.headers.get('x-transform-cache')).toBe('miss');
  });

  it('a reader who may not read the object gets no stored result either', async () => {
    expect((await upload('secret.jpg', photo)).error).toBeNull();
    expect((await get('secret.jpg', 'width=64')).status).toBe(200);
    await expect.poll(() => variantsOf('secret.jpg')).toHaveLength(1);
    const res = await fetch(`${new URL(s.url).origin}/api/v1/storage/object/photos/${ada.id}/secret.jpg?width=64`, {
      headers: { apikey: s.keys.publicKey, authorization: `Bearer ${bob.token}` },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-transform-cache')).toBeNull();
  });
});

describe('transforms turned off (STORAGE_IMAGE_TRANSFORMS=false)', () => {
  it('a transform is refused with a clear code on both faces; the plain read still serves the original', async () => {
    const off = await supabaseStorageServer({ STORAGE_IMAGE_TRANSFORMS: 'false' });
    try {
      expect((await off.service.createBucket('pics', { public: true })).error).toBeNull();
      expect(
        (await off.service.from('pics').upload('a.jpg', new Blob([new Uint8Array(photo)]), { contentType: 'image/jpeg' })).error,
      ).toBeNull();
      const { data, error } = await off.service.from('pics').download('a.jpg', { transform: { width: 100 } });
      expect(data).toBeNull();
      expect(error).toMatchObject({ status: 400 });
      const raw = await fetch(`${off.url}/render/image/public/pics/a.jpg?width=100`);
      expect(raw.status).toBe(400);
      expect(await raw.json()).toMatchObject({ statusCode: '400', code: 'FeatureNotEnabled' });
      const api = await fetch(`${new URL(off.url).origin}/api/v1/storage/public/pics/a.jpg?width=100`);
      expect(api.status).toBe(400);
      expect(await api.json()).toMatchObject({ code: 'transforms_disabled' });
      const plain = await off.service.from('pics').download('a.jpg');
      expect(Buffer.from(await (plain.data as Blob).arrayBuffer()).equals(photo)).toBe(true);
    } finally {
      await off.stop();
    }
  });
});
