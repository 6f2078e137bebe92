import type { AddressInfo } from 'node:net';
import { RealtimeClient } from '@supabase/realtime-js';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type RtClient, rtConnect } from '../../test/realtime.js';
import { BROADCAST_BURST, BROADCASTS_PER_SECOND } from './session.js';

// Channels on Plinth's own protocol (issue 37): join, broadcast (self), presence (track, untrack,
// diffs, a closed socket leaves), on the one hub that Supabase's face and HTTP broadcast share.

let t: TestServer;
let base: string;
const open: Array<RtClient | RealtimeClient> = [];

type Msg = Record<string, unknown>;

beforeAll(async () => {
  t = await createTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
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

async function client(): Promise<RtClient> {
  const c = await rtConnect(base, t.keys.publicKey);
  open.push(c);
  return c;
}

const of = (c: RtClient, type: string) => (c.messages as unknown as Msg[]).filter((m) => m.type === type);

async function join(c: RtClient, channel: string, extra: Msg = {}): Promise<Msg> {
  const from = c.messages.length;
  c.send({ type: 'join', channel, ...extra });
  return (await c.next((m) => m.type === 'joined' || m.type === 'error', 30_000, from)) as unknown as Msg;
}

describe('channels on /api/v1/realtime', () => {
  it('broadcast reaches the other members, the sender only with self', async () => {
    const [a, b] = [await client(), await client()];
    expect(await join(a, 'room-1', { self: true })).toMatchObject({ type: 'joined', channel: 'room-1', presence: {} });
    await join(b, 'room-1');
    b.send({ type: 'broadcast', channel: 'room-1', event: 'msg', payload: { text: 'hi' } });
    a.send({ type: 'broadcast', channel: 'room-1', event: 'msg', payload: { text: 'back' } });
    await expect.poll(() => of(a, 'broadcast').map((m) => (m.payload as Msg).text)).toEqual(['hi', 'back']);
    await expect.poll(() => of(b, 'broadcast').map((m) => (m.payload as Msg).text)).toEqual(['back']);
    expect(of(a, 'broadcast')[0]).toEqual({ type: 'broadcast', channel: 'room-1', event: 'msg', payload: { text: 'hi' } });
  });

  it('presence: a joiner gets the state, the others the diffs; untrack and a closed socket leave', async () => {
    const [a, b] = [await client(), await client()];
    await join(a, 'room-p', { presence_key: 'alice' });
    a.send({ type: 'track', channel: 'room-p', meta: { status: 'online' } });
    await expect.poll(() => of(a, 'presence').length).toBe(1);
    const joined = await join(b, 'room-p', { presence_key: 'bob' });
    expect(joined.presence).toMatchObject({ alice: { metas: [{ status: 'online' }] } });
    b.send({ type: 'track', channel: 'room-p', meta: { status: 'away' } });
    await expect.poll(() => of(a, 'presence').map((m) => Object.keys(m.joins as Msg))).toEqual([['alice'], ['bob']]);
    b.send({ type: 'untrack', channel: 'room-p' });
    await expect.poll(() => of(a, 'presence').map((m) => Object.keys(m.leaves as Msg))).toEqual([[], [], ['bob']]);
    await a.close();
    await expect.poll(() => of(b, 'presence').at(-1)?.leaves).toMatchObject({ alice: { metas: [{ status: 'online' }] } });
  });

  it('one hub: a Supabase client on realtime:room-x and a Plinth client on room-x, and HTTP broadcast, reach each other', async () => {
    const p = await client();
    await join(p, 'room-x', { presence_key: 'plinth' });
    const sb = new RealtimeClient(`${base.replace(/^http/, 'ws')}/realtime/v1`, {
      params: { apikey: t.keys.publicKey },
      vsn: '2.0.0',
      transport: WebSocket as unknown as typeof globalThis.WebSocket,
    });
    open.push(sb);
    const got: unknown[] = [];
    const ch = sb
      .channel('room-x', { config: { presence: { key: 'supa' } } })
      .on('broadcast', { event: 'e' }, (m) => got.push(m.payload))
      .on('presence', { event: 'sync' }, () => undefined);
    await new Promise<void>((resolve) => ch.subscribe((s) => s === 'SUBSCRIBED' && resolve()));
    p.send({ type: 'track', channel: 'room-x', meta: { n: 1 } });
    p.send({ type: 'broadcast', channel: 'room-x', event: 'e', payload: { from: 'plinth' } });
    await expect.poll(() => got).toEqual([{ from: 'plinth' }]);
    await expect.poll(() => Object.keys(ch.presenceState())).toEqual(['plinth']);
    await ch.send({ type: 'broadcast', event: 'e', payload: { from: 'supabase' } });
    await expect.poll(() => of(p, 'broadcast').map((m) => m.payload)).toEqual([{ from: 'supabase' }]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/realtime/broadcast',
      headers: { apikey: t.keys.publicKey },
      payload: { channel: 'room-x', event: 'e', payload: { from: 'http' } },
    });
    expect(res.json()).toEqual({ recipients: 2 });
    await expect.poll(() => of(p, 'broadcast').map((m) => m.payload)).toEqual([{ from: 'supabase' }, { from: 'http' }]);
    await expect.poll(() => got).toEqual([{ from: 'plinth' }, { from: 'http' }]);
  });

  it('refuses sending on a channel not joined, a bad name and an unknown field, naming the channel; the connection goes on', async () => {
    const c = await client();
    c.send({ type: 'broadcast', channel: 'nowhere', event: 'e', payload: 1 });
    await expect.poll(() => of(c, 'error')).toEqual([expect.objectContaining({ channel: 'nowhere', code: 'invalid_parameter' })]);
    c.send({ type: 'join', channel: '' });
    c.send({ type: 'join', channel: 'ok', extra: 1 });
    await expect.poll(() => of(c, 'error').map((m) => m.code)).toEqual(['invalid_parameter', 'invalid_parameter', 'invalid_request']);
    expect(await join(c, 'ok')).toMatchObject({ type: 'joined' });
    c.send({ type: 'leave', channel: 'ok' });
    await expect.poll(() => of(c, 'left')).toEqual([{ type: 'left', channel: 'ok' }]);
  });

  it('channel messages are rate-limited per connection: past the burst, rate_limited (naming the channel) until the bucket refills', async () => {
    const [a, b] = [await client(), await client()];
    await join(a, 'rl');
    await join(b, 'rl');
    for (let i = 0; i <= BROADCAST_BURST; i++) a.send({ type: 'broadcast', channel: 'rl', event: 'n', payload: i });
    await expect.poll(() => of(a, 'error')).toEqual([expect.objectContaining({ channel: 'rl', code: 'rate_limited' })]);
    expect((of(a, 'error')[0].details as Msg).retry_after_ms).toBeGreaterThan(0);
    await expect.poll(() => of(b, 'broadcast').length).toBe(BROADCAST_BURST);
    // The server's clock moves on: the bucket refills, and the next one is delivered.
    t.clock.advance(Math.ceil(1000 / BROADCASTS_PER_SECOND));
    a.send({ type: 'broadcast', channel: 'rl', event: 'n', payload: 'later' });
    await expect.poll(() => of(b, 'broadcast').at(-1)?.payload).toBe('later');
    expect(of(b, 'broadcast').map((m) => m.payload)).toEqual([...Array.from({ length: BROADCAST_BURST }, (_, i) => i), 'later']);
  });
});
