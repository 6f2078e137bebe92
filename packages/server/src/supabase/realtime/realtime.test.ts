import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { realtimeJsServer, subscribed, type Vsn } from '../../../test/realtime-js.js';

// Supabase's realtime-js against /realtime/v1/websocket on a listening server, both protocol versions.

const rt = realtimeJsServer();
const client = (vsn: Vsn, key?: string) => rt.client(vsn, key);

describe.each(['1.0.0', '2.0.0'] as const)('supabase realtime vsn %s', (vsn) => {
  it('broadcasts between two clients, not to self unless asked', async () => {
    const a = client(vsn).channel('room-1');
    const b = client(vsn).channel('room-1');
    const gotA: unknown[] = [];
    const gotB: unknown[] = [];
    a.on('broadcast', { event: 'msg' }, (m) => gotA.push(m.payload));
    b.on('broadcast', { event: 'msg' }, (m) => gotB.push(m.payload));
    expect(await subscribed(a)).toBe('SUBSCRIBED');
    expect(await subscribed(b)).toBe('SUBSCRIBED');
    expect(await a.send({ type: 'broadcast', event: 'msg', payload: { text: 'hi' } })).toBe('ok');
    await expect.poll(() => gotB).toEqual([{ text: 'hi' }]);
    // b's reply to a arrives, and a never got its own message.
    await b.send({ type: 'broadcast', event: 'msg', payload: { text: 'back' } });
    await expect.poll(() => gotA).toEqual([{ text: 'back' }]);
    expect(gotB).toEqual([{ text: 'hi' }]);
  });

  it('self and ack: the sender gets its own message and an acknowledgement', async () => {
    const a = client(vsn).channel('room-self', { config: { broadcast: { self: true, ack: true } } });
    const got: unknown[] = [];
    a.on('broadcast', { event: 'e' }, (m) => got.push(m.payload));
    expect(await subscribed(a)).toBe('SUBSCRIBED');
    expect(await a.send({ type: 'broadcast', event: 'e', payload: { n: 1 } })).toBe('ok');
    await expect.poll(() => got).toEqual([{ n: 1 }]);
  });

  it('presence: a track is seen by the others, a leave removes it', async () => {
    const ca = client(vsn);
    const a = ca.channel('room-p', { config: { presence: { key: 'alice' } } });
    const b = client(vsn).channel('room-p', { config: { presence: { key: 'bob' } } });
    a.on('presence', { event: 'sync' }, () => undefined);
    b.on('presence', { event: 'sync' }, () => undefined);
    expect(await subscribed(a)).toBe('SUBSCRIBED');
    expect(await subscribed(b)).toBe('SUBSCRIBED');
    expect(await a.track({ status: 'online' })).toBe('ok');
    expect(await b.track({ status: 'away' })).toBe('ok');
    await expect.poll(() => Object.keys(b.presenceState()).sort()).toEqual(['alice', 'bob']);
    expect(b.presenceState().alice[0]).toMatchObject({ status: 'online' });
    await expect.poll(() => Object.keys(a.presenceState()).sort()).toEqual(['alice', 'bob']);
    ca.disconnect();
    await expect.poll(() => Object.keys(b.presenceState())).toEqual(['bob']);
  });

  it('a private channel is refused to a caller no policy admits', async () => {
    const ch = client(vsn).channel('secret', { config: { private: true } });
    expect(await subscribed(ch)).toBe('CHANNEL_ERROR');
  });
});

describe('supabase realtime limits and keys', () => {
  it('refuses a connection without a valid key', async () => {
    const ws = new WebSocket(`${rt.url}/websocket?apikey=nope&vsn=1.0.0`);
    const status = await new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(401);
  });

  it('closes a client that sends an oversized frame or joins too many channels; the server stays up', async () => {
    const ws = new WebSocket(`${rt.url}/websocket?apikey=${rt.t.keys.publicKey}&vsn=1.0.0`);
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    ws.send(JSON.stringify({ topic: 'realtime:x', event: 'broadcast', payload: { pad: 'x'.repeat(1024 * 1024) }, ref: '1' }));
    expect(await closed).toBe(1009);

    const ws2 = new WebSocket(`${rt.url}/websocket?apikey=${rt.t.keys.publicKey}&vsn=1.0.0`);
    await new Promise((r) => ws2.once('open', r));
    const replies: { status: string }[] = [];
    ws2.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.event === 'phx_reply') replies.push(f.payload);
    });
    const n = 1000;
    for (let i = 0; i < n; i++) {
      ws2.send(
        JSON.stringify({ topic: `realtime:c${i}`, event: 'phx_join', payload: { config: {} }, ref: String(i), join_ref: String(i) }),
      );
    }
    await expect.poll(() => replies.length, { timeout: 10_000 }).toBe(n);
    expect(replies.filter((r) => r.status === 'error').length).toBeGreaterThan(0);
    ws2.close();

    // Still serving others.
    const a = client('2.0.0').channel('after');
    expect(await subscribed(a)).toBe('SUBSCRIBED');
  });
});
