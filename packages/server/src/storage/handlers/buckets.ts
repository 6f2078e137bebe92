import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BucketService } from '../buckets.js';
import type * as S from '../schemas.js';

type NameRequest = FastifyRequest<{ Params: Static<typeof S.BucketParams> }>;

/**
 * Buckets (docs/api.md §5.7): management only; the guard of routes.ts says who.
 * @example const h = createBucketHandlers(buckets); app.get('/api/v1/storage/buckets', { onRequest: callers.operator() }, h.list)
 */
export function createBucketHandlers(buckets: BucketService) {
  return {
    async create(req: FastifyRequest<{ Body: Static<typeof S.BucketCreate> }>, reply: FastifyReply) {
      const { name, ...fields } = req.body;
      return reply.code(201).send(await buckets.create(name, fields));
    },
    list: () => buckets.list(),
    get: (req: NameRequest) => buckets.get(req.params.name),
    update: (req: FastifyRequest<{ Params: Static<typeof S.BucketParams>; Body: Static<typeof S.BucketPatch> }>) =>
      buckets.update(req.params.name, req.body),
    remove: (req: NameRequest) => buckets.remove(req.params.name),
  };
}
