import { AuthClient } from '@supabase/auth-js';
import type { TestServer } from './harness.js';

/**
 * A fetch that hands each request to the test server in-process (`app.inject`): the real
 * auth-js client talks to /auth/v1 with no socket, under the test's fake clock.
 * @example const fetch = injectFetch(t); await fetch('http://localhost:8080/auth/v1/health');
 */
export function injectFetch(t: TestServer): typeof fetch {
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
    const empty = res.statusCode === 204 || res.statusCode === 303 || res.statusCode === 304;
    return new Response(empty ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: out });
  };
}

/**
 * auth-js's own client on the test server's /auth/v1, with the project's publishable key (or
 * the one given), its session in memory.
 * @example const client = authClient(t); await client.signUp({ email, password });
 */
export function authClient(
  t: TestServer,
  key = t.keys.publicKey,
  flowType: 'implicit' | 'pkce' = 'implicit',
): InstanceType<typeof AuthClient> {
  return new AuthClient({
    flowType,
    url: 'http://localhost:8080/auth/v1',
    headers: { apikey: key, Authorization: `Bearer ${key}` },
    fetch: injectFetch(t),
    persistSession: false,
    autoRefreshToken: false,
    detectSessionInUrl: false,
  });
}
