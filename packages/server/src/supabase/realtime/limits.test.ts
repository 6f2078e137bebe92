import type { AddressInfo } from 'node:net';
import { type RealtimeChannel, RealtimeClient } from '@supabase/realtime-js';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { type RtClient, rtConnect, rtSubscribe } from '../../../test/realtime.js';
import { BROADCAST_BURST } from '../../realtime/index.js';

// One hub, one set of limits (issue 37): Supabase's face and /api/v1/realtime count together,
// per client address, connections (REALTIME_MAX_CONNECTIONS_PER_IP) and channels with
// subscriptions (REALTIME_MAX_SUBSCRIPTIONS_PER_IP).

let t: TestServer;
let base: string;
const open: Array<RealtimeClient | RtClient> = [];

beforeAll(async () => {
  t = await createTestServer({
    REALTIME_MAX_CONNECTIONS_PER_IP: '3',
    REALTIME_MAX_SUBSCRIPTIONS_PER_IP: '3',
    REALTIME_HEARTBEAT_SECONDS: '1',
  });
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

  it('a Phoenix socket that stops answering pings is dropped by realtime’s heartbeat, and its presence leaves the channel', async () => {
    const s = supabase();
    const ch = s.channel('hb', { config: { presence: { key: 'watcher' } } }).on('presence', { event: 'sync' }, () => undefined);
    expect((await subscribed(ch)).status).toBe('SUBSCRIBED');
    // A client that never answers a ping (its pongs are off): joined and tracked, then silent.
    const ghost = new WebSocket(`${base.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${t.keys.publicKey}&vsn=1.0.0`, {
      autoPong: false,
    });
    await new Promise((r) => ghost.once('open', r));
    const closed = new Promise<number>((r) => ghost.once('close', (code) => r(code)));
    const join = { topic: 'realtime:hb', event: 'phx_join', payload: { config: { presence: { key: 'ghost' } } }, ref: '1', join_ref: '1' };
    ghost.send(JSON.stringify(join));
    ghost.send(
      JSON.stringify({
        topic: 'realtime:hb',
        event: 'presence',
        payload: { type: 'presence', event: 'track', payload: { n: 1 } },
        ref: '2',
        join_ref: '1',
      }),
    );
    await expect.poll(() => Object.keys(ch.presenceState())).toEqual(['ghost']);
    await expect.poll(() => Object.keys(ch.presenceState()), { timeout: 15_000 }).toEqual([]);
    expect([1000, 1006]).toContain(await closed);
    // The watcher, which answers its pings, is still there.
    expect(ch.state).toBe('joined');
  });

  it('Phoenix broadcasts take realtime’s channel-message bucket: past the burst, a rate_limited reply', async () => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${t.keys.publicKey}&vsn=1.0.0`);
    await new Promise((r) => ws.once('open', r));
    const replies: Array<{ ref: string; payload: { status: string; response: Record<string, unknown> } }> = [];
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.event === 'phx_reply') replies.push(f);
    });
    const frame = (ref: number, event: string, payload: unknown) =>
      JSON.stringify({ topic: 'realtime:rl', event, payload, ref: String(ref), join_ref: '0' });
    ws.send(frame(0, 'phx_join', { config: { broadcast: { ack: true } } }));
    for (let i = 1; i <= BROADCAST_BURST + 1; i++) ws.send(frame(i, 'broadcast', { type: 'broadcast', event: 'n', payload: { i } }));
    await expect.poll(() => replies.length).toBe(BROADCAST_BURST + 2);
    const refused = replies.filter((r) => r.payload.status === 'error');
    expect(refused.map((r) => [r.ref, r.payload.response.code])).toEqual([[String(BROADCAST_BURST + 1), 'rate_limited']]);
    ws.close();
  });
});
