import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageServer, storageServer } from '../../test/storage.js';

// Signed URLs (a token of their own kind, bound to bucket, name, expiry and the very object) and
// public buckets.

let s: StorageServer;
let alice: Record<string, string>;
let aliceToken: string;

beforeAll(async () => {
  s = await storageServer('disk');
  aliceToken = await s.mintToken(randomUUID());
  alice = s.as.user(aliceToken);
  await s.bucket('private');
  await s.bucket('site', { public: true });
  const res = await s.sql(`create policy "own files" on storage.objects for all to authenticated
    using (owner = auth.uid()) with check (owner = auth.uid());`);
  expect(res.statusCode, res.body).toBe(200);
  expect((await s.upload('private', 'photos/me %.png', 'png bytes', { ...alice, 'content-type': 'image/png' })).statusCode).toBe(400);
  expect((await s.upload('private', 'photos/me%20%25.png', 'png bytes', { ...alice, 'content-type': 'image/png' })).statusCode).toBe(201);
  expect((await s.upload('site', 'index.html', '<h1>hi</h1>', { ...s.as.service, 'content-type': 'text/html' })).statusCode).toBe(201);
});
afterAll(async () => {
  await s?.stop();
});

const sign = (path: string, who: Record<string, string>, expires_in = 60) =>
  s.app.inject({ method: 'POST', url: `/api/v1/storage/sign/private/${path}`, headers: who, payload: { expires_in } });
/** The path and query of a signed URL (the server is reached in-process). */
const local = (url: string) => url.replace('http://localhost:8080', '');

describe('signed URLs', () => {
  it('whoever may read an object signs it; the URL reads it without any header until it expires', async () => {
    const res = await sign('photos/me%20%25.png', alice);
    expect(res.statusCode, res.body).toBe(200);
    const url = res.json().signed_url as string;
    expect(url).toMatch(/^http:\/\/localhost:8080\/api\/v1\/storage\/sign\/private\/photos\/me%20%25\.png\?token=ey/);
    const got = await s.get(local(url));
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('png bytes');
    expect(got.headers['content-type']).toBe('image/png');
    // Revalidated each time: the object may be deleted or replaced before the URL expires.
    expect(got.headers['cache-control']).toBe('private, no-cache');
    expect((await s.app.inject({ method: 'HEAD', url: local(url) })).headers['content-length']).toBe('9');
    expect((await s.get(`${local(url)}&download=me.png`)).headers['content-disposition']).toMatch(/^attachment; filename="me.png"/);

    s.clock.advance(61_000);
    const late = await s.get(local(url));
    expect(late.statusCode).toBe(400);
    expect(late.json().code).toBe('token_invalid');
  });

  it('cannot be made for an object the caller cannot see (404), nor with a bad expiry', async () => {
    const bob = s.as.user(await s.mintToken(randomUUID()));
    expect((await sign('photos/me%20%25.png', bob)).statusCode).toBe(404);
    expect((await sign('photos/me%20%25.png', s.as.anon)).statusCode).toBe(404);
    expect((await sign('photos/me%20%25.png', alice, 0)).statusCode).toBe(400);
    expect((await sign('photos/me%20%25.png', alice, 8 * 86400)).statusCode).toBe(400);
    expect((await sign('photos/me%20%25.png', s.as.service)).statusCode).toBe(200);
  });

  it('is bound to its bucket and name: the token on another path is token_invalid', async () => {
    expect((await s.upload('private', 'other.txt', 'other', alice)).statusCode).toBe(201);
    const url = (await sign('photos/me%20%25.png', alice)).json().signed_url as string;
    const token = new URL(url).searchParams.get('token');
    const res = await s.get(`/api/v1/storage/sign/private/other.txt?token=${token}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('token_invalid');
    expect((await s.get(`/api/v1/storage/sign/private/other.txt?token=${token}x`)).json().code).toBe('token_invalid');
  });

  it('a signed-URL token is no access token, and an access token is no signed-URL token', async () => {
    const url = (await sign('photos/me%20%25.png', alice)).json().signed_url as string;
    const token = new URL(url).searchParams.get('token')!;
    const asBearer = await s.get('/api/v1/storage/object/private/photos/me%20%25.png', s.as.user(token));
    expect(asBearer.statusCode).toBe(401);
    expect(asBearer.json().code).toBe('invalid_token');
    const asDbBearer = await s.get('/api/v1/db/anything', s.as.user(token));
    expect(asDbBearer.statusCode).toBe(401);
    const accessAsSigned = await s.get(`/api/v1/storage/sign/private/photos/me%20%25.png?token=${aliceToken}`);
    expect(accessAsSigned.statusCode).toBe(400);
    expect(accessAsSigned.json().code).toBe('token_invalid');
  });

  it('still needs the object: a deleted object is 404 through an unexpired URL', async () => {
    const url = (await sign('other.txt', alice)).json().signed_url as string;
    expect((await s.app.inject({ method: 'DELETE', url: '/api/v1/storage/object/private/other.txt', headers: alice })).statusCode).toBe(
      200,
    );
    expect((await s.get(local(url))).statusCode).toBe(404);
  });

  it('issue 19: is bound to the object, not its name: a later upload under that name is not served to the old URL', async () => {
    // The attacker uploads a likely name, signs a 7-day URL, deletes the object.
    const mallory = s.as.user(await s.mintToken(randomUUID()));
    expect((await s.upload('private', 'invoices/2026.pdf', 'mallory', mallory)).statusCode).toBe(201);
    const url = (
      await s.app.inject({
        method: 'POST',
        url: '/api/v1/storage/sign/private/invoices/2026.pdf',
        headers: mallory,
        payload: { expires_in: 7 * 86400 },
      })
    ).json().signed_url as string;
    expect((await s.get(local(url))).body).toBe('mallory');
    expect(
      (await s.app.inject({ method: 'DELETE', url: '/api/v1/storage/object/private/invoices/2026.pdf', headers: mallory })).statusCode,
    ).toBe(200);
    // Alice uploads her own file under that name: the old URL does not serve it.
    expect((await s.upload('private', 'invoices/2026.pdf', 'alice private', alice)).statusCode).toBe(201);
    const got = await s.get(local(url));
    expect([got.statusCode, got.json().code]).toEqual([404, 'not_found']);
    expect(got.body).not.toContain('alice private');
    expect((await s.app.inject({ method: 'HEAD', url: local(url) })).statusCode).toBe(404);
  });

  it('issue 19: a replaced object (upsert) ends the URL signed for the old one; a new URL reads the new bytes', async () => {
    expect((await s.upload('private', 'replaced.txt', 'first', alice)).statusCode).toBe(201);
    const old = (await sign('replaced.txt', alice)).json().signed_url as string;
    expect((await s.upload('private', 'replaced.txt', 'second', { ...alice, 'x-upsert': 'true' })).statusCode).toBe(201);
    expect((await s.get(local(old))).statusCode).toBe(404);
    const fresh = (await sign('replaced.txt', alice)).json().signed_url as string;
    expect((await s.get(local(fresh))).body).toBe('second');
  });
});

describe('public buckets', () => {
  it('serve without a key, with cache headers, ETag and a sandbox for active content', async () => {
    const res = await s.get('/api/v1/storage/public/site/index.html');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('<h1>hi</h1>');
    // Revalidated each time (a 304 while the ETag holds): a deleted or replaced object is not served from a cache.
    expect(res.headers['cache-control']).toBe('public, no-cache');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    const again = await s.get('/api/v1/storage/public/site/index.html', { 'if-none-match': String(res.headers.etag) });
    expect(again.statusCode).toBe(304);
  });

  it('a private bucket, a missing bucket or object is 404 there, whatever the object', async () => {
    for (const path of ['private/photos/me%20%25.png', 'nobucket/x', 'site/missing.html']) {
      const res = await s.get(`/api/v1/storage/public/${path}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
  });

  it('a bucket made private stops serving at once', async () => {
    const patch = await s.app.inject({
      method: 'PATCH',
      url: '/api/v1/storage/buckets/site',
      headers: s.as.service,
      payload: { public: false },
    });
    expect(patch.statusCode).toBe(200);
    expect((await s.get('/api/v1/storage/public/site/index.html')).statusCode).toBe(404);
  });
});
