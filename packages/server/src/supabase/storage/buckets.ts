/**
 * `/storage/v1/bucket`: Supabase's bucket calls on storage's bucket service (the same checks:
 * names, the server's size limit, media type patterns, the project file's managed fields).
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, SERVICE } from '../../http/index.js';
import type { Storage } from '../../storage/index.js';
import { type BucketBody, type BucketListQuery, bucketShape } from './shapes.js';

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 };

/**
 * A `file_size_limit` as storage-js sends it: a number of bytes, or a string such as `'20mb'`
 * (20 000 000 bytes, decimal units as Supabase reads them; `MiB` and the like are binary);
 * `null` and 0 are "no limit of the bucket's own".
 * @example sizeLimit('1kb') // 1000
 */
export function sizeLimit(v: number | string | null | undefined): number | null | undefined {
  if (v === undefined || v === null) return v;
  if (typeof v === 'number') return v === 0 ? null : v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : Number.NaN;
  if (!Number.isSafeInteger(n)) {
    throw new ApiError('invalid_request', 'file_size_limit is a number of bytes or a size such as "20MB" or "1GB".', [
      { field: 'file_size_limit', message: 'is not a size' },
    ]);
  }
  return n === 0 ? null : n;
}

const fields = (body: Static<typeof BucketBody>) => ({
  public: body.public,
  file_size_limit: sizeLimit(body.file_size_limit),
  allowed_mime_types: body.allowed_mime_types,
});

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * @example const h = createBucketHandlers(storage); app.get('/storage/v1/bucket', { onRequest: manage }, h.list);
 */
export function createBucketHandlers(storage: Storage) {
  const { buckets, objects } = storage;
  return {
    async list(req: FastifyRequest<{ Querystring: Static<typeof BucketListQuery> }>) {
      const q = req.query;
      let all = await buckets.list();
      if (q.search) all = all.filter((b) => b.id.includes(q.search as string));
      const column = q.sortColumn === 'name' ? 'id' : (q.sortColumn ?? 'id');
      const sign = q.sortOrder === 'desc' ? -1 : 1;
      all.sort((a, b) => sign * (a[column] < b[column] ? -1 : a[column] > b[column] ? 1 : 0));
      const offset = Number(q.offset ?? 0);
      const limit = q.limit === undefined ? all.length : Number(q.limit);
      const owners = await buckets.owners();
      return all.slice(offset, offset + limit).map((one) => bucketShape(one, owners.get(one.id) ?? null));
    },
    async get(req: IdRequest) {
      const b = await buckets.get(req.params.id);
      return bucketShape(b, (await buckets.owners()).get(b.id) ?? null);
    },
    async create(req: FastifyRequest<{ Body: Static<typeof BucketBody> }>, reply: FastifyReply) {
      const b = await buckets.create(req.body.id ?? req.body.name, fields(req.body));
      return reply.code(200).send({ name: b.id });
    },
    async update(req: FastifyRequest<{ Params: { id: string }; Body: Static<typeof BucketBody> }>) {
      await buckets.update(req.params.id, fields(req.body));
      return { message: 'Successfully updated' };
    },
    async remove(req: IdRequest) {
      await buckets.remove(req.params.id);
      return { message: 'Successfully deleted' };
    },
    /** Every object goes at once (their bytes right after, by the collector); Supabase's own words for its queued emptying. */
    async empty(req: IdRequest) {
      await objects.empty(SERVICE, req.params.id);
      return { message: 'Empty bucket has been queued. Completion may take up to an hour.' };
    },
  };
}
