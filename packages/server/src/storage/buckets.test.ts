import { randomUUID } from 'node:crypto';
import { generateTypes } from '@plinth/sdk/gen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStorageConfig } from '../config/storage.js';
import { type StorageServer, storageServer } from '../../test/storage.js';

// Buckets (management only), the storage schema's defaults, and the storage routes in OpenAPI.

let s: StorageServer;
beforeAll(async () => {
  s = await storageServer('disk', { STORAGE_MAX_FILE_SIZE: '5MiB' });
});
afterAll(async () => {
  await s?.stop();
});

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers = s.as.service) =>
  s.app.inject({ method, url: `/api/v1/storage/buckets${url}`, headers, payload });

describe('buckets', () => {
  it('are created, read, listed, updated and deleted with the secret key only', async () => {
    const created = await api('POST', '', { name: 'avatars', public: true, file_size_limit: 1024, allowed_mime_types: ['image/*'] });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      id: 'avatars',
      name: 'avatars',
      public: true,
      file_size_limit: 1024,
      allowed_mime_types: ['image/*'],
    });
    expect((await api('POST', '', { name: 'avatars' })).json().code).toBe('bucket_exists');
    expect((await api('GET', '/avatars')).json()).toMatchObject({ name: 'avatars', public: true });
    expect((await api('GET', '')).json().map((b: { name: string }) => b.name)).toEqual(['avatars']);
    const patched = await api('PATCH', '/avatars', { file_size_limit: null, allowed_mime_types: null });
    expect(patched.json()).toMatchObject({ public: true, file_size_limit: null, allowed_mime_types: null });
    expect((await api('PATCH', '/nope', { public: true })).json().code).toBe('bucket_not_found');
    expect((await api('GET', '/nope')).statusCode).toBe(404);

    const user = s.as.user(await s.mintToken(randomUUID()));
    for (const who of [s.as.anon, user]) {
      expect((await api('GET', '', undefined, who)).statusCode).toBe(403);
      expect((await api('POST', '', { name: 'mine' }, who)).statusCode).toBe(403);
      expect((await api('DELETE', '/avatars', undefined, who)).statusCode).toBe(403);
    }
    expect((await api('GET', '', undefined, {})).statusCode).toBe(401);
  });

  it.each([
    [{ name: 'Bad Name' }, 'invalid_bucket_name'],
    [{ name: '.hidden' }, 'invalid_bucket_name'],
    [{ name: 'x'.repeat(64) }, 'invalid_request'],
    [{ name: 'ok', file_size_limit: 0 }, 'invalid_request'],
    [{ name: 'ok', file_size_limit: 6 * 2 ** 20 }, 'invalid_request'],
    [{ name: 'ok', allowed_mime_types: ['images'] }, 'invalid_request'],
    [{ name: 'ok', colour: 'red' }, 'invalid_request'],
  ])('refuses %j with 400 %s and creates nothing', async (body, code) => {
    const res = await api('POST', '', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(code);
    expect((await api('GET', '/ok')).statusCode).toBe(404);
  });

  it('a bucket with objects is 409 bucket_not_empty; emptied, it goes', async () => {
    expect((await api('POST', '', { name: 'full' })).statusCode).toBe(201);
    expect((await s.upload('full', 'a.txt', 'a', s.as.service)).statusCode).toBe(201);
    const refused = await api('DELETE', '/full');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('bucket_not_empty');
    await s.app.inject({ method: 'DELETE', url: '/api/v1/storage/object/full/a.txt', headers: s.as.service });
    expect((await api('DELETE', '/full')).statusCode).toBe(200);
    expect((await api('GET', '/full')).statusCode).toBe(404);
  });
});

describe('the storage schema', () => {
  it('storage.objects is closed to anon and authenticated until a policy opens it', async () => {
    expect((await api('POST', '', { name: 'closed' })).statusCode).toBe(201);
    expect((await s.upload('closed', 'x.txt', 'x', s.as.service)).statusCode).toBe(201);
    const user = s.as.user(await s.mintToken(randomUUID()));
    expect((await s.get('/api/v1/storage/object/closed/x.txt', user)).statusCode).toBe(404);
    expect((await s.upload('closed', 'y.txt', 'y', user)).json().code).toBe('rls_violation');
    expect((await s.get('/api/v1/storage/object/closed', user)).json()).toEqual([]);
  });

  it('a table the project adds to the storage schema is closed: no grants, and row-level security on where event triggers exist', async () => {
    const res = await s.sql(`create table storage.extra (id int);
      select relrowsecurity as rls, plinth.ddl_mode() = 'event_trigger' as triggers,
        has_table_privilege('anon', 'storage.extra', 'select') or has_table_privilege('authenticated', 'storage.extra', 'insert') as granted
      from pg_class where oid = 'storage.extra'::regclass`);
    expect(res.statusCode, res.body).toBe(200);
    const { rls, triggers, granted } = res.json().results[1].rows[0];
    expect(granted).toBe(false);
    // A hosted PostgreSQL gives no event triggers (no superuser): the missing grants alone keep it closed.
    expect(rls).toBe(triggers);
  });

  it('the policy helpers split names', async () => {
    const res = await s.sql(
      `select storage.foldername('a/b/c.png') as f, storage.filename('a/b/c.png') as n, storage.extension('a/b/c.PNG') as e`,
    );
    expect(res.json().results[0].rows[0]).toEqual({ f: ['a', 'b'], n: 'c.png', e: 'png' });
  });
});

describe('OpenAPI', () => {
  it('documents every storage route with its parameters, bodies and responses; generated types are unaffected', async () => {
    const doc = (await s.get('/api/v1/openapi.json', s.as.service)).json();
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/storage/'));
    expect(paths.sort()).toEqual([
      '/api/v1/storage/buckets',
      '/api/v1/storage/buckets/{name}',
      '/api/v1/storage/object/{bucket}',
      '/api/v1/storage/object/{bucket}/copy',
      '/api/v1/storage/object/{bucket}/move',
      '/api/v1/storage/object/{bucket}/{path}',
      '/api/v1/storage/public/{bucket}/{path}',
      '/api/v1/storage/sign/{bucket}/{path}',
    ]);
    const object = doc.paths['/api/v1/storage/object/{bucket}/{path}'];
    expect(Object.keys(object).sort()).toEqual(['delete', 'get', 'head', 'post', 'put']);
    expect(object.post.tags).toEqual(['storage']);
    expect(object.post.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name)).toEqual([
      'bucket',
      'path',
    ]);
    expect(object.post.responses['201'].content['application/json'].schema.properties.etag).toBeDefined();
    expect(object.get.responses['200'].content['*/*'].schema.format).toBe('binary');
    expect(doc.paths['/api/v1/storage/public/{bucket}/{path}'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/storage/buckets'].post.tags).toEqual(['management']);
    expect(doc.paths['/api/v1/storage/buckets'].post.requestBody.content['application/json'].schema.properties.name).toBeDefined();
    expect(doc.paths['/api/v1/storage/object/{bucket}'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'bucket',
      'limit',
      'offset',
      'prefix',
      'search',
    ]);
    // `plinth gen types` reads the same document: storage adds no table.
    const types = generateTypes(doc);
    expect(types).not.toMatch(/storage|bucket/i);
  });
});

describe('config', () => {
  it.each([
    [{}, { backend: 'disk', maxFileSize: 50 * 2 ** 20, s3: null }],
    [{ STORAGE_MAX_FILE_SIZE: '1GiB' }, { maxFileSize: 2 ** 30 }],
    [{ STORAGE_MAX_FILE_SIZE: '1048576' }, { maxFileSize: 2 ** 20 }],
    [
      { STORAGE_BACKEND: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' },
      {
        backend: 's3',
        s3: {
          bucket: 'files',
          endpoint: 'http://127.0.0.1:9000',
          region: 'us-east-1',
          forcePathStyle: true,
          accessKeyId: 'k',
          secretAccessKey: 's',
        },
      },
    ],
    [
      { STORAGE_BACKEND: 's3', S3_BUCKET: 'files', S3_REGION: 'eu-west-1' },
      { s3: { endpoint: null, region: 'eu-west-1', forcePathStyle: false, accessKeyId: null } },
    ],
  ])('reads %j', (env, expected) => {
    expect(parseStorageConfig(env)).toMatchObject(expected);
  });

  it.each([
    [{ STORAGE_BACKEND: 'ftp' }, /^config: STORAGE_BACKEND must be "disk" or "s3", got "ftp"$/],
    [{ STORAGE_MAX_FILE_SIZE: 'lots' }, /^config: STORAGE_MAX_FILE_SIZE must be a size/],
    [{ STORAGE_MAX_FILE_SIZE: '0' }, /^config: STORAGE_MAX_FILE_SIZE/],
    [{ STORAGE_BACKEND: 's3' }, /^config: STORAGE_BACKEND=s3 needs S3_BUCKET/],
    [{ STORAGE_BACKEND: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'localhost:9000' }, /^config: S3_ENDPOINT must be an http\(s\) URL/],
    [{ STORAGE_BACKEND: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k' }, /^config: set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/],
    [{ STORAGE_BACKEND: 's3', S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'maybe' }, /^config: S3_FORCE_PATH_STYLE must be true or false/],
  ])('refuses %j with one line', (env, message) => {
    expect(() => parseStorageConfig(env)).toThrow(message);
  });
});
