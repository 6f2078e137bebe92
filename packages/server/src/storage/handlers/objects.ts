import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type Principal } from '../../http/index.js';
import { CACHE_CONTROL, serveObject } from '../download.js';
import { transformOf } from '../transform.js';
import { bucketName, objectPath } from '../names.js';
import type { ObjectService } from '../objects.js';
import type * as S from '../schemas.js';

/**
 * The caller the route's guard resolved (http/guards.ts `appOrConsole`, at `onRequest`, before
 * the body is read). A route without that guard is a bug of the route table, not the client's.
 * @example const who = callerOf(req); await objects.find(who, bucket, name);
 */
export function callerOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error(`storage: ${req.routeOptions.url} has no caller guard in routes.ts`);
  return req.principal;
}

const PRIVATE = CACHE_CONTROL.private;

const notFound = () => new ApiError('not_found', 'No such object (or it is not visible to you).');
const limitOf = (v: string | undefined, fallback: number, max: number) => (v === undefined ? fallback : Math.min(Number(v), max));

type BucketRequest<B = unknown> = FastifyRequest<{ Params: Static<typeof S.BucketOnlyParams>; Body: B }>;

/**
 * Objects, as the caller (docs/api.md §5.7): every statement runs under the caller's role, so
 * the project's policies on storage.objects decide. The caller is the route guard's.
 * @example const h = createObjectHandlers(objects); app.get('/api/v1/storage/object/:bucket/*', { onRequest: caller }, h.download)
 */
export function createObjectHandlers(objects: ObjectService) {
  return {
    /** GET and HEAD of an object's bytes. */
    async download(req: FastifyRequest<{ Querystring: Static<typeof S.DownloadQuery> }>, reply: FastifyReply) {
      const { bucket, name } = objectPath(req.url, 'object');
      const found = await objects.find(callerOf(req), bucket, name);
      if (!found) throw notFound();
      return serveObject(objects, req, reply, found, {
        cacheControl: PRIVATE,
        download: req.query.download,
        transform: transformOf(req.query),
      });
    },

    list(req: FastifyRequest<{ Params: Static<typeof S.BucketOnlyParams>; Querystring: Static<typeof S.ListQuery> }>) {
      const q = req.query;
      return objects.list(callerOf(req), req.params.bucket, {
        prefix: q.prefix ?? '',
        search: q.search ?? '',
        limit: Math.max(1, limitOf(q.limit, 100, 1000)),
        offset: limitOf(q.offset, 0, Number.MAX_SAFE_INTEGER),
      });
    },

    async remove(req: FastifyRequest) {
      const { bucket, name } = objectPath(req.url, 'object');
      const [deleted] = await objects.remove(callerOf(req), bucket, [name]);
      if (!deleted) throw notFound();
      return deleted;
    },

    removeMany: (req: BucketRequest<Static<typeof S.DeleteMany>>) => objects.remove(callerOf(req), req.params.bucket, req.body.paths),
    move: (req: BucketRequest<Static<typeof S.FromTo>>) => objects.move(callerOf(req), req.params.bucket, req.body.from, req.body.to),
    copy: (req: BucketRequest<Static<typeof S.FromTo>>) => objects.copy(callerOf(req), req.params.bucket, req.body.from, req.body.to),

    /** POST or PUT of the raw body (routes.ts mounts it where the body is the request stream). */
    async upload(req: FastifyRequest, reply: FastifyReply) {
      const { bucket, name } = objectPath(req.url, 'object');
      const length = req.headers['content-length'];
      const result = await objects.upload(callerOf(req), {
        bucket: bucketName(bucket),
        name,
        body: req.raw,
        contentType: req.headers['content-type'],
        contentLength: length === undefined ? null : Number(length),
        upsert: req.headers['x-upsert'] === 'true',
      });
      return reply.code(201).send(result);
    },
  };
}
