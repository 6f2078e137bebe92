import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type RtClient, rtConnect, rtSubscribe } from '../../test/realtime.js';

// Issue 23, back-pressure: a client that stops reading is dropped once what waits for it passes
// REALTIME_MAX_BUFFERED, never buffered without bound; the others go on receiving everything.

let t: TestServer;
let base: string;
const clients: RtClient[] = [];

beforeAll(async () => {
  t = await createTestServer({ REALTIME_MAX_BUFFERED: '64KiB' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const res = await t.sql(`
    create table feed (id bigserial primary key, body text not null);
    create policy everyone on feed for select using (true);
    select realtime.enable('feed');`);
  expect(res.statusCode, res.body).toBe(200);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await t?.stop();
});

/** The server's count of clients dropped as too slow (GET /metrics). */
async function dropped(): Promise<number> {
  const text = (await t.app.inject({ url: '/metrics', headers: t.as.service })).body;
  const line = text.split('\n').find((l) => l.startsWith('plinth_realtime_dropped_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('a client too slow to take its changes', () => {
  it('is dropped once its backlog passes REALTIME_MAX_BUFFERED; a client that reads gets every change', async () => {
    const slow = await rtConnect(base, t.keys.publicKey);
    const reader = await rtConnect(base, t.keys.publicKey);
    clients.push(slow, reader);
    await rtSubscribe(slow, { id: 's', table: 'feed' });
    await rtSubscribe(reader, { id: 'r', table: 'feed' });
    // The slow client stops reading: the kernel's buffers fill first, then the server's.
    (slow.ws as unknown as { _socket: Socket })._socket.pause();
    let written = 0;
    // Writes of 8 KiB rows until the server drops it. The bound only ends a broken test: 4,000
    // rows (32 MiB) is 500 times the allowed backlog, far past any kernel's socket buffers.
    while ((await dropped()) === 0) {
      expect(written, 'the slow client was never dropped').toBeLessThan(4_000);
      const res = await t.sql(`insert into feed (body) select repeat('x', 8192) from generate_series(1, 50)`);
      expect(res.statusCode, res.body).toBe(200);
      written += 50;
      await reader.waitChanges(written, 'r', 60_000);
    }
    expect(await dropped()).toBe(1);
    // Its connection is gone (terminated, not closed politely: it would not read a close frame).
    (slow.ws as unknown as { _socket: Socket })._socket.resume();
    expect(await slow.closed).not.toBe(1000);
    // Everyone else got every change, in order, once.
    const seqs = reader.changes('r').map((m) => m.seq as number);
    expect(seqs).toHaveLength(written);
    expect(new Set(seqs).size).toBe(written);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // The one who was dropped gets no more; a new write still reaches the reader.
    await t.sql(`insert into feed (body) values ('after')`);
    await reader.waitChanges(written + 1, 'r', 60_000);
    expect(await dropped()).toBe(1);
  });
});
