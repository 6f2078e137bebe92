import { normalizeUrl, send } from '../fetch.js';
import type { Result } from '../types.js';
import { generateTypes } from './types.js';

export interface ServerTypesOptions {
  /** Custom fetch (tests, proxies). */
  fetch?: typeof fetch;
  /** Milliseconds before the server counts as not answering (default 30 000). */
  timeoutMs?: number;
}

/**
 * Reads the OpenAPI document of a running server (GET /api/v1/openapi.json) and generates the
 * `Database` type from it, as `plinth gen types --url` does. The secret key sees every table;
 * a public key only those its role may read. Never throws: a refused key, an unreachable
 * server or a document that is no OpenAPI document comes back as `error`.
 * @example
 * const { data, error } = await generateTypesFromServer('http://localhost:8080', process.env.PLINTH_SECRET_KEY!);
 * if (data) writeFileSync('src/database.ts', data);
 */
export async function generateTypesFromServer(url: string, key: string, options: ServerTypesOptions = {}): Promise<Result<string>> {
  const res = await send<object>(
    { url: normalizeUrl(url), publicKey: '', fetch: options.fetch },
    { path: '/api/v1/openapi.json', token: key, timeoutMs: options.timeoutMs ?? 30_000 },
  );
  if (res.error) return { data: null, error: res.error };
  const doc = res.data as { openapi?: unknown } | null;
  if (!doc || typeof doc !== 'object' || typeof doc.openapi !== 'string') {
    return {
      data: null,
      error: {
        code: 'invalid_response',
        message: `${normalizeUrl(url)}/api/v1/openapi.json is not an OpenAPI document: is this a Plinth server?`,
        status: res.status,
      },
    };
  }
  return { data: generateTypes(doc), error: null };
}
