import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { textFrame, writeFrame } from './frames.js';

// A channel message framed once and written as the same bytes to every socket (frames.ts): a ws
// client reads each as the text message it is, whatever its length (the three length forms of
// RFC 6455), in order with what ws itself sends on the socket.

let server: WebSocketServer;
let url: string;
const accepted: WebSocket[] = [];

beforeAll(async () => {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  server.on('connection', (ws) => accepted.push(ws));
  await new Promise((r) => server.once('listening', r));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const ws of accepted) ws.terminate();
  await new Promise((r) => server.close(r));
});

async function pair(): Promise<{ server: WebSocket; got: Array<{ text: string; binary: boolean }> }> {
  const got: Array<{ text: string; binary: boolean }> = [];
  const client = new WebSocket(url);
  client.on('message', (data, binary) => got.push({ text: data.toString(), binary }));
  const n = accepted.length;
  await new Promise((r) => client.once('open', r));
  await expect.poll(() => accepted.length).toBe(n + 1);
  return { server: accepted[n], got };
}

describe('frames shared by every socket', () => {
  it('a client reads each framed message as text, every length form, in order with ws.send', async () => {
    const [one, two] = [await pair(), await pair()];
    const texts = ['x', 'é'.repeat(62), 'a'.repeat(125), 'b'.repeat(126), 'c'.repeat(65_535), 'd'.repeat(65_536), 'e'.repeat(200_000)];
    const frames = texts.map((t) => textFrame(Buffer.from(t)));
    for (const p of [one, two]) {
      p.server.send('first');
      for (const f of frames) writeFrame(p.server, f);
      p.server.send('last');
    }
    const want = ['first', ...texts, 'last'].map((text) => ({ text, binary: false }));
    await expect.poll(() => one.got.length).toBe(want.length);
    await expect.poll(() => two.got.length).toBe(want.length);
    expect(one.got).toEqual(want);
    expect(two.got).toEqual(want);
  });

  it('goes through ws.send when ws has something queued or lacks what it relies on', () => {
    const sent: unknown[][] = [];
    const f = textFrame(Buffer.from('{"type":"pong"}'));
    const queued = {
      _socket: { write: () => sent.push(['raw']) },
      _sender: { _state: 1, _queue: [] },
      send: (...a: unknown[]) => sent.push(a),
    };
    writeFrame(queued as unknown as WebSocket, f);
    writeFrame({ send: (...a: unknown[]) => sent.push(a) } as unknown as WebSocket, f);
    expect(sent).toEqual([
      [f.text, { binary: false }],
      [f.text, { binary: false }],
    ]);
  });
});
