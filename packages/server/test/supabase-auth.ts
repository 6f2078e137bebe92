import { AuthClient } from '@supabase/auth-js';
import type { TestServer } from './harness.js';
import { restFetch } from './supabase-rest.js';

/** A fetch that hands each request to the test server in-process (`app.inject`): supabase-rest.ts's. */
export const injectFetch = restFetch;

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
