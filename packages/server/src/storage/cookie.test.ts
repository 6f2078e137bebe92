import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageServer, storageServer } from '../../test/storage.js';

// The console's admin cookie on the storage routes: it manages buckets and objects with the
// secret key's power, under the admin area's CSRF rule for changes; a key sent with the request
// decides over the cookie; a logged-out session is refused; and the cookie still means nothing
// on the REST /db routes.

const OWN = 'http://localhost:8080'; // the harness's PUBLIC_URL
const CONSOLE = { 'x-plinth-admin': '1', origin: OWN, 'sec-fetch-site': 'same-origin' };
/** What every cookie request carries, reads included (review round 3, R12). */
const HEADER = { 'x-plinth-admin': '1' };
const PASSWORD = 'a long admin passphrase';

let s: StorageServer;
beforeAll(async () => {
  s = await storageServer('disk');
  await s.sql(`create table notes (id int primary key, body text); insert into notes values (1, 'secret row');`);
});
afterAll(async () => {
  await s?.stop();
});

async function signedIn(email: string): Promise<Record<string, string>> {
  await s.admin.admins.upsert(email, PASSWORD);
  const res = await s.app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { email, password: PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  return { cookie: `plinth_admin=${String(res.headers['set-cookie']).match(/plinth_admin=([^;]*)/)?.[1]}` };
}

const list = (bucket: string, headers: Record<string, string>, prefix = '') =>
  s.app.inject({ url: `/api/v1/storage/object/${bucket}?prefix=${encodeURIComponent(prefix)}`, headers });
const names = async (bucket: string, prefix = '') => (await list(bucket, s.as.service, prefix)).json().map((e: { name: string }) => e.name);

describe('the admin cookie on storage', () => {
  it('lists, uploads, downloads, signs, moves and deletes as the secret key (RLS bypassed)', async () => {
    const cookie = await signedIn('files@example.com');
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/storage/buckets',
      headers: { ...cookie, ...CONSOLE },
      payload: { name: 'console-files' },
    });
    expect(created.statusCode, created.body).toBe(201);
    // No policy on storage.objects: only an RLS bypass can write and read here.
    const name = 'docs/ä b#1?%.txt';
    const path = `docs/${encodeURIComponent('ä b#1?%.txt')}`;
    const up = await s.upload('console-files', path, 'hello from the console', { ...cookie, ...CONSOLE });
    expect(up.statusCode, up.body).toBe(201);
    expect(up.json()).toMatchObject({ name, size: 22 });
    expect((await list('console-files', { ...cookie, ...HEADER }, 'docs')).json().map((e: { name: string }) => e.name)).toEqual([
      'ä b#1?%.txt',
    ]);
    // A download is a GET with the header too (the console fetches it into a blob URL): a link
    // or an <img> of another page cannot send it (review round 3, R12).
    const down = await s.get(`/api/v1/storage/object/console-files/${path}?download=${encodeURIComponent('ä b#1?%.txt')}`, {
      ...cookie,
      ...HEADER,
    });
    expect([down.statusCode, down.body]).toEqual([200, 'hello from the console']);
    expect(down.headers['content-disposition']).toContain("filename*=UTF-8''%C3%A4%20b%231%3F%25.txt");
    const head = await s.app.inject({
      method: 'HEAD',
      url: `/api/v1/storage/object/console-files/${path}`,
      headers: { ...cookie, ...HEADER },
    });
    expect(head.headers['content-length']).toBe('22');
    const sign = await s.app.inject({
      method: 'POST',
      url: `/api/v1/storage/sign/console-files/${path}`,
      headers: { ...cookie, ...CONSOLE },
      payload: { expires_in: 60 },
    });
    expect(sign.statusCode, sign.body).toBe(200);
    const signedPath = new URL(sign.json().signed_url).pathname + new URL(sign.json().signed_url).search;
    expect((await s.get(signedPath)).body).toBe('hello from the console');
    const moved = await s.app.inject({
      method: 'POST',
      url: '/api/v1/storage/object/console-files/move',
      headers: { ...cookie, ...CONSOLE },
      payload: { from: name, to: 'docs/b.txt' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().owner).toBeNull(); // the console uploads as the secret key: no owner
    expect((await s.upload('console-files', 'c.txt', 'c', { ...cookie, ...CONSOLE })).statusCode).toBe(201);
    const one = await s.app.inject({
      method: 'DELETE',
      url: '/api/v1/storage/object/console-files/c.txt',
      headers: { ...cookie, ...CONSOLE },
    });
    expect(one.statusCode, one.body).toBe(200);
    const many = await s.app.inject({
      method: 'DELETE',
      url: '/api/v1/storage/object/console-files',
      headers: { ...cookie, ...CONSOLE },
      payload: { paths: ['docs/b.txt'] },
    });
    expect(many.json().map((o: { name: string }) => o.name)).toEqual(['docs/b.txt']);
    expect(await names('console-files')).toEqual([]);
  });

  it.each([
    ['another port of the same host', { 'x-plinth-admin': '1', origin: 'http://localhost:3000', 'sec-fetch-site': 'same-site' }],
    ['a same-site page without Origin', { 'x-plinth-admin': '1', 'sec-fetch-site': 'same-site' }],
    ['a cross-site page', { 'x-plinth-admin': '1', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['a request without X-Plinth-Admin', { origin: OWN, 'sec-fetch-site': 'same-origin' }],
  ])('refuses a cookie change from %s with csrf_rejected, and changes nothing', async (_name, headers) => {
    const cookie = await signedIn('csrf-files@example.com');
    await s.bucket('guarded').catch(() => undefined); // several cases share it
    await s.upload('guarded', 'kept.txt', 'kept', s.as.service);
    const refusals = [
      await s.upload('guarded', 'evil.txt', 'evil', { ...cookie, ...headers }),
      await s.upload('guarded', 'kept.txt', 'evil', { ...cookie, ...headers, 'x-upsert': 'true' }),
      await s.app.inject({ method: 'DELETE', url: '/api/v1/storage/object/guarded/kept.txt', headers: { ...cookie, ...headers } }),
      await s.app.inject({
        method: 'DELETE',
        url: '/api/v1/storage/object/guarded',
        headers: { ...cookie, ...headers },
        payload: { paths: ['kept.txt'] },
      }),
      await s.app.inject({
        method: 'POST',
        url: '/api/v1/storage/sign/guarded/kept.txt',
        headers: { ...cookie, ...headers },
        payload: { expires_in: 60 },
      }),
      // A cross-site form post: refused as such before its body is looked at.
      await s.app.inject({
        method: 'POST',
        url: '/api/v1/storage/object/guarded/move',
        headers: { ...cookie, ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'from=kept.txt&to=moved.txt',
      }),
      await s.app.inject({ method: 'DELETE', url: '/api/v1/storage/buckets/guarded', headers: { ...cookie, ...headers } }),
    ];
    for (const r of refusals) expect([r.statusCode, r.json().code], r.body).toEqual([403, 'csrf_rejected']);
    expect(await names('guarded')).toEqual(['kept.txt']);
    expect((await s.get('/api/v1/storage/object/guarded/kept.txt', s.as.service)).body).toBe('kept');
    // Reads are refused alike: from another page (an <img> on another port of this host is
    // same-site and carries the cookie), and without the header (review round 3, R12).
    const read = await list('guarded', { ...cookie, ...headers });
    expect([read.statusCode, read.json().code]).toEqual([403, 'csrf_rejected']);
  });

  it('refuses a session that was logged out, and a cookie that is no session at all', async () => {
    const cookie = await signedIn('gone@example.com');
    await s.bucket('after-logout');
    await s.upload('after-logout', 'a.txt', 'a', s.as.service);
    expect((await list('after-logout', { ...cookie, ...HEADER })).statusCode).toBe(200);
    const out = await s.app.inject({ method: 'POST', url: '/api/v1/admin/logout', headers: { ...cookie, ...CONSOLE } });
    expect(out.statusCode).toBe(204);
    for (const c of [cookie, { cookie: 'plinth_admin=not-a-session-of-this-server' }]) {
      for (const r of [
        await list('after-logout', c),
        await s.get('/api/v1/storage/object/after-logout/a.txt', c),
        await s.upload('after-logout', 'b.txt', 'b', { ...c, ...CONSOLE }),
        await s.app.inject({ method: 'DELETE', url: '/api/v1/storage/object/after-logout/a.txt', headers: { ...c, ...CONSOLE } }),
      ]) {
        expect([r.statusCode, r.json().code], r.body).toEqual([401, 'unauthorized']);
      }
    }
    expect(await names('after-logout')).toEqual(['a.txt']);
  });

  it('lets a key decide over the cookie: the public key with the cookie is anon, under the policies', async () => {
    const cookie = await signedIn('keyed@example.com');
    await s.bucket('keyed');
    await s.upload('keyed', 'private.txt', 'private', s.as.service);
    const anonList = await list('keyed', { ...cookie, ...s.as.anon });
    expect([anonList.statusCode, anonList.json()]).toEqual([200, []]);
    const anonRead = await s.get('/api/v1/storage/object/keyed/private.txt', { ...cookie, ...s.as.anon });
    expect(anonRead.statusCode).toBe(404);
    const anonUp = await s.upload('keyed', 'x.txt', 'x', { ...cookie, ...s.as.anon, ...CONSOLE });
    expect([anonUp.statusCode, anonUp.json().code]).toEqual([403, 'rls_violation']);
    // A wrong key with the cookie is the key's refusal, not the cookie's power.
    const wrong = await list('keyed', { ...cookie, apikey: 'pk_not_this_project' });
    expect([wrong.statusCode, wrong.json().code]).toEqual([401, 'unauthorized']);
  });

  it('acts as the secret key on the REST /db routes too (the Table browser), under the same rule; a key decides over it', async () => {
    const cookie = await signedIn('rest@example.com');
    const alone = await s.app.inject({ url: '/api/v1/db/notes', headers: { ...cookie, ...CONSOLE } });
    expect([alone.statusCode, alone.json()]).toEqual([200, [{ id: 1, body: 'secret row' }]]);
    // From a page of another site, or a change without the console's header: refused.
    const cross = await s.app.inject({ url: '/api/v1/db/notes', headers: { ...cookie, ...CONSOLE, 'sec-fetch-site': 'same-site' } });
    expect([cross.statusCode, cross.json().code]).toEqual([403, 'csrf_rejected']);
    const bare = await s.app.inject({
      method: 'POST',
      url: '/api/v1/db/notes',
      headers: { ...cookie, origin: OWN, 'sec-fetch-site': 'same-origin' },
      payload: { id: 2, body: 'x' },
    });
    expect([bare.statusCode, bare.json().code]).toEqual([403, 'csrf_rejected']);
    // The public key with the cookie: the key decides, row-level security applies.
    const withAnon = await s.app.inject({ url: '/api/v1/db/notes', headers: { ...cookie, ...CONSOLE, ...s.as.anon } });
    expect([withAnon.statusCode, withAnon.json()]).toEqual([200, []]);
    const write = await s.app.inject({
      method: 'POST',
      url: '/api/v1/db/notes',
      headers: { ...cookie, ...CONSOLE },
      payload: { id: 2, body: 'x' },
    });
    expect(write.statusCode).toBe(201);
    expect((await s.app.inject({ url: '/api/v1/db/notes?order=id', headers: s.as.service })).json()).toEqual([
      { id: 1, body: 'secret row' },
      { id: 2, body: 'x' },
    ]);
  });
});
