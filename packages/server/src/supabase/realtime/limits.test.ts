import type { AddressInfo } from 'node:net';
import { type RealtimeChannel, RealtimeClient } from '@supabase/realtime-js';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { type RtClient, rtConnect, rtSubscribe } from '../../../test/realtime.js';

// One hub, one set of limits (issue 37): Supabase's face and /api/v1/realtime count together,
// per client address, connections (REALTIME_MAX_CONNECTIONS_PER_IP) and channels with
// subscriptions (REALTIME_MAX_SUBSCRIPTIONS_PER_IP).

let t: TestServer;
let base: string;
const open: Array<RealtimeClient | RtClient> = [];

beforeAll(async () => {
  t = await createTestServer({ REALTIME_MAX_CONNECTIONS_PER_IP: '3', REALTIME_MAX_SUBSCRIPTIONS_PER_IP: '3' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const res = await t.sql(`create table feed (id bigserial primary key, title text);
    create policy everyone on feed for select using (true);
    select realtime.enable('feed');`);
  expect(res.statusCode, res.body).toBe(200);
});
afterEach(async () => {
  for (const c of open.splice(0)) {
    if (c instanceof RealtimeClient) c.disconnect();
    else await c.close();
  }
});
afterAll(async () => {
  await t?.stop();
});

function supabase(): RealtimeClient {
  const c = new RealtimeClient(`${base.replace(/^http/, 'ws')}/realtime/v1`, {
    params: { apikey: t.keys.publicKey },
    vsn: '2.0.0',
    transport: WebSocket as unknown as typeof globalThis.WebSocket,
  });
  open.push(c);
  return c;
}

async function plinth(): Promise<RtClient> {
  const c = await rtConnect(base, t.keys.publicKey);
  open.push(c);
  return c;
}

async function subscribed(ch: RealtimeChannel): Promise<{ status: string; err?: Error }> {
  return new Promise((resolve) => {
    ch.subscribe((status, err) => {
      if (status !== 'TIMED_OUT') resolve({ status, err });
    });
  });
}

async function upgradeStatus(path: string): Promise<number> {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}${path}?apikey=${t.keys.publicKey}&vsn=1.0.0`);
  return new Promise<number>((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
  });
}

describe('realtime limits over both protocols', () => {
  it('connections per client address are one count for /api/v1/realtime and /realtime/v1/websocket', async () => {
    await plinth();
    await plinth();
    const s = supabase();
    expect((await subscribed(s.channel('one'))).status).toBe('SUBSCRIBED');
    // Three held (two Plinth sockets, one Phoenix socket): a fourth is refused on either path.
    expect(await upgradeStatus('/realtime/v1/websocket')).toBe(429);
    expect(await upgradeStatus('/api/v1/realtime')).toBe(429);
    s.disconnect();
    await expect.poll(() => upgradeStatus('/realtime/v1/websocket')).toBe(101);
  });

  it('channels and subscriptions are one count per client address; a freed one can be used by the other', async () => {
    const p = await plinth();
    await rtSubscribe(p, { id: 'a', table: 'feed' });
    await rtSubscribe(p, { id: 'b', table: 'feed' });
    const s = supabase();
    expect((await subscribed(s.channel('c1'))).status).toBe('SUBSCRIBED');
    const refused = await subscribed(s.channel('c2'));
    expect(refused.status).toBe('CHANNEL_ERROR');
    expect(refused.err?.message).toMatch(/subscriptions and channels/);
    p.send({ type: 'unsubscribe', id: 'a' });
    await p.next((m) => m.type === 'unsubscribed');
    expect((await subscribed(s.channel('c3'))).status).toBe('SUBSCRIBED');
  });
});
