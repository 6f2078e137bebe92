/** `GET /api/v1/openapi.json`: OpenAPI 3.1 of every exposed table, rebuilt when the schema changes. */
import type { PrincipalResolver } from '../../http/principal.js';
import type { App } from '../../http/server.js';
import type { SchemaCache, SchemaSnapshot } from '../schema-cache/index.js';
import { tablePaths } from './paths.js';
import { type JsonSchema, tableSchema } from './schema.js';

export { columnSchema, tableSchema, type JsonSchema } from './schema.js';

export interface OpenApiDeps {
  schema: SchemaCache;
  resolvePrincipal: PrincipalResolver;
  /** `PUBLIC_URL`, the document's server. */
  publicUrl: string;
  /** Path items other areas add (the auth endpoints), keyed by path; read once the routes are fixed. */
  extraPaths?: () => Record<string, JsonSchema>;
}

const ERROR_BODY: JsonSchema = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
  required: ['code', 'message'],
};

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The OpenAPI document of a schema snapshot. Deterministic: tables and paths in code-point order.
 * @example buildOpenApi(cache.get(), 'http://localhost:8080').components.schemas.todos
 */
export function buildOpenApi(snapshot: SchemaSnapshot, publicUrl: string, extraPaths: Record<string, JsonSchema> = {}): JsonSchema {
  const schemas: Record<string, JsonSchema> = {};
  const paths: Record<string, JsonSchema> = {};
  for (const name of [...snapshot.tables.keys()].sort(byName)) {
    const table = snapshot.tables.get(name)!;
    schemas[name] = tableSchema(table);
    Object.assign(paths, tablePaths(table));
  }
  for (const p of Object.keys(extraPaths).sort(byName)) paths[p] = extraPaths[p];
  return {
    openapi: '3.1.0',
    info: { title: 'Plinth API', version: '1' },
    servers: [{ url: publicUrl }],
    security: [{ apikey: [] }, { bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apikey: { type: 'apiKey', in: 'header', name: 'apikey', description: 'The public key (pk_…) or the secret key (sk_…).' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A user access token, or the secret key.' },
      },
      responses: {
        Error: { description: 'An error: {code, message, details?}.', content: { 'application/json': { schema: ERROR_BODY } } },
      },
    },
  };
}

/**
 * Mounts `GET /api/v1/openapi.json` for any valid key; the JSON text is cached per schema version.
 * @example registerOpenApi(app, { schema, resolvePrincipal, publicUrl: config.publicUrl })
 */
export function registerOpenApi(app: App, deps: OpenApiDeps): void {
  let cached: { version: number; text: string } | null = null;
  app.get('/api/v1/openapi.json', async (req, reply) => {
    req.principal = await deps.resolvePrincipal(req.headers.apikey, req.headers.authorization);
    const snapshot = deps.schema.get();
    if (cached === null || cached.version !== snapshot.version) {
      cached = { version: snapshot.version, text: JSON.stringify(buildOpenApi(snapshot, deps.publicUrl, deps.extraPaths?.())) };
    }
    return reply.type('application/json; charset=utf-8').send(cached.text);
  });
}
