/**
 * The storage route table (docs/storage.md): every route of /api/v1/storage, its guard on the line.
 * Uploads are mounted in a scope of their own whose only body parser hands the request stream
 * through untouched, so the bytes stream to the backend and the rest of the API keeps its JSON
 * parser and body limit.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import { SERVICE } from '../http/index.js';
import type { Principal } from '../http/index.js';
import type { App } from '../http/index.js';
import type { BucketService } from './buckets.js';
import { serveObject } from './download.js';
import { bucketName, decodeName } from './names.js';
import type { ObjectService } from './objects.js';
import * as S from './schemas.js';
import type { SignedUrls } from './signed.js';

export const STORAGE_PREFIX = '/api/v1/storage/';

export interface StorageRouteDeps {
  objects: ObjectService;
  buckets: BucketService;
  signed: SignedUrls;
  /** Who is calling: the key headers' principal, or (admin's `guards.caller`) the console's cookie as the secret key. */
  caller: (req: FastifyRequest) => Promise<Principal>;
  /** The management guard (secret key or admin session), from the admin area. */
  manage: (req: FastifyRequest) => Promise<void>;
}

const OBJECT = '/api/v1/storage/object/:bucket';
const PRIVATE = 'private, no-cache';
const PUBLIC = 'public, max-age=3600';
/** How long a refused upload's remaining body is read and discarded before the connection closes. */
const LINGER_MS = 5000;

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, string>; Body: unknown }>;

/**
 * Bucket and object name from the raw path (not the router's decoding), so that exactly one
 * percent-decoding happens and any name (`?`, `#`, `%`, unicode) round-trips.
 */
export function objectPath(url: string, area: 'object' | 'sign' | 'public'): { bucket: string; name: string } {
  const q = url.indexOf('?');
  const rest = url.slice(`${STORAGE_PREFIX}${area}/`.length, q === -1 ? url.length : q);
  const slash = rest.indexOf('/');
  if (slash <= 0) throw new ApiError('invalid_object_name', 'The path must be /{bucket}/{object name}.');
  return { bucket: rest.slice(0, slash), name: decodeName(rest.slice(slash + 1)) };
}

const limitOf = (v: string | undefined, fallback: number, max: number) => (v === undefined ? fallback : Math.min(Number(v), max));

/**
 * Mounts the storage routes.
 * @example await registerStorageRoutes(app, { objects, buckets, signed, caller: callers.callerOf, manage: guards.service });
 */
export async function registerStorageRoutes(app: App, deps: StorageRouteDeps): Promise<void> {
  const { objects, buckets, signed } = deps;
  const who = (req: FastifyRequest): Promise<Principal> => deps.caller(req);
  const manage = { onRequest: deps.manage };
  // The caller is resolved before the body is read (and kept on the request for the handler):
  // a cookie change from another page is refused as csrf_rejected, whatever its body.
  const asCaller = {
    onRequest: async (req: FastifyRequest) => {
      await who(req);
    },
  };

  // Buckets: management only.
  app.post('/api/v1/storage/buckets', { ...manage, schema: { body: S.BucketCreate, response: { 201: S.Bucket } } }, async (req, reply) => {
    const { name, ...fields } = req.body;
    return reply.code(201).send(await buckets.create(name, fields));
  });
  app.get('/api/v1/storage/buckets', { ...manage, schema: { response: { 200: { type: 'array', items: S.Bucket } } } }, () =>
    buckets.list(),
  );
  app.get('/api/v1/storage/buckets/:name', { ...manage, schema: { params: S.BucketParams, response: { 200: S.Bucket } } }, (req) =>
    buckets.get(req.params.name),
  );
  app.patch(
    '/api/v1/storage/buckets/:name',
    { ...manage, schema: { params: S.BucketParams, body: S.BucketPatch, response: { 200: S.Bucket } } },
    (req) => buckets.update(req.params.name, req.body),
  );
  app.delete('/api/v1/storage/buckets/:name', { ...manage, schema: { params: S.BucketParams, response: { 200: S.Bucket } } }, (req) =>
    buckets.remove(req.params.name),
  );

  // Objects, as the caller: the policies on storage.objects decide.
  const download = async (req: Req, reply: FastifyReply) => {
    const principal = await who(req);
    const { bucket, name } = objectPath(req.url, 'object');
    const found = await objects.find(principal, bucket, name);
    if (!found) throw new ApiError('not_found', 'No such object (or it is not visible to you).');
    return serveObject(objects, req, reply, found, { cacheControl: PRIVATE, download: req.query.download });
  };
  app.route({
    method: ['GET', 'HEAD'],
    url: `${OBJECT}/*`,
    ...asCaller,
    schema: { ...S.STORAGE_TAG, params: S.ObjectParams, querystring: S.DownloadQuery, response: S.BYTES_RESPONSE },
    handler: download,
  });
  app.get(
    `${OBJECT}`,
    {
      ...asCaller,
      schema: {
        ...S.STORAGE_TAG,
        params: S.BucketOnlyParams,
        querystring: S.ListQuery,
        response: { 200: { type: 'array', items: S.ListEntry } },
      },
    },
    async (req) => {
      const q = req.query;
      return objects.list(await who(req), req.params.bucket, {
        prefix: q.prefix ?? '',
        search: q.search ?? '',
        limit: Math.max(1, limitOf(q.limit, 100, 1000)),
        offset: limitOf(q.offset, 0, Number.MAX_SAFE_INTEGER),
      });
    },
  );
  app.delete(
    `${OBJECT}/*`,
    { ...asCaller, schema: { ...S.STORAGE_TAG, params: S.ObjectParams, response: { 200: S.ObjectInfo } } },
    async (req) => {
      const { bucket, name } = objectPath(req.url, 'object');
      const [deleted] = await objects.remove(await who(req), bucket, [name]);
      if (!deleted) throw new ApiError('not_found', 'No such object (or it is not visible to you).');
      return deleted;
    },
  );
  app.delete(
    `${OBJECT}`,
    {
      ...asCaller,
      schema: {
        ...S.STORAGE_TAG,
        params: S.BucketOnlyParams,
        body: S.DeleteMany,
        response: { 200: { type: 'array', items: S.ObjectInfo } },
      },
    },
    async (req) => objects.remove(await who(req), req.params.bucket, req.body.paths),
  );
  app.post(
    `${OBJECT}/move`,
    { ...asCaller, schema: { ...S.STORAGE_TAG, params: S.BucketOnlyParams, body: S.FromTo, response: { 200: S.ObjectInfo } } },
    async (req) => objects.move(await who(req), req.params.bucket, req.body.from, req.body.to),
  );
  app.post(
    `${OBJECT}/copy`,
    { ...asCaller, schema: { ...S.STORAGE_TAG, params: S.BucketOnlyParams, body: S.FromTo, response: { 200: S.Uploaded } } },
    async (req) => objects.copy(await who(req), req.params.bucket, req.body.from, req.body.to),
  );

  // Signed URLs: made by whoever may read the object, then read without headers until they expire.
  app.post(
    '/api/v1/storage/sign/:bucket/*',
    { ...asCaller, schema: { ...S.STORAGE_TAG, params: S.ObjectParams, body: S.SignBody, response: { 200: S.Signed } } },
    async (req) => {
      const principal = await who(req);
      const { bucket, name } = objectPath(req.url, 'sign');
      if (!(await objects.find(principal, bucket, name))) throw new ApiError('not_found', 'No such object (or it is not visible to you).');
      return { signed_url: await signed.sign(bucket, name, req.body.expires_in) };
    },
  );
  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/v1/storage/sign/:bucket/*',
    schema: { ...S.NO_KEY, params: S.ObjectParams, querystring: S.SignedQuery, response: S.BYTES_RESPONSE },
    handler: async (req: Req, reply) => {
      const { bucket, name } = objectPath(req.url, 'sign');
      const grant = await signed.verify(req.query.token, bucket, name);
      const found = await objects.find(SERVICE, bucket, name);
      if (!found) throw new ApiError('not_found', 'The object no longer exists.');
      const maxAge = Math.max(0, Math.min(3600, grant.exp - Math.floor(Date.now() / 1000)));
      return serveObject(objects, req, reply, found, { cacheControl: `private, max-age=${maxAge}`, download: req.query.download });
    },
  });

  // Public buckets: no key at all.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/v1/storage/public/:bucket/*',
    schema: { ...S.NO_KEY, params: S.ObjectParams, querystring: S.DownloadQuery, response: S.BYTES_RESPONSE },
    handler: async (req: Req, reply) => {
      const { bucket, name } = objectPath(req.url, 'public');
      const b = await buckets.find(bucket);
      const found = b?.public ? await objects.find(SERVICE, bucket, name) : null;
      if (!found) throw new ApiError('not_found', 'No such object in a public bucket.');
      return serveObject(objects, req, reply, found, { cacheControl: PUBLIC, download: req.query.download });
    },
  });

  // Uploads: the raw body, streamed.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    // Fastify refuses a malformed Content-Type before any parser: for an upload that is the file's type.
    raw.setErrorHandler((err) => {
      if ((err as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        throw new ApiError('invalid_mime_type', 'The Content-Type is not a valid media type such as image/png.');
      }
      throw err;
    });
    // A refused upload is answered before its body is read. The client may still be sending:
    // as nginx's lingering close does, what it sends for a few more seconds is read and
    // discarded (never stored), so it can read the answer instead of meeting a reset; then the
    // connection is closed. A client that finishes in time keeps its connection.
    raw.addHook('onResponse', async (req) => {
      if (req.raw.complete) return;
      const timer = setTimeout(() => req.raw.destroy(), LINGER_MS);
      timer.unref();
      req.raw.once('end', () => clearTimeout(timer));
      req.raw.once('close', () => clearTimeout(timer));
      req.raw.resume();
    });
    raw.route({
      method: ['POST', 'PUT'],
      url: `${OBJECT}/*`,
      ...asCaller,
      schema: {
        ...S.STORAGE_TAG,
        params: S.ObjectParams,
        headers: { type: 'object', properties: { 'x-upsert': { type: 'string', enum: ['true', 'false'] } } },
        response: { 201: S.Uploaded },
      },
      handler: async (req: Req, reply) => {
        const principal = await who(req);
        const { bucket, name } = objectPath(req.url, 'object');
        const length = req.headers['content-length'];
        const result = await objects.upload(principal, {
          bucket: bucketName(bucket),
          name,
          body: req.raw,
          contentType: req.headers['content-type'],
          contentLength: length === undefined ? null : Number(length),
          upsert: req.headers['x-upsert'] === 'true',
        });
        return reply.code(201).send(result);
      },
    });
  });
}
