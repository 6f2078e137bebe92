import { EventEmitter } from 'node:events';
import pino from 'pino';
import type { WebSocket } from 'ws';
import { describe, expect, it } from 'vitest';
import type { Db } from '../db/index.js';
import type { Principal } from '../http/index.js';
import { fakeClock } from '../lib/clock.js';
import type { SchemaCache } from '../rest/index.js';
import { Connection, type ConnectionDeps, MAX_WAITING_BYTES, MAX_WAITING_MESSAGES } from './connection.js';
import { Channels } from './channels.js';
import type { Hub } from './hub.js';
import type { ChangeLog } from '../changes/index.js';

// Review round 3, R5: what a connection has received and not handled yet is bounded. Here the
// database never answers until the test says so (each subscribe waits on isEnabled), so exactly
// when the socket is paused and resumed is asserted without any timing.

const ANON: Principal = { role: 'anon', claims: '{"role":"anon"}', uid: null };

/** The socket side of ws that Connection uses, recording pause/resume and what is sent. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  paused = false;
  pauses = 0;
  sent: string[] = [];
  send(text: string | Buffer) {
    this.sent.push(text.toString());
  }
  close() {
    this.readyState = 3;
  }
  terminate() {
    this.readyState = 3;
  }
  pause() {
    this.paused = true;
    this.pauses++;
  }
  resume() {
    this.paused = false;
  }
}

function setup() {
  const socket = new FakeSocket();
  const gates: Array<() => void> = [];
  const deps: ConnectionDeps = {
    db: {} as Db,
    hub: { subscriptionsOfIp: () => 0, add: () => undefined, remove: () => undefined } as unknown as Hub,
    channels: new Channels(),
    log: {} as ChangeLog,
    schema: { get: () => ({ tables: new Map([['pub', { kind: 'table' }]]) }) } as unknown as SchemaCache,
    resolve: async () => ANON,
    access: async () => null,
    // The database is slow: each check waits for the test.
    isEnabled: () => new Promise<boolean>((resolve) => gates.push(() => resolve(false))),
    clock: fakeClock(0),
    logger: pino({ level: 'silent' }),
    maxSubscriptions: 100,
    maxBufferedBytes: 1 << 20,
    maxSubscriptionsPerIp: 1000,
    maxReplay: 10_000,
    onDropped: () => undefined,
  };
  new Connection(socket as unknown as WebSocket, 'pk', ANON, deps, null, '127.0.0.1');
  const receive = (text: string) => socket.emit('message', Buffer.from(text), false);
  /** Lets the database answer every check asked so far, and the queue move on. */
  const answer = async () => {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      const next = gates.shift();
      if (!next) return;
      next();
    }
  };
  return { socket, receive, answer };
}

const subscribe = (i: number, pad = 0) =>
  JSON.stringify({ type: 'subscribe', id: `s${i}`, table: 'pub', filter: pad ? `eq.id=${'1'.repeat(pad)}` : undefined });

describe('a connection’s unhandled messages (review round 3, R5)', () => {
  it('pause the socket at MAX_WAITING_MESSAGES and resume it once they are handled; each gets its answer', async () => {
    const { socket, receive, answer } = setup();
    for (let i = 0; i < MAX_WAITING_MESSAGES - 1; i++) receive(subscribe(i));
    expect(socket.paused).toBe(false);
    receive(subscribe(MAX_WAITING_MESSAGES - 1));
    expect(socket.paused).toBe(true);
    // What ws had already read still arrives; it waits too, and the socket stays paused.
    receive(subscribe(MAX_WAITING_MESSAGES));
    expect(socket.pauses).toBe(1);
    await answer();
    expect(socket.paused).toBe(false);
    const answers = socket.sent.map((m) => JSON.parse(m));
    expect(answers).toHaveLength(MAX_WAITING_MESSAGES + 1);
    expect(answers.every((m) => m.type === 'error' && m.code === 'realtime_disabled')).toBe(true);
  });

  it('pause the socket once the waiting messages pass MAX_WAITING_BYTES, however few', async () => {
    const { socket, receive, answer } = setup();
    const big = Math.ceil(MAX_WAITING_BYTES / 3);
    receive(subscribe(0, big));
    receive(subscribe(1, big));
    expect(socket.paused).toBe(false);
    receive(subscribe(2, big));
    expect(socket.paused).toBe(true);
    await answer();
    expect(socket.paused).toBe(false);
    expect(socket.sent).toHaveLength(3);
  });
});
