import type { App } from './server.js';

type JsonSchema = Record<string, unknown>;

interface Seen {
  method: string;
  url: string;
  body?: JsonSchema;
  querystring?: JsonSchema;
  params?: JsonSchema;
  /** Response schemas by status code, when the route declares them. */
  response?: Record<string, JsonSchema>;
  summary?: string;
  /** Declared by the route (`config: { redirect: true }`): it answers with a browser redirect. */
  redirect: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers 302 (a browser flow), not 200: the OpenAPI document says so. */
    redirect?: boolean;
  }
}

/**
 * Collects the routes registered under `prefixes` (with their TypeBox schemas, which are JSON
 * Schema) so the OpenAPI document can describe them from the same source that validates
 * them. Call it before those routes are registered; read the result once the app is ready.
 * @example const authPaths = collectRouteDocs(app, ['/v1/auth/']); … registerOpenApi(app, { …, extraPaths: authPaths })
 */
export function collectRouteDocs(app: App, prefixes: string[]): () => Record<string, JsonSchema> {
  const seen: Seen[] = [];
  app.addHook('onRoute', (route) => {
    if (!prefixes.some((p) => route.url.startsWith(p))) return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
    const schema = (route.schema ?? {}) as Pick<Seen, 'body' | 'querystring' | 'params' | 'response'>;
    const redirect = route.config?.redirect === true;
    for (const method of methods) seen.push({ method: method.toLowerCase(), url: route.url, ...schema, redirect });
  });
  let built: Record<string, JsonSchema> | null = null;
  return () => {
    built ??= build(seen);
    return built;
  };
}

function build(seen: Seen[]): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const r of seen) {
    // Fastify's `:param` is OpenAPI's `{param}`; a trailing wildcard (an object path) is `{path}`.
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
    const declared = (r.params?.properties ?? {}) as Record<string, JsonSchema>;
    const params = [...r.url.matchAll(/:([A-Za-z0-9_]+)|\/(\*)$/g)].map((m) => ({
      name: m[1] ?? 'path',
      in: 'path',
      required: true,
      schema: strip(declared[m[1] ?? '*'] ?? { type: 'string' }),
    }));
    const query = Object.entries((r.querystring?.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => ({
      name,
      in: 'query',
      required: ((r.querystring?.required as string[] | undefined) ?? []).includes(name),
      schema,
    }));
    const op: JsonSchema = {
      operationId: `${r.method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: [path.startsWith('/v1/auth') ? 'auth' : path.startsWith('/api/v1/storage') ? 'storage' : 'management'],
      ...(params.length || query.length ? { parameters: [...params, ...query] } : {}),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: strip(r.body) } } } } : {}),
      responses: {
        ...(r.response
          ? responses(r.response)
          : r.redirect
            ? {
                '302': {
                  description: 'A browser redirect (social sign-in): to the provider, or back to the app with the session in the fragment.',
                },
              }
            : { '200': { description: 'Success; docs/api.md gives the body of each endpoint.' } }),
        default: { $ref: '#/components/responses/Error' },
      },
    };
    paths[path] = { ...(paths[path] ?? {}), [r.method]: op };
  }
  return paths;
}

/** Declared response schemas as OpenAPI responses; a `format: binary` body is the file's own bytes. */
function responses(declared: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, schema] of Object.entries(declared)) {
    const description = typeof schema.description === 'string' ? schema.description : 'Success';
    if (schema.type === 'null') out[status] = { description };
    else if (schema.format === 'binary')
      out[status] = { description, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } };
    else out[status] = { description, content: { 'application/json': { schema: strip(schema) } } };
  }
  return out;
}

/** A plain JSON copy without TypeBox's symbol keys. */
function strip(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}
