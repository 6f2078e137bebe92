/**
 * The OpenAPI description of the routes other than the per-table ones: @fastify/swagger
 * (dynamic mode, OpenAPI 3.1) collects every route that declares a schema under the given
 * prefixes, from the same TypeBox schemas that validate its requests and serialize its answers.
 * `GET /api/v1/openapi.json` (rest/openapi) merges this with the tables' paths.
 *
 * A route documents itself through its schema: `summary`, `security` (`[]`: no key needed),
 * `tags` (default: `auth` under /v1/auth, `management` elsewhere; `management` operations are
 * shown to the secret key and admins only), `response` (status → schema; `Type.Null()` for
 * no body). `config: { redirect: true }` documents a browser redirect (302). Every operation
 * gets the error answers and an operationId when it names none.
 */
import swagger from '@fastify/swagger';
import type { App } from './server.js';

type JsonSchema = Record<string, unknown>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers 302 (a browser flow), not 200: the OpenAPI document says so. */
    redirect?: boolean;
  }
}

export interface RouteDocsOptions {
  /** URL prefixes whose routes are documented (when they declare a schema). */
  include: string[];
  /** Prefixes left out (documented elsewhere, like the per-table paths). */
  exclude: string[];
}

/** The documented routes: paths, and the component schemas they refer to. */
export interface RouteDocs {
  paths: Record<string, JsonSchema>;
  schemas: Record<string, JsonSchema>;
}

/** How a caller proves who it is; operations name them in `security`. */
export const SECURITY_SCHEMES = {
  apikey: { type: 'apiKey', in: 'header', name: 'apikey', description: 'The public key (pk_…) or the secret key (sk_…).' },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A user access token, or the secret key.' },
} as const;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ERROR = { $ref: '#/components/responses/Error' };

const operationId = (method: string, path: string) =>
  `${method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;

/**
 * Registers the collector; call it (and await it) before the routes it describes are added,
 * read the result once the app is ready.
 * @example const docs = await registerRouteDocs(app, { include: ['/v1/auth/'], exclude: [] }); … docs().paths
 */
export async function registerRouteDocs(app: App, options: RouteDocsOptions): Promise<() => RouteDocs> {
  const documented = (url: string) => options.include.some((p) => url.startsWith(p)) && !options.exclude.some((p) => url.startsWith(p));
  await app.register(swagger, {
    mode: 'dynamic',
    openapi: { openapi: '3.1.0', info: { title: 'Plinth API', version: '1' }, components: { securitySchemes: SECURITY_SCHEMES } },
    transform: ({ schema, url, route }) => {
      if (!schema || !documented(url)) return { schema: { ...schema, hide: true }, url };
      const out: Record<string, unknown> = { ...schema };
      out.tags ??= [url.startsWith('/v1/auth') ? 'auth' : 'management'];
      // A trailing wildcard (a storage object's path, `/` and all) is the path parameter `path`.
      if (url.endsWith('/*')) {
        const params = out.params as { properties?: Record<string, unknown>; required?: string[] } | undefined;
        if (params?.properties?.['*']) {
          const { '*': wild, ...rest } = params.properties;
          out.params = {
            ...params,
            properties: { ...rest, path: wild },
            required: (params.required ?? []).map((k) => (k === '*' ? 'path' : k)),
          };
        }
        url = `${url.slice(0, -2)}/:path`;
      }
      if (route.config?.redirect === true) {
        out.response = {
          302: {
            type: 'null',
            description: 'A browser redirect (social sign-in): to the provider, or back to the app with the session in the fragment.',
          },
        };
      }
      return { schema: out, url };
    },
  });
  let built: RouteDocs | null = null;
  return () => {
    built ??= collect(app.swagger() as unknown as JsonSchema);
    return built;
  };
}

/** A copy of swagger's document with what every operation of ours has: ids, summaries, errors. */
function collect(doc: JsonSchema): RouteDocs {
  const paths = structuredClone((doc.paths ?? {}) as Record<string, Record<string, JsonSchema>>);
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      // A route of several methods (GET and HEAD) shares one operation object: each gets its own.
      const op = structuredClone(item[method]);
      item[method] = op;
      op.operationId ??= operationId(method, path);
      op.summary ??= `${method.toUpperCase()} ${path}`;
      const responses = (op.responses ?? {}) as Record<string, { description?: string; $ref?: string }>;
      for (const [status, r] of Object.entries(responses)) {
        if (r.description === 'Default Response') r.description = status === '204' ? 'Done; no body.' : 'Success.';
      }
      if (!Object.keys(responses).some((s) => s.startsWith('4'))) responses['4XX'] = { ...ERROR };
      responses['5XX'] ??= { ...ERROR };
      op.responses = responses;
    }
  }
  const schemas = structuredClone(((doc.components as JsonSchema | undefined)?.schemas ?? {}) as Record<string, JsonSchema>);
  return { paths, schemas };
}
