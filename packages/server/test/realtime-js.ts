/**
 * Supabase's realtime-js against a listening test server (the Supabase realtime face's tests):
 * one server per file, its clients disconnected after each test.
 */
import type { AddressInfo } from 'node:net';
import { type RealtimeChannel, RealtimeClient } from '@supabase/realtime-js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import WebSocket from 'ws';
import { createTestServer, type TestServer } from './harness.js';

export type Vsn = '1.0.0' | '2.0.0';

/**
 * Registers the file's hooks; `setup` runs on the server before it listens.
 * @example const rt = realtimeJsServer(); it('…', async () => { const c = rt.client('2.0.0'); … });
 */
export function realtimeJsServer(setup?: (t: TestServer) => Promise<void>) {
  let server: TestServer | undefined;
  let url = '';
  const open: RealtimeClient[] = [];
  beforeAll(async () => {
    server = await createTestServer();
    await setup?.(server);
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    url = `ws://127.0.0.1:${(server.app.server.address() as AddressInfo).port}/realtime/v1`;
  });
  afterEach(() => {
    for (const c of open.splice(0)) c.disconnect();
  });
  afterAll(async () => {
    await server?.stop();
  });
  const rt = {
    get t(): TestServer {
      if (!server) throw new Error('the server starts in beforeAll');
      return server;
    },
    /** `ws://…/realtime/v1` of the listening server. */
    get url(): string {
      return url;
    },
    /** A client with the public key (or `key`). */
    client(vsn: Vsn = '2.0.0', key?: string): RealtimeClient {
      const c = new RealtimeClient(url, {
        params: { apikey: key ?? rt.t.keys.publicKey },
        vsn,
        transport: WebSocket as unknown as typeof globalThis.WebSocket,
      });
      open.push(c);
      return c;
    },
    /** A client signed in with `token` before it joins (as supabase-js's auth sets it). */
    async signedIn(vsn: Vsn, token: string): Promise<RealtimeClient> {
      const c = rt.client(vsn);
      await c.setAuth(token);
      return c;
    },
  };
  return rt;
}

/** The channel's first settled status of a subscribe (`SUBSCRIBED`, `CHANNEL_ERROR`, `CLOSED`). */
export function subscribed(ch: RealtimeChannel): Promise<string> {
  return new Promise((resolve) => {
    ch.subscribe((status) => {
      if (status !== 'TIMED_OUT') resolve(status);
    });
  });
}
