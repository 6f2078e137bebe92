/**
 * `/functions/v1/<name>`: Supabase Edge Functions' face (docs/supabase.md, "Edge Functions") on
 * the functions area (packages/server/src/functions/): the same functions, callers and limits;
 * the function sees the URL as Supabase's runtime gives it (`/<name>/…`, without /functions/v1),
 * and the failures are in the shapes Supabase's gateway and runtime answer with (what
 * supabase-js's `functions.invoke` turns into a FunctionsHttpError).
 * What it adds: the routes under /functions/v1.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Functions, FUNCTION_METHODS, sendAnswer } from '../../functions/index.js';
import { ApiError, type App } from '../../http/index.js';

export interface SupabaseFunctionsDeps {
  functions: Functions;
  /** The body limit of the rest of the API (BODY_LIMIT). */
  bodyLimit: number;
}

/** A failure as Supabase answers it: its status and body. */
function supabaseFailure(code: string, message: string): { status: number; body: Record<string, unknown> } {
  switch (code) {
    case 'function_not_found':
      return { status: 404, body: { code: 'NOT_FOUND', message: 'Requested function was not found' } };
    case 'unauthorized':
    case 'invalid_token':
    case 'token_expired':
      return {
        status: 401,
        body: {
          code: 401,
          message: message.includes('Authorization') || message.includes('apikey') ? 'Missing authorization header' : 'Invalid JWT',
        },
      };
    case 'function_timeout':
      // Supabase's runtime answers 546 when a worker is stopped for a resource limit (wall clock, CPU, memory).
      return {
        status: 546,
        body: { code: 'WORKER_LIMIT', message: 'Function failed due to not having enough compute resources (please check logs)' },
      };
    case 'function_busy':
      return { status: 503, body: { code: 'WORKER_LIMIT', message: 'Function has reached its limit of concurrent calls; retry shortly' } };
    case 'function_error':
      return message.includes('did not')
        ? { status: 503, body: { code: 'BOOT_ERROR', message: 'Function failed to start (please check logs)' } }
        : { status: 500, body: { code: 'WORKER_ERROR', message: 'Function exited due to an error (please check logs)' } };
    default:
      return { status: 500, body: { code: 'WORKER_ERROR', message } };
  }
}

/**
 * Mounts /functions/v1 on the functions area.
 * @example await registerSupabaseFunctions(app, { functions, bodyLimit: 1 << 20 });
 */
export async function registerSupabaseFunctions(app: App, deps: SupabaseFunctionsDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.bodyLimit }, (_req, body, done) => done(null, body));
    const handler = async (req: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) => {
      const url = new URL(req.url, 'http://x');
      const inner = url.pathname.replace(/^\/functions\/v1/, '');
      try {
        const out = await deps.functions.dispatch(req, req.params.name, `${req.protocol}://${req.host}${inner}${url.search}`);
        if (out.ok) return sendAnswer(reply, out);
        const f = supabaseFailure(out.code, out.message);
        return reply.code(f.status).send(f.body);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        const f = supabaseFailure(err.code, err.message);
        return reply.code(f.status).send(f.body);
      }
    };
    for (const url of ['/functions/v1/:name', '/functions/v1/:name/*']) scope.route({ method: [...FUNCTION_METHODS], url, handler });
  });
}
