import { connect, createServer, type Server, type Socket } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type PlinthClient, type RealtimeStatus, type WebSocketLike } from '../../src/index.js';
import { type E2eServer, email, startServer } from './server.js';

// client.channel(name) against the real server (issue 37): broadcast and presence between two
// SDK clients, and a dropped connection rejoining by itself with its presence tracked again.
// A TCP proxy between the first client and the server drops its connection on demand.

let s: E2eServer;
let proxy: Server;
let proxyUrl: string;
const sockets = new Set<Socket>();
const clients: PlinthClient[] = [];

function sdk(url: string): PlinthClient {
  const c = createClient(url, s.publicKey, { realtime: { WebSocket: WebSocket as unknown as WebSocketLike, maxReconnectDelayMs: 500 } });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  s = await startServer();
  const target = new URL(s.url);
  proxy = createServer((down) => {
    const up = connect(Number(target.port), target.hostname);
    for (const sock of [down, up]) {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('error', () => undefined);
    }
    down.pipe(up).pipe(down);
    down.on('close', () => up.destroy());
    up.on('close', () => down.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const c of clients) {
    c.realtime.dispose();
    c.auth.dispose();
  }
  for (const sock of sockets) sock.destroy();
  await new Promise((r) => proxy?.close(r));
  await s?.t.stop();
});

describe('client.channel', () => {
  it('broadcast and presence between two clients; a dropped connection rejoins and tracks again; unsubscribe leaves', async () => {
    const [a, b] = [sdk(proxyUrl), sdk(s.url)];
    const statusesA: RealtimeStatus[] = [];
    const gotB: unknown[] = [];
    const roomA = a.channel('chat', { presenceKey: 'alice' });
    roomA.subscribe((st) => statusesA.push(st));
    const roomB = b
      .channel('chat', { presenceKey: 'bob' })
      .on('broadcast', 'message', (p) => gotB.push(p))
      .subscribe();
    await expect.poll(() => [roomA.status, roomB.status]).toEqual(['SUBSCRIBED', 'SUBSCRIBED']);
    roomA.track({ typing: true });
    await expect.poll(() => roomB.presenceState().alice?.metas.map((m) => m.typing)).toEqual([true]);
    expect(roomA.send('message', { text: 'hi' })).toBe(true);
    await expect.poll(() => gotB).toEqual([{ text: 'hi' }]);

    // The connection drops: the SDK rejoins by itself and tracks the same presence again.
    for (const sock of sockets) sock.destroy();
    await expect.poll(() => statusesA.includes('RECONNECTING')).toBe(true);
    await expect.poll(() => roomA.status, { timeout: 15_000 }).toBe('SUBSCRIBED');
    await expect.poll(() => roomB.presenceState().alice?.metas.map((m) => m.typing)).toEqual([true]);
    expect(roomA.send('message', { text: 'back' })).toBe(true);
    await expect.poll(() => gotB).toEqual([{ text: 'hi' }, { text: 'back' }]);

    await roomA.unsubscribe();
    await expect.poll(() => Object.keys(roomB.presenceState())).toEqual([]);
    expect(roomA.send('message', { text: 'gone' })).toBe(false);
  });

  it('a private channel: joined as its policies allow, and left by itself when the user signs out', async () => {
    await s.t.db.query(`create policy "members read members" on realtime.messages for select to authenticated
      using (realtime.topic() = 'members')`);
    const anon = sdk(s.url);
    const refused: Array<[RealtimeStatus, string | undefined]> = [];
    anon.channel('members', { private: true }).subscribe((st, err) => refused.push([st, err?.code]));
    await expect.poll(() => refused).toEqual([['ERROR', 'forbidden']]);

    const user = sdk(s.url);
    expect((await user.auth.signUp({ email: email('private-channel'), password: 'correct horse battery staple' })).error).toBeNull();
    const statuses: RealtimeStatus[] = [];
    const room = user.channel('members', { private: true });
    room.subscribe((st) => statuses.push(st));
    await expect.poll(() => room.status).toBe('SUBSCRIBED');
    // Signed out, the connection takes the public key's role, whose policies refuse the channel.
    await user.auth.signOut();
    await expect.poll(() => room.status).toBe('CLOSED');
    expect(statuses).toEqual(['SUBSCRIBED', 'ERROR', 'CLOSED']);
  });
});
