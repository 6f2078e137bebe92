import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../http/index.js';

/**
 * The caller the route's guard resolved (http/guards.ts `appOrConsole`, at `onRequest`, before
 * the body is read). A route without that guard is a bug of the route table, not the client's.
 * @example const who = callerOf(req); await objects.find(who, bucket, name);
 */
export function callerOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error(`storage: ${req.routeOptions.url} has no caller guard in routes.ts`);
  return req.principal;
}
