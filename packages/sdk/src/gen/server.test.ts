import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateTypesFromServer } from './server.js';
import { generateTypes } from './types.js';

const doc = JSON.parse(readFileSync(new URL('../../test/fixtures/openapi.json', import.meta.url), 'utf8'));

/** A fetch answering with `status` and `body`, recording what it was asked. */
function answering(status: number, body: unknown, seen: Array<{ url: string; headers: Record<string, string> }> = []): typeof fetch {
  return (async (url: string, init: RequestInit) => {
    seen.push({ url, headers: init.headers as Record<string, string> });
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  }) as unknown as typeof fetch;
}

describe('generateTypesFromServer', () => {
  it("reads the server's OpenAPI document with the key as a bearer, and generates the same types", async () => {
    const seen: Array<{ url: string; headers: Record<string, string> }> = [];
    const result = await generateTypesFromServer('http://localhost:8080/', 'sk_test', { fetch: answering(200, doc, seen) });
    expect(result).toEqual({ data: generateTypes(doc), error: null });
    expect(seen).toEqual([{ url: 'http://localhost:8080/api/v1/openapi.json', headers: { authorization: 'Bearer sk_test' } }]);
  });

  it('never throws: a refused key, no answer, or something that is no OpenAPI document come back as error', async () => {
    const refused = await generateTypesFromServer('http://x', 'sk_wrong', {
      fetch: answering(401, { code: 'unauthorized', message: 'A valid key is required.' }),
    });
    expect(refused).toEqual({ data: null, error: { code: 'unauthorized', message: 'A valid key is required.', status: 401 } });
    const down = await generateTypesFromServer('http://x', 'sk', {
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as unknown as typeof fetch,
    });
    expect(down.error).toMatchObject({ code: 'network_error', status: 0 });
    const other = await generateTypesFromServer('http://x', 'sk', { fetch: answering(200, { hello: 'world' }) });
    expect(other).toEqual({
      data: null,
      error: {
        code: 'invalid_response',
        message: 'http://x/api/v1/openapi.json is not an OpenAPI document: is this a Plinth server?',
        status: 200,
      },
    });
  });
});
