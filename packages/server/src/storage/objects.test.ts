import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type StorageServer, storageServer } from '../../test/storage.js';

// The object API under row-level security, the same scenarios on the disk and on S3 (s3rver).
// Policies are the project's SQL; users are access tokens of the project key.

const md5 = (s: string | Buffer) => `"${createHash('md5').update(s).digest('hex')}"`;

describe.each(BACKENDS)('objects on the %s backend', (kind) => {
  let s: StorageServer;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let aliceId: string;

  beforeAll(async () => {
    s = await storageServer(kind);
    aliceId = randomUUID();
    alice = s.as.user(await s.mintToken(aliceId));
    bob = s.as.user(await s.mintToken(randomUUID()));
    await s.bucket('private');
    await s.bucket('dropbox');
    await s.bucket('small', { file_size_limit: 10 });
    await s.bucket('images', { allowed_mime_types: ['image/*', 'application/pdf'] });
    const res = await s.sql(`
      create policy "own files" on storage.objects for all to authenticated
        using (bucket_id = 'private' and owner = auth.uid()) with check (bucket_id = 'private' and owner = auth.uid());
      create policy "drop only" on storage.objects for insert to anon, authenticated with check (bucket_id = 'dropbox');
      create policy "small and images" on storage.objects for all to authenticated
        using (bucket_id in ('small', 'images')) with check (bucket_id in ('small', 'images'));`);
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('an upload is owned by its uploader, who reads it back with the stored type, length and ETag', async () => {
    const up = await s.upload('private', 'docs/hello.txt', 'hello world', { ...alice, 'content-type': 'text/plain; charset=utf-8' });
    expect(up.statusCode, up.body).toBe(201);
    expect(up.json()).toEqual({
      bucket: 'private',
      name: 'docs/hello.txt',
      size: 11,
      mime_type: 'text/plain; charset=utf-8',
      etag: md5('hello world'),
    });
    const row = (await s.sql(`select owner::text, size from storage.objects where name = 'docs/hello.txt'`)).json().results[0].rows[0];
    expect(row).toEqual({ owner: aliceId, size: 11 });

    const got = await s.get('/api/v1/storage/object/private/docs/hello.txt', alice);
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('hello world');
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.headers['content-length']).toBe('11');
    expect(got.headers.etag).toBe(md5('hello world'));
    expect(got.headers['accept-ranges']).toBe('bytes');
    // The bytes are the uploader's: never active content on the API's origin.
    expect(got.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(got.headers['x-content-type-options']).toBe('nosniff');
  });

  it('hidden by RLS is 404 for another user and for anon (never 403); the secret key reads everything', async () => {
    const path = '/api/v1/storage/object/private/docs/hello.txt';
    for (const who of [bob, s.as.anon]) {
      const res = await s.get(path, who);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
      expect((await s.app.inject({ method: 'HEAD', url: path, headers: who })).statusCode).toBe(404);
    }
    expect((await s.get(path, s.as.service)).body).toBe('hello world');
    expect((await s.get(path, {})).statusCode).toBe(401);
  });

  it('HEAD, Range (206, 416), If-None-Match (304) and ?download', async () => {
    const path = '/api/v1/storage/object/private/docs/hello.txt';
    const head = await s.app.inject({ method: 'HEAD', url: path, headers: alice });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('11');
    expect(head.headers.etag).toBe(md5('hello world'));
    expect(head.body).toBe('');

    const part = await s.get(path, { ...alice, range: 'bytes=6-' });
    expect(part.statusCode).toBe(206);
    expect(part.body).toBe('world');
    expect(part.headers['content-range']).toBe('bytes 6-10/11');
    expect(part.headers['content-length']).toBe('5');
    expect((await s.get(path, { ...alice, range: 'bytes=-3' })).body).toBe('rld');
    const outside = await s.get(path, { ...alice, range: 'bytes=20-30' });
    expect(outside.statusCode).toBe(416);
    expect(outside.headers['content-range']).toBe('bytes */11');
    expect(outside.json().code).toBe('range_not_satisfiable');

    const same = await s.get(path, { ...alice, 'if-none-match': md5('hello world') });
    expect(same.statusCode).toBe(304);
    expect(same.body).toBe('');
    expect((await s.get(path, { ...alice, 'if-none-match': '"other"' })).statusCode).toBe(200);

    const named = await s.get(`${path}?download=Résumé "final".txt`, alice);
    expect(named.headers['content-disposition']).toBe(
      `attachment; filename="R_sum_ _final_.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20_final_.txt`,
    );
    expect((await s.get(`${path}?download`, alice)).headers['content-disposition']).toMatch(/^attachment; filename="hello.txt"/);
  });

  it('an existing name is 409 object_exists without x-upsert, replaced with it; the replaced bytes are deleted', async () => {
    const again = await s.upload('private', 'docs/hello.txt', 'other', alice);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('object_exists');
    const before = await s.storedKeys();
    const up = await s.upload('private', 'docs/hello.txt', 'hello again', { ...alice, 'x-upsert': 'true' });
    expect(up.statusCode, up.body).toBe(201);
    expect((await s.get('/api/v1/storage/object/private/docs/hello.txt', alice)).body).toBe('hello again');
    await s.storage.sweeper.drain();
    const after = await s.storedKeys();
    expect(after).toHaveLength(before.length);
    expect(after).not.toEqual(before);
    // Another user cannot upsert over it: the UPDATE policy refuses.
    const theirs = await s.upload('private', 'docs/hello.txt', 'mine now', { ...bob, 'x-upsert': 'true' });
    expect(theirs.statusCode).toBe(403);
    expect(theirs.json().code).toBe('rls_violation');
  });

  it('an upload refused by a policy is 403 rls_violation and leaves neither row nor bytes', async () => {
    const keys = await s.storedKeys();
    const anon = await s.upload('private', 'anon.txt', 'x', s.as.anon);
    expect(anon.statusCode).toBe(403);
    expect(anon.json().code).toBe('rls_violation');
    // The check names the bucket: alice may not write into the public images' bucket as "private".
    expect((await s.upload('nobody', 'a.txt', 'x', alice)).json().code).toBe('bucket_not_found');
    expect(await s.storedKeys()).toEqual(keys);
    const rows = (await s.sql(`select count(*)::int as n from storage.objects where name = 'anon.txt'`)).json().results[0].rows[0];
    expect(rows.n).toBe(0);
  });

  it('an upload-only bucket (INSERT policy alone) takes uploads it then does not show', async () => {
    const up = await s.upload('dropbox', 'report.txt', 'secret report', s.as.anon);
    expect(up.statusCode, up.body).toBe(201);
    expect((await s.get('/api/v1/storage/object/dropbox/report.txt', s.as.anon)).statusCode).toBe(404);
    expect((await s.get('/api/v1/storage/object/dropbox/report.txt', s.as.service)).body).toBe('secret report');
  });

  it('lists a folder: files and sub-folders as prefixes, only what the caller may see, with search and paging', async () => {
    for (const name of ['docs/a.txt', 'docs/b.txt', 'docs/sub/c.txt', 'docs/sub/deeper/d.txt', 'top.txt']) {
      expect((await s.upload('private', name, name, alice)).statusCode).toBe(201);
    }
    expect((await s.upload('private', 'docs/bobs.txt', 'b', bob)).statusCode).toBe(201);
    const list = async (query: string, who = alice) => {
      const res = await s.get(`/api/v1/storage/object/private?${query}`, who);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Array<{ name: string; id: string | null; size: number | null }>;
    };
    const docs = await list('prefix=docs');
    expect(docs.map((e) => [e.name, e.id === null])).toEqual([
      ['a.txt', false],
      ['b.txt', false],
      ['hello.txt', false],
      ['sub', true],
    ]);
    expect(docs[0]).toMatchObject({ size: 10, mime_type: 'text/plain', owner: aliceId });
    expect((await list('')).map((e) => e.name)).toEqual(['docs', 'top.txt']);
    expect((await list('prefix=docs/sub/')).map((e) => e.name)).toEqual(['c.txt', 'deeper']);
    expect((await list('prefix=docs&search=B')).map((e) => e.name)).toEqual(['b.txt', 'sub']);
    expect((await list('prefix=docs&limit=2&offset=1')).map((e) => e.name)).toEqual(['b.txt', 'hello.txt']);
    expect((await list('prefix=docs', bob)).map((e) => e.name)).toEqual(['bobs.txt']);
    expect(await list('prefix=docs', s.as.anon)).toEqual([]);
    // `%` and `_` in a prefix are taken literally.
    expect(await list('prefix=do%25')).toEqual([]);
    const bad = await s.get('/api/v1/storage/object/private?limit=-1', alice);
    expect(bad.statusCode).toBe(400);
  });

  it('moves and copies under the UPDATE and INSERT policies; a taken target is 409', async () => {
    const move = (body: object, who = alice) =>
      s.app.inject({ method: 'POST', url: '/api/v1/storage/object/private/move', headers: who, payload: body });
    const moved = await move({ from: 'docs/a.txt', to: 'archive/a.txt' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ bucket: 'private', name: 'archive/a.txt', owner: aliceId, size: 10 });
    expect((await s.get('/api/v1/storage/object/private/archive/a.txt', alice)).body).toBe('docs/a.txt');
    expect((await s.get('/api/v1/storage/object/private/docs/a.txt', alice)).statusCode).toBe(404);
    expect((await move({ from: 'archive/a.txt', to: 'x.txt' }, bob)).statusCode).toBe(404);
    expect((await move({ from: 'archive/a.txt', to: 'docs/b.txt' })).json().code).toBe('object_exists');
    for (const to of ['../x', 'a/../../x', '\ud800.txt', 'a\\b']) {
      expect((await move({ from: 'archive/a.txt', to })).json().code).toBe('invalid_object_name');
    }

    const copy = (body: object, who = alice) =>
      s.app.inject({ method: 'POST', url: '/api/v1/storage/object/private/copy', headers: who, payload: body });
    const copied = await copy({ from: 'docs/b.txt', to: 'copies/b.txt' });
    expect(copied.statusCode, copied.body).toBe(200);
    expect(copied.json()).toEqual({ bucket: 'private', name: 'copies/b.txt', size: 10, mime_type: 'text/plain', etag: md5('docs/b.txt') });
    expect((await s.get('/api/v1/storage/object/private/copies/b.txt', alice)).body).toBe('docs/b.txt');
    expect((await copy({ from: 'docs/b.txt', to: 'copies/b.txt' })).json().code).toBe('object_exists');
    expect((await copy({ from: 'docs/b.txt', to: 'mine.txt' }, bob)).statusCode).toBe(404);
    // The JSON routes keep the API's JSON body limit (1 MiB); only uploads take large bodies.
    const huge = await move({ from: 'docs/b.txt', to: 'x'.repeat(2 * 2 ** 20) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('payload_too_large');
  });

  it('deletes one (404 when hidden) or many (the deleted ones back), and their bytes go', async () => {
    const del = (path: string, who = alice) =>
      s.app.inject({ method: 'DELETE', url: `/api/v1/storage/object/private/${path}`, headers: who });
    expect((await del('top.txt', bob)).statusCode).toBe(404);
    const one = await del('top.txt');
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ name: 'top.txt', bucket: 'private', size: 7 });
    expect((await s.get('/api/v1/storage/object/private/top.txt', alice)).statusCode).toBe(404);
    const many = await s.app.inject({
      method: 'DELETE',
      url: '/api/v1/storage/object/private',
      headers: alice,
      payload: { paths: ['docs/sub/c.txt', 'docs/sub/deeper/d.txt', 'docs/bobs.txt', 'missing.txt'] },
    });
    expect(many.statusCode).toBe(200);
    expect(
      many
        .json()
        .map((o: { name: string }) => o.name)
        .sort(),
    ).toEqual(['docs/sub/c.txt', 'docs/sub/deeper/d.txt']);
    await s.storage.sweeper.drain();
    const rows = (await s.sql('select count(*)::int as n from storage.objects')).json().results[0].rows[0].n;
    expect(await s.storedKeys()).toHaveLength(rows);
  });

  it('limits: the bucket size (413, also for a body without Content-Length) and media types (415)', async () => {
    expect((await s.upload('small', 'ok.txt', '0123456789', alice)).statusCode).toBe(201);
    const big = await s.upload('small', 'big.txt', '01234567890', alice);
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ code: 'payload_too_large', details: { limit: 10 } });
    const chunked = await s.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/small/chunked.txt',
      headers: { ...alice, 'content-type': 'text/plain' },
      payload: Readable.from([Buffer.from('0123456'), Buffer.from('789abc')]),
    });
    expect(chunked.headers['content-length'] === undefined || chunked.statusCode === 413).toBe(true);
    expect(chunked.statusCode).toBe(413);
    expect((await s.upload('images', 'a.png', 'png', { ...alice, 'content-type': 'image/png' })).statusCode).toBe(201);
    expect((await s.upload('images', 'b.pdf', 'pdf', { ...alice, 'content-type': 'application/pdf' })).statusCode).toBe(201);
    const text = await s.upload('images', 'c.txt', 'text', { ...alice, 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('invalid_mime_type');
    expect((await s.upload('images', 'd', 'x', { ...alice, 'content-type': 'not a type' })).json().code).toBe('invalid_mime_type');
    const names = (await s.sql(`select name from storage.objects where bucket_id in ('small', 'images') order by name`)).json().results[0]
      .rows;
    expect(names.map((r: { name: string }) => r.name)).toEqual(['a.png', 'b.pdf', 'ok.txt']);
  });

  // `..` in a URL path is resolved by every URL parser (and by inject) before it is sent: a
  // client sending it raw is covered in streaming.test.ts; here it comes in JSON bodies (move).
  it.each([
    ['a//b.txt', 'an empty folder'],
    ['a%5Cb.txt', 'a backslash'],
    ['a%00b.txt', 'NUL'],
    ['a%0Ab.txt', 'a line break'],
    ['%2Fabsolute.txt', 'a leading slash'],
    ['folder/', 'a trailing slash'],
    [`${'x'.repeat(1025)}`, 'more than 1024 bytes'],
  ])('refuses the name %s (%s) with 400 invalid_object_name', async (path) => {
    const res = await s.upload('private', path, 'x', alice);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe('invalid_object_name');
  });

  it('a path that is not valid percent-encoding of UTF-8 is 400 in the one error shape', async () => {
    for (const path of ['%E0%A4%A', '%ED%A0%80']) {
      const res = await s.upload('private', path, 'x', alice);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_request', message: 'The URL path is not valid percent-encoding.' });
    }
  });

  it('stores names in NFC and takes any other character percent-encoded, up to 1024 bytes', async () => {
    const nfd = 'Cafe\u0301 ?#%&+ 名前.txt';
    const up = await s.upload('private', nfd.split('/').map(encodeURIComponent).join('/'), 'x', alice);
    expect(up.statusCode, up.body).toBe(201);
    expect(up.json().name).toBe(nfd.normalize('NFC'));
    expect((await s.get(`/api/v1/storage/object/private/${encodeURIComponent(nfd.normalize('NFC'))}`, alice)).body).toBe('x');
    const long = `${'é'.repeat(500)}/${'x'.repeat(23)}`; // 1000 + 1 + 23 = 1024 bytes
    expect((await s.upload('private', encodeURI(long), 'long', alice)).statusCode).toBe(201);
    // Names `move` and `copy` at the top of a bucket are uploaded with PUT (POST …/move is the move).
    expect((await s.upload('private', 'move', 'named move', alice, 'PUT')).statusCode).toBe(201);
    expect((await s.get('/api/v1/storage/object/private/move', alice)).body).toBe('named move');
  });

  it('two concurrent uploads to one new name: exactly one 201, the other 409, one set of bytes kept', async () => {
    const keysBefore = (await s.storedKeys()).length;
    const results = await Promise.all([1, 2, 3].map((i) => s.upload('private', 'race.txt', `attempt ${i}`, alice)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    const winner = results.find((r) => r.statusCode === 201)!;
    expect((await s.get('/api/v1/storage/object/private/race.txt', alice)).headers.etag).toBe(winner.json().etag);
    expect(await s.storedKeys()).toHaveLength(keysBefore + 1);
  });

  it('an empty file is an object too', async () => {
    expect((await s.upload('private', 'empty.txt', '', alice)).statusCode).toBe(201);
    const got = await s.get('/api/v1/storage/object/private/empty.txt', alice);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-length']).toBe('0');
    expect(got.body).toBe('');
  });
});
