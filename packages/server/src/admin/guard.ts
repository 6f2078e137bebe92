import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { PrincipalResolver } from '../http/principal.js';

/**
 * Route guards: resolve who is calling once per request.
 * @example app.post('/api/v1/sql', { preHandler: guards.service }, handler)
 */
export function makeGuards(resolve: PrincipalResolver) {
  const any = async (req: FastifyRequest) => {
    req.principal = await resolve(req.headers.apikey, req.headers.authorization);
  };
  const service = async (req: FastifyRequest) => {
    await any(req);
    if (req.principal?.role !== 'service') {
      throw new ApiError('forbidden', 'This endpoint needs the secret key (Authorization: Bearer sk_…).');
    }
  };
  return { any, service };
}

export type Guards = ReturnType<typeof makeGuards>;
