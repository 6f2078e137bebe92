import { StorageClient } from '@supabase/storage-js';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createTestServer, type TestServer } from './harness.js';

/** A test server listening on loopback, with Supabase's storage client for each role. */
export interface SupabaseStorageServer extends TestServer {
  /** `http://127.0.0.1:<port>/storage/v1` */
  url: string;
  /** The secret key's client (Plinth's sk_ as both apikey and Bearer, as supabase-js sends a key). */
  service: StorageClient;
  /** The public key's client, no user. */
  anon: StorageClient;
  /** A new user (its id and a client with its access token). */
  user(): Promise<{ id: string; client: StorageClient; token: string }>;
}

/**
 * @example const s = await supabaseStorageServer(); await s.service.createBucket('docs');
 */
export async function supabaseStorageServer(env: Record<string, string> = {}): Promise<SupabaseStorageServer> {
  const t = await createTestServer(env);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/storage/v1`;
  const pk = t.keys.publicKey;
  const sk = t.keys.secretKey;
  return {
    ...t,
    url,
    service: new StorageClient(url, { apikey: sk, Authorization: `Bearer ${sk}` }),
    anon: new StorageClient(url, { apikey: pk, Authorization: `Bearer ${pk}` }),
    async user() {
      const id = randomUUID();
      const token = await t.mintToken(id);
      return { id, token, client: new StorageClient(url, { apikey: pk, Authorization: `Bearer ${token}` }) };
    },
  };
}
