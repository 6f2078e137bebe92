import { STATUS_CODES } from 'node:http';
import { PostgrestClient } from '@supabase/postgrest-js';
import { createTestServer, type TestServer } from './harness.js';

/**
 * A fetch that hands each request to the test server in-process (`app.inject`), with the
 * status text a socket would carry (postgrest-js reports it); auth-js's tests use it too, under
 * the test's fake clock.
 * @example const client = new PostgrestClient('http://localhost/rest/v1', { fetch: restFetch(t) })
 */
export function restFetch(t: TestServer): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const res = await t.app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers,
      ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : String(v));
    }
    const empty = res.statusCode === 204 || res.statusCode === 303 || res.statusCode === 304 || init?.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(res.rawPayload), {
      status: res.statusCode,
      statusText: STATUS_CODES[res.statusCode] ?? '',
      headers: out,
    });
  };
}

/**
 * postgrest-js's own client on the test server's /rest/v1 with the given headers (a role's keys).
 * @example const db = restClient(t, t.as.anon); await db.from('todos').select()
 */
export function restClient(t: TestServer, headers: Record<string, string>, schema?: string) {
  return new PostgrestClient('http://localhost:8080/rest/v1', { headers, fetch: restFetch(t), ...(schema ? { schema } : {}) });
}

/**
 * A test server with `schema` run by the SQL runner, and postgrest-js as anon on it: one test
 * file's setup (stop `t` after).
 * @example let s: Awaited<ReturnType<typeof restServer>>; beforeAll(async () => { s = await restServer(SCHEMA); });
 */
export async function restServer(schema: string): Promise<{ t: TestServer; anon: ReturnType<typeof restClient> }> {
  const t = await createTestServer();
  const res = await t.sql(schema);
  if (res.statusCode !== 200) {
    await t.stop();
    throw new Error(`the test schema answered ${res.statusCode}: ${res.body}`);
  }
  return { t, anon: restClient(t, t.as.anon) };
}
