import fc from 'fast-check';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SupabaseStorageServer, supabaseStorageServer } from '../../../test/supabase-storage.js';

// /storage/v1's signed URLs, signed upload URLs and public buckets (storage's links.ts rules),
// and what an attacker tries through the face: another user's object, a URL for another path,
// an upload token as a download token, `..` in a path.

let s: SupabaseStorageServer;
let ada: Awaited<ReturnType<SupabaseStorageServer['user']>>;
let bob: Awaited<ReturnType<SupabaseStorageServer['user']>>;

beforeAll(async () => {
  s = await supabaseStorageServer();
  [ada, bob] = [await s.user(), await s.user()];
  await s.sqlOk(`create policy "own folder" on storage.objects for all to authenticated
    using ((storage.foldername(name))[1] = auth.uid()::text) with check ((storage.foldername(name))[1] = auth.uid()::text);`);
  expect((await s.service.createBucket('private', { public: false })).error).toBeNull();
  expect((await s.service.createBucket('site', { public: true })).error).toBeNull();
  expect((await ada.client.from('private').upload(`${ada.id}/secret.txt`, 'ada only')).error).toBeNull();
  expect((await ada.client.from('private').upload(`${ada.id}/other.txt`, 'also ada')).error).toBeNull();
  expect((await s.service.from('site').upload('index.html', '<h1>hi</h1>', { contentType: 'text/html' })).error).toBeNull();
});
afterAll(async () => {
  await s?.stop();
});

describe('signed URLs', () => {
  it('whoever may read an object signs it; the URL reads it without headers until it expires', async () => {
    const signed = await ada.client.from('private').createSignedUrl(`${ada.id}/secret.txt`, 60, { download: 'mine.txt' });
    expect(signed.error).toBeNull();
    const url = signed.data?.signedUrl as string;
    expect(url.startsWith(`${s.url}/object/sign/private/${ada.id}/secret.txt?token=`)).toBe(true);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ada only');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="mine.txt"/);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');

    s.clock.advance(61_000);
    const late = await fetch(url);
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ statusCode: '400', code: 'InvalidSignature' });
  });

  it('many at once: each path its URL or its own error, in order', async () => {
    const many = await ada.client.from('private').createSignedUrls([`${ada.id}/secret.txt`, `${ada.id}/none.txt`, `${bob.id}/x.txt`], 60);
    expect(many.error).toBeNull();
    expect(many.data?.map((d) => [d.path, d.error === null, d.signedUrl !== null])).toEqual([
      [`${ada.id}/secret.txt`, true, true],
      [`${ada.id}/none.txt`, false, false],
      [`${bob.id}/x.txt`, false, false],
    ]);
    expect(await (await fetch(many.data?.[0].signedUrl as string)).text()).toBe('ada only');
  });

  it('a token is bound to its path and object: not for another path, and a replaced object ends it', async () => {
    const signed = await ada.client.from('private').createSignedUrl(`${ada.id}/secret.txt`, 600);
    const token = new URL(signed.data?.signedUrl as string).searchParams.get('token');
    const elsewhere = await fetch(`${s.url}/object/sign/private/${ada.id}/other.txt?token=${token}`);
    expect(elsewhere.status).toBe(400);
    expect((await ada.client.from('private').upload(`${ada.id}/secret.txt`, 'replaced', { upsert: true })).error).toBeNull();
    const gone = await fetch(signed.data?.signedUrl as string);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ statusCode: '404', code: 'NoSuchKey' });
  });

  it('cannot be made for an object the caller cannot see, nor for longer than 7 days', async () => {
    const hidden = await bob.client.from('private').createSignedUrl(`${ada.id}/secret.txt`, 60);
    expect(hidden.error).toMatchObject({ status: 404, code: 'NoSuchKey' });
    expect((await s.anon.from('private').createSignedUrl(`${ada.id}/secret.txt`, 60)).error).toMatchObject({ status: 404 });
    expect((await ada.client.from('private').createSignedUrl(`${ada.id}/secret.txt`, 8 * 86400)).error).toMatchObject({ status: 400 });
  });
});

describe('signed upload URLs', () => {
  it('upload once to one path without a session, as the signer; a second upload is 409', async () => {
    const path = `${ada.id}/via-url.txt`;
    const signed = await ada.client.from('private').createSignedUploadUrl(path);
    expect(signed.error).toBeNull();
    expect(signed.data?.signedUrl.startsWith(`${s.url}/object/upload/sign/private/${path}?token=`)).toBe(true);
    const token = signed.data?.token as string;
    // No key at all: the token is the permission.
    const up = await s.anon.from('private').uploadToSignedUrl(path, token, Buffer.from('signed bytes'));
    expect(up).toEqual({ data: { path, fullPath: `private/${path}` }, error: null });
    expect(await (await ada.client.from('private').download(path)).data?.text()).toBe('signed bytes');
    expect((await s.sqlOk(`select owner from storage.objects where name = '${path}'`))[0].rows[0].owner).toBe(ada.id);

    const again = await s.anon.from('private').uploadToSignedUrl(path, token, Buffer.from('again'));
    expect(again.error).toMatchObject({ statusCode: '409', message: 'The resource already exists' });
    // Elsewhere with the same token: refused.
    const other = await s.anon.from('private').uploadToSignedUrl(`${ada.id}/else.txt`, token, Buffer.from('x'));
    expect(other.error).toMatchObject({ status: 400, code: 'InvalidSignature' });
  });

  it('with upsert it replaces once; a second use is refused', async () => {
    const path = `${ada.id}/secret.txt`;
    const signed = await ada.client.from('private').createSignedUploadUrl(path, { upsert: true });
    expect(signed.error).toBeNull();
    const token = signed.data?.token as string;
    expect((await s.anon.from('private').uploadToSignedUrl(path, token, Buffer.from('new'))).error).toBeNull();
    expect(await (await ada.client.from('private').download(path)).data?.text()).toBe('new');
    const again = await s.anon.from('private').uploadToSignedUrl(path, token, Buffer.from('newer'));
    expect(again.error).toMatchObject({ status: 400, code: 'InvalidSignature' });
    expect(await (await ada.client.from('private').download(path)).data?.text()).toBe('new');
  });

  it('two uploads at once through one URL: exactly one goes through, over an object or into an empty name', async () => {
    for (const [path, existing] of [
      [`${ada.id}/race-over.txt`, true],
      [`${ada.id}/race-new.txt`, false],
    ] as const) {
      if (existing) expect((await ada.client.from('private').upload(path, 'before')).error).toBeNull();
      const token = (await ada.client.from('private').createSignedUploadUrl(path, { upsert: true })).data?.token as string;
      const bodies = [Buffer.alloc(1 << 20, 'a'), Buffer.alloc(1 << 20, 'b')];
      const results = await Promise.all(bodies.map((b) => s.anon.from('private').uploadToSignedUrl(path, token, b)));
      const won = results.map((r) => r.error === null);
      expect(won.filter(Boolean), path).toHaveLength(1);
      expect(results.find((r) => r.error)?.error).toMatchObject({ statusCode: expect.stringMatching(/^(400|409)$/) });
      const kept = Buffer.from(await ((await ada.client.from('private').download(path)).data as Blob).arrayBuffer());
      expect(kept.equals(bodies[won.indexOf(true)]), path).toBe(true);
    }
  });

  it('is only made for who may upload there; an upload token is no download token, nor the reverse', async () => {
    expect((await bob.client.from('private').createSignedUploadUrl(`${ada.id}/intrude.txt`)).error).toMatchObject({ status: 403 });
    const up = await ada.client.from('private').createSignedUploadUrl(`${ada.id}/other.txt`, { upsert: true });
    const upToken = up.data?.token as string;
    expect((await fetch(`${s.url}/object/sign/private/${ada.id}/other.txt?token=${upToken}`)).status).toBe(400);
    const read = await ada.client.from('private').createSignedUrl(`${ada.id}/other.txt`, 60);
    const readToken = new URL(read.data?.signedUrl as string).searchParams.get('token') as string;
    const misuse = await s.anon.from('private').uploadToSignedUrl(`${ada.id}/other.txt`, readToken, Buffer.from('overwrite'));
    expect(misuse.error).toMatchObject({ status: 400 });
    expect(await (await ada.client.from('private').download(`${ada.id}/other.txt`)).data?.text()).toBe('also ada');
  });
});

describe('browsers', () => {
  it("a page's raw upload may send storage-js's headers (cache-control, x-metadata, x-upsert)", async () => {
    const preflight = await s.app.inject({
      method: 'OPTIONS',
      url: `/storage/v1/object/private/${ada.id}/page.txt`,
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'apikey, authorization, cache-control, content-type, x-metadata, x-upsert',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    const allowed = String(preflight.headers['access-control-allow-headers'])
      .split(',')
      .map((h) => h.trim());
    for (const h of ['apikey', 'authorization', 'cache-control', 'content-type', 'x-metadata', 'x-upsert']) expect(allowed).toContain(h);
  });
});

describe('public buckets and attackers', () => {
  it('a public bucket is read without a key at getPublicUrl; a private one is not', async () => {
    const url = s.anon.from('site').getPublicUrl('index.html').data.publicUrl;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<h1>hi</h1>');
    expect(res.headers.get('cache-control')).toBe('public, no-cache');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const info = await fetch(`${s.url}/object/info/public/site/index.html`);
    expect(await info.json()).toMatchObject({ name: 'index.html', bucket_id: 'site', content_type: 'text/html' });
    expect((await fetch(s.anon.from('private').getPublicUrl(`${ada.id}/other.txt`).data.publicUrl)).status).toBe(404);
  });

  it("another user's private object: hidden to download, info, list, move and remove (404), refused to overwrite", async () => {
    const bobs = bob.client.from('private');
    const path = `${ada.id}/other.txt`;
    expect((await bobs.download(path)).error).toMatchObject({ status: 404 });
    expect((await bobs.info(path)).error).toMatchObject({ status: 404, code: 'NoSuchKey' });
    expect((await bobs.exists(path)).data).toBe(false);
    expect((await bobs.list(ada.id)).data).toEqual([]);
    expect((await bobs.move(path, `${bob.id}/stolen.txt`)).error).toMatchObject({ status: 404 });
    expect((await bobs.copy(path, `${bob.id}/stolen.txt`)).error).toMatchObject({ status: 404 });
    expect((await bobs.remove([path])).data).toEqual([]);
    expect((await bobs.upload(path, 'mine now', { upsert: true })).error).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect((await s.anon.from('private').download(path)).error).toMatchObject({ status: 404 });
    expect(await (await ada.client.from('private').download(path)).data?.text()).toBe('also ada');
  });

  it('a path with .. or an empty folder is 400 InvalidKey, never another object', async () => {
    // Sent as written (fetch and inject would resolve the dots first, as browsers do).
    const raw = (method: string, path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const u = new URL(s.url);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            method,
            path: `/storage/v1/object/private/${path}`,
            headers: { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` },
          },
          (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(method === 'POST' ? 'x' : undefined);
      });
    for (const path of [`${ada.id}/../${bob.id}/x.txt`, `${ada.id}/%2e%2e/x.txt`, `${ada.id}//x.txt`, `../${ada.id}/other.txt`]) {
      const res = await raw('GET', path);
      expect(res.status, path).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ statusCode: '400', code: 'InvalidKey' });
      expect((await raw('POST', path)).status, path).toBe(400);
    }
    expect((await raw('GET', `${ada.id}/other.txt`)).body).toBe('also ada');
  });

  it('no path, however encoded, is a 500 on any object route', async () => {
    const headers = { apikey: s.keys.publicKey, authorization: `Bearer ${ada.token}` };
    const segment = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('..', '.', '', '%2e%2e', '%2F', '%00', '%', '%zz', '\\', 'é', '%C3%A9', '?', '#'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('object', 'object/authenticated', 'object/info', 'object/public', 'object/sign', 'object/upload/sign'),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE'),
        async (kind, segments, method) => {
          const url = `/storage/v1/${kind}/private/${segments.join('/')}`;
          const res = await s.app.inject({
            method: method as 'GET',
            url,
            headers,
            ...(method === 'POST' || method === 'PUT' ? { payload: 'x' } : {}),
          });
          expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(500);
        },
      ),
      { numRuns: 150 },
    );
  });
});
