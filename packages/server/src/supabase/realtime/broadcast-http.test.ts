import type { RealtimeChannel } from '@supabase/realtime-js';
import { describe, expect, it } from 'vitest';
import { realtimeJsServer } from '../../../test/realtime-js.js';

// Broadcast over HTTP onto the one channel hub (issue 37): Supabase's POST /realtime/v1/api/broadcast
// (realtime-js's send() on a channel it has not joined, and httpSend()) and Plinth's
// POST /api/v1/realtime/broadcast reach the members joined over the WebSocket.

const rt = realtimeJsServer();
const client = (key?: string) => rt.client('2.0.0', key);

/** A member of `room` that records the payloads of event `e`. */
async function member(room: string): Promise<unknown[]> {
  const got: unknown[] = [];
  const ch: RealtimeChannel = client()
    .channel(room)
    .on('broadcast', { event: 'e' }, (m) => got.push(m.payload));
  await new Promise<void>((resolve) => ch.subscribe((s) => s === 'SUBSCRIBED' && resolve()));
  return got;
}

const post = (path: string, body: unknown, headers: Record<string, string> = { apikey: rt.t.keys.publicKey }) =>
  rt.t.app.inject({ method: 'POST', url: path, headers, payload: body as object });

describe('broadcast over HTTP', () => {
  it('realtime-js send() on a channel it has not joined goes over HTTP and reaches the members', async () => {
    const got = await member('http-1');
    const sender = client().channel('http-1');
    expect(await sender.send({ type: 'broadcast', event: 'e', payload: { n: 1 } })).toBe('ok');
    await expect.poll(() => got).toEqual([{ n: 1 }]);
  });

  it('realtime-js httpSend() is answered 202 and reaches the members', async () => {
    const got = await member('http-2');
    expect(await client().channel('http-2').httpSend('e', { n: 2 })).toEqual({ success: true });
    await expect.poll(() => got).toEqual([{ n: 2 }]);
  });

  it('POST /realtime/v1/api/broadcast takes Supabase’s {messages}; a bad body is 400 and sends nothing', async () => {
    const got = await member('http-3');
    const ok = await post('/realtime/v1/api/broadcast', {
      messages: [
        { topic: 'http-3', event: 'e', payload: { n: 3 } },
        { topic: 'http-3', event: 'other', payload: {} },
      ],
    });
    expect(ok.statusCode).toBe(202);
    const bad = await post('/realtime/v1/api/broadcast', { messages: [{ topic: 'http-3', event: 'e', payload: { n: 4 } }, { topic: '' }] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_parameter', details: { field: 'topic' } });
    expect((await post('/realtime/v1/api/broadcast', { messages: [] })).statusCode).toBe(400);
    expect((await post('/realtime/v1/api/broadcast', { messages: [] }, { apikey: 'nope' })).statusCode).toBe(401);
    // Later messages arrive after earlier ones: n 4 never came, n 5 does.
    expect((await post('/realtime/v1/api/broadcast', { messages: [{ topic: 'http-3', event: 'e', payload: { n: 5 } }] })).statusCode).toBe(
      202,
    );
    await expect.poll(() => got).toEqual([{ n: 3 }, { n: 5 }]);
  });

  it('POST /api/v1/realtime/broadcast (Plinth’s shape) reaches the same channel; a private one only with the secret key', async () => {
    const got = await member('http-4');
    const res = await post('/api/v1/realtime/broadcast', { channel: 'http-4', event: 'e', payload: { n: 6 } });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ recipients: 1 });
    await expect.poll(() => got).toEqual([{ n: 6 }]);

    const priv = await post('/api/v1/realtime/broadcast', { channel: 'http-4', event: 'e', payload: { n: 7 }, private: true });
    expect(priv.statusCode).toBe(403);
    expect(priv.json().code).toBe('forbidden');
    const privSb = await post('/realtime/v1/api/broadcast', {
      messages: [{ topic: 'http-4', event: 'e', payload: { n: 7 }, private: true }],
    });
    expect(privSb.statusCode).toBe(403);
    expect((await post('/api/v1/realtime/broadcast', { channel: 'http-4', event: 'e', payload: 1 }, {})).statusCode).toBe(401);
    expect((await post('/api/v1/realtime/broadcast', { channel: 'http-4', event: 'e' })).statusCode).toBe(400);
    const svc = await post(
      '/api/v1/realtime/broadcast',
      { channel: 'http-4', event: 'e', payload: { n: 8 } },
      { apikey: rt.t.keys.secretKey },
    );
    expect(svc.statusCode).toBe(202);
    await expect.poll(() => got).toEqual([{ n: 6 }, { n: 8 }]);
  });
});
