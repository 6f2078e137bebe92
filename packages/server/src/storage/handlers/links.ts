import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CACHE_CONTROL, serveObject } from '../download.js';
import { transformOf } from '../transform.js';
import type { Links } from '../links.js';
import { objectPath } from '../names.js';
import type { ObjectService } from '../objects.js';
import type * as S from '../schemas.js';
import type { SignedUrls } from '../signed.js';
import { callerOf } from './objects.js';

const SIGNED = CACHE_CONTROL.signed;
const PUBLIC = CACHE_CONTROL.public;

/**
 * Reads without a key (docs/api.md §5.7): signed URLs, made by whoever may read the object and
 * bound to that very object, and objects of public buckets.
 * @example const h = createLinkHandlers(objects, links, signed); app.get('/api/v1/storage/public/:bucket/*', h.publicDownload)
 */
export function createLinkHandlers(objects: ObjectService, links: Links, signed: SignedUrls) {
  return {
    /** POST /sign/{bucket}/{path}: a URL for the object the caller may read, as it is now. */
    async sign(req: FastifyRequest<{ Body: Static<typeof S.SignBody> }>) {
      const { bucket, name } = objectPath(req.url, 'sign');
      const found = await links.signable(callerOf(req), bucket, name);
      return { signed_url: await signed.sign({ bucket, name, id: found.id, etag: found.etag }, req.body.expires_in) };
    },

    /** GET/HEAD of a signed URL: while the object it was signed for is still there, unchanged. */
    async signedDownload(req: FastifyRequest<{ Querystring: Static<typeof S.SignedQuery> }>, reply: FastifyReply) {
      const { bucket, name } = objectPath(req.url, 'sign');
      const { object, transform } = await links.signedRead(req.query.token, bucket, name);
      return serveObject(objects, req, reply, object, {
        cacheControl: SIGNED,
        download: req.query.download,
        transform: transform ?? transformOf(req.query),
      });
    },

    /** GET/HEAD of an object of a public bucket. */
    async publicDownload(req: FastifyRequest<{ Querystring: Static<typeof S.DownloadQuery> }>, reply: FastifyReply) {
      const { bucket, name } = objectPath(req.url, 'public');
      const found = await links.publicObject(bucket, name);
      return serveObject(objects, req, reply, found, {
        cacheControl: PUBLIC,
        download: req.query.download,
        transform: transformOf(req.query),
      });
    },
  };
}
