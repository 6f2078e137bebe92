import cors from '@fastify/cors';
import { ERROR_STATUS } from '@plinth/shared';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { STATUS_CODES } from 'node:http';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { DbError, DbUnavailableError } from '../db/index.js';
import { ApiError, fromDbError } from './errors.js';
import type { Metrics } from './metrics.js';
import type { Principal } from './principal.js';
import { type KnownRoute, suggestRoute } from './route-hints.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface HttpOptions {
  logger: Logger;
  bodyLimit: number;
  /** Decides per request whether a browser Origin may call the API (settings may change any time). */
  isOriginAllowed: (origin: string) => boolean;
  /** What would allow a refused origin (the setting to change), for the 403 and the log line. */
  corsAdvice?: (origin: string) => string;
  /** Whose `X-Forwarded-For` decides the client IP (config TRUST_PROXY); none by default. */
  trustProxy?: boolean | string[];
  /**
   * How long a client may take to send a whole request (headers and body); 0 for no limit.
   * A client trickling its body cannot hold a connection longer (REQUEST_TIMEOUT_MS).
   */
  requestTimeoutMs?: number;
  /** Counts every answer for GET /metrics. */
  metrics?: Metrics;
}

const HEADERS_TIMEOUT_MS = 10_000;

/** The one error shape for what fails before Fastify has a request: bad HTTP, huge headers, a client too slow. */
function clientErrorResponse(err: NodeJS.ErrnoException): { status: number; body: string } {
  const api =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT'
      ? new ApiError('request_timeout', 'The request was not received in time; send it faster or in one go.')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('headers_too_large', 'The request headers are too large (16 KiB at most).')
        : new ApiError('invalid_request', 'The request is not valid HTTP.');
  return { status: api.status, body: JSON.stringify(api.toBody()) };
}

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  Logger,
  TypeBoxTypeProvider
>;

/** Maps any thrown error to the one error shape (docs/api.md §1). Unknown errors are 500 and logged. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof DbUnavailableError) {
    return new ApiError('database_unavailable', 'The database is unavailable; try again shortly.', undefined, {
      cause: err,
      headers: { 'retry-after': '1' },
    });
  }
  const e = err as FastifyError & { validation?: unknown[]; validationContext?: string };
  if (e?.validation) {
    const details = (e.validation as Array<{ instancePath?: string; message?: string; params?: Record<string, unknown> }>).map((v) => ({
      field: `${e.validationContext ?? 'body'}${v.instancePath?.replace(/\//g, '.') ?? ''}${v.params?.missingProperty ? `.${v.params.missingProperty}` : ''}${v.params?.additionalProperty ? `.${v.params.additionalProperty}` : ''}`,
      message: v.message ?? 'is invalid',
    }));
    return new ApiError(
      'invalid_request',
      `The request ${e.validationContext ?? 'body'} is invalid: ${details[0]?.field} ${details[0]?.message}.`,
      details,
    );
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The Content-Length does not match the body.');
  }
  if (err instanceof SyntaxError || e?.name === 'SyntaxError') return new ApiError('invalid_json', 'The request body is not valid JSON.');
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 429) return new ApiError('rate_limited', 'Too many requests; try again later.');
  if (status >= 400 && status < 500) return new ApiError('invalid_request', 'The request is invalid.', undefined, { status });
  if (err instanceof DbError) {
    // An area's own statement that no route mapped: the one table decides (a trigger's raise,
    // a value PostgreSQL refuses, a timeout…); what it calls a server fault is a logged 500.
    const mapped = fromDbError(err);
    if (mapped instanceof ApiError) return mapped;
    return new ApiError('internal_error', 'The database refused the request.', undefined, { cause: err });
  }
  return new ApiError('internal_error', 'Something went wrong on our side.', undefined, { cause: err });
}

/**
 * 5xx codes that describe the server's state: warned about once (0), or once a minute while it
 * lasts. A database outage is folded by the logger itself (db/outage-log.ts), with every other
 * part of the instance that meets it.
 */
const EXPECTED_5XX: Partial<Record<string, number>> = { sms_not_configured: 0, database_unavailable: 60_000 };

/**
 * The Fastify instance every area mounts on: one error shape, JSON body limits, CORS decided
 * per request, a `principal` slot on each request.
 * @example const app = await createHttpServer({ logger, bodyLimit: 1 << 20, isOriginAllowed: () => false });
 */
export async function createHttpServer(options: HttpOptions): Promise<App> {
  const requestTimeout = options.requestTimeoutMs ?? 120_000;
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit,
    // Fastify's two lines per request cost CPU on the hot path; see the debug hook below.
    logController: new LogController({ disableRequestLogging: true }),
    // A client can write X-Forwarded-For itself: believed only from configured proxies.
    trustProxy: options.trustProxy ?? false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    requestTimeout,
    // Node checks request and header timeouts on this interval (30 s by default). A headers
    // timeout above the request timeout keeps Node from applying the request timeout at all
    // (measured on Node 20): it is never more.
    http: {
      headersTimeout: requestTimeout > 0 ? Math.min(HEADERS_TIMEOUT_MS, requestTimeout) : HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const { status, body } = clientErrorResponse(err);
      // An answer to HEAD has no body: a client would read the body as the next response.
      const head = (err as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${head ? '' : body}`,
        );
      }
      socket.destroy();
    },
    // Routing failures (a path that is not valid percent-encoding, a parameter too long) in our shape.
    frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
      const api =
        err.code === 'FST_ERR_BAD_URL'
          ? new ApiError('invalid_request', 'The URL path is not valid percent-encoding.')
          : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new ApiError('invalid_request', 'A path segment is too long.')
            : toApiError(err);
      reply.code(api.status).type('application/json; charset=utf-8').send(api.toBody());
    },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.decorateRequest('principal', null);
  app.decorateRequest('admin', null);

  const warned = new Map<string, number>();
  app.setErrorHandler((err, request, reply) => {
    const api = toApiError(err);
    const expected = EXPECTED_5XX[api.code];
    if (api.code === 'database_unavailable' && api.cause instanceof DbUnavailableError) {
      request.log.warn({ err: api.cause }, `answering ${api.status} ${api.code}`);
    } else if (expected !== undefined) {
      // A known state of the server (no SMS provider, the database down), not a bug: one
      // warning naming the cause, not an error with a stack per request.
      const reason = api.cause instanceof Error ? api.cause.message : api.message;
      const key = `${api.code} ${reason}`;
      const last = warned.get(key);
      if (last === undefined || (expected > 0 && Date.now() - last > expected)) {
        warned.set(key, Date.now());
        request.log.warn({ code: api.code, reason }, `answering ${api.status} ${api.code}: ${reason}`);
      }
    } else if (api.status >= 500) {
      request.log.error(
        { err: api.cause ?? err, code: api.code, url: request.url.split('?')[0], method: request.method },
        'request failed',
      );
    }
    if (api.headers) reply.headers(api.headers);
    reply.code(api.status).type('application/json; charset=utf-8').send(api.toBody());
  });

  // After the error handler: the preflight route @fastify/cors adds takes the handler in
  // force when it is added (an OPTIONS request with a body of another type answered in
  // Fastify's own shape before).
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin === undefined ? false : options.isOriginAllowed(origin)),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: [
      'apikey',
      'authorization',
      'content-type',
      'prefer',
      'x-client-info',
      'accept',
      'range',
      'x-upsert',
      'if-none-match',
      'cache-control',
      'x-metadata',
      // What Supabase's clients send (docs/supabase.md): auth-js's API version, postgrest-js's
      // schema profiles, functions-js's region, and the TUS protocol of resumable uploads.
      'x-supabase-api-version',
      'accept-profile',
      'content-profile',
      'x-region',
      'tus-resumable',
      'upload-length',
      'upload-offset',
      'upload-metadata',
      'upload-defer-length',
    ],
    exposedHeaders: [
      'content-range',
      'retry-after',
      'server-timing',
      'etag',
      'content-disposition',
      'content-length',
      'accept-ranges',
      // What Supabase's clients and a TUS client read from an answer.
      'x-supabase-api-version',
      'preference-applied',
      'content-profile',
      'x-relay-error',
      'location',
      'tus-resumable',
      'upload-offset',
      'upload-length',
      'upload-expires',
    ],
    maxAge: 600,
    strictPreflight: false,
  });

  const metrics = options.metrics;
  if (metrics) {
    app.addHook('onResponse', (request, reply, done) => {
      metrics.observe(request, reply);
      done();
    });
  }

  if (options.logger.isLevelEnabled('debug')) {
    // Path only: query strings can carry filter values a user would not want in logs.
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug(
        { method: request.method, path: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
        'request',
      );
    });
  }

  // Every route, for the "did you mean" of a path that matches none (route-hints.ts).
  const routes: KnownRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });

  // A refused origin is logged once (per process, up to 1000 origins): the browser's own
  // message ("Failed to fetch") names no setting, the server's log does.
  const refusedOrigins = new Set<string>();
  app.setNotFoundHandler((request, reply) => {
    // @fastify/cors hands a preflight from an origin it refused to the not-found handler.
    const origin = request.headers.origin;
    if (request.method === 'OPTIONS' && origin && request.headers['access-control-request-method']) {
      const advice = options.corsAdvice?.(origin) ?? 'add it to the cors_origins auth setting';
      if (!refusedOrigins.has(origin) && refusedOrigins.size < 1000) {
        refusedOrigins.add(origin);
        request.log.warn(
          { origin: origin.slice(0, 200) },
          `CORS: refused a request from the page origin ${origin.slice(0, 200)}: ${advice}`,
        );
      }
      reply.code(403).send({ code: 'forbidden', message: `The origin ${origin.slice(0, 200)} may not call this API: ${advice}.` });
      return;
    }
    const path = request.url.split('?')[0];
    const meant = suggestRoute(request.method, path, routes);
    const shown = path.slice(0, 300);
    reply.code(ERROR_STATUS.route_not_found).send({
      code: 'route_not_found',
      message: meant
        ? `No route ${request.method} ${shown}; did you mean ${request.method} ${meant.slice(0, 300)}?`
        : `No route ${request.method} ${shown}.`,
      ...(meant ? { details: { did_you_mean: meant.slice(0, 300) } } : {}),
    });
  });

  return app;
}
