/**
 * The HTTP layer every area mounts on: the Fastify factory with its one error shape and CORS
 * (server.ts), who is calling (principal.ts resolves keys and tokens, guards.ts is the one
 * place a request's caller is worked out), the OpenAPI collection of route schemas, response
 * schemas checked against packages/shared's wire types (wire.ts), and the request metrics of
 * GET /metrics (metrics.ts).
 */
export { ApiError, fromDbError } from './errors.js';
export { type CallerGuards, type ConsoleOptions, createCallerGuards, readCookie, readOnly } from './guards.js';
export { CONSOLE_COOKIE, type ConsoleSessionLookup, cookieProblem, fromOwnPage, isOwnOrigin } from './console.js';
export {
  createPrincipalResolver,
  mfaRequired,
  type Principal,
  type PrincipalResolver,
  type ProjectKeys,
  type ResolveOptions,
  SERVICE,
  type SupabaseKeys,
  type TokenVerifier,
  type VerifiedToken,
} from './principal.js';
export {
  createSupabaseKeys,
  isLoopbackHost,
  SUPABASE_LOCAL_PUBLISHABLE_KEY,
  SUPABASE_LOCAL_SECRET_KEY,
  supabaseKeysOf,
} from './supabase-keys.js';
export { type RouteDocs, SECURITY_SCHEMES, registerRouteDocs } from './route-docs.js';
export { createMetrics, installPrimaryMetrics, type Metrics } from './metrics.js';
export { type App, createHttpServer } from './server.js';
export { Nullable, Timestamp, wireSchema } from './wire.js';
