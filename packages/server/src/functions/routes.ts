/**
 * The route table of `/api/v1/functions` (docs/functions.md): one route per method set, the
 * body handed to the function as it came (any content type, unparsed: a webhook's signature is
 * checked on the exact bytes), the function's answer sent as it gave it, and its failures in the
 * one error shape (`function_error` 500, `function_timeout` 504, `function_busy` 503).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type App } from '../http/index.js';
import type { Functions } from './index.js';
import type { CallOutcome } from './pool.js';

export const FUNCTION_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Headers of a function's answer that the server sets itself. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * Sends a function's answer as it gave it.
 * @example sendAnswer(reply, outcome);
 */
export function sendAnswer(reply: FastifyReply, out: Extract<CallOutcome, { ok: true }>): FastifyReply {
  reply.code(out.status);
  for (const [k, v] of out.headers) {
    if (OWN_HEADERS.has(k)) continue;
    if (k === 'set-cookie') {
      const prev = reply.getHeader('set-cookie');
      reply.header('set-cookie', prev === undefined ? [v] : [...(Array.isArray(prev) ? prev : [String(prev)]), v]);
    } else reply.header(k, v);
  }
  return reply.send(out.body ?? '');
}

/**
 * Mounts the routes in a scope of their own, whose one content-type parser hands the body
 * through as bytes (the JSON parsing of the rest of the API is untouched).
 * @example await registerFunctionRoutes(app, functions, 1024 * 1024);
 */
export async function registerFunctionRoutes(app: App, functions: Functions, bodyLimit: number): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
    const handler = async (req: FastifyRequest<{ Params: { name: string; '*'?: string } }>, reply: FastifyReply) => {
      const path = new URL(req.url, 'http://x');
      const out = await functions.dispatch(req, req.params.name, `${req.protocol}://${req.host}${path.pathname}${path.search}`);
      if (!out.ok)
        throw new ApiError(
          out.code,
          out.message,
          undefined,
          out.code === 'function_busy' ? { headers: { 'retry-after': '1' } } : undefined,
        );
      return sendAnswer(reply, out);
    };
    for (const url of ['/api/v1/functions/:name', '/api/v1/functions/:name/*'])
      scope.route({ method: [...FUNCTION_METHODS], url, handler });
  });
}
