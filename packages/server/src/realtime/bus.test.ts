import { describe, expect, it } from 'vitest';
import { type Bus, type BusMessage, NOTIFY_PAYLOAD_BYTES, packNotifications, Reassembler, wellFormed } from './bus.js';
import { type ChannelMember, type ChannelMessage, Channels } from './channels.js';

// The hub's side of the bus (docs/realtime.md, "Across instances"): instances joined by an
// in-memory bus that carries each message through JSON, as Redis and NOTIFY do. The real carriers
// with real processes: test/realtime-bus.postgres.test.ts.

/** A set of linked buses: what one publishes, every other receives (not itself). `cut` stops it. */
function network() {
  const nodes: Array<{ id: string; handlers: Array<(from: string, m: BusMessage) => void>; reconnect: Array<() => void> }> = [];
  let cut = false;
  return {
    set cut(v: boolean) {
      cut = v;
    },
    bus(): Bus & { reconnect(): void } {
      const node = {
        id: `i${nodes.length}`,
        handlers: [] as Array<(from: string, m: BusMessage) => void>,
        reconnect: [] as Array<() => void>,
      };
      nodes.push(node);
      return {
        kind: 'redis',
        id: node.id,
        up: () => !cut,
        publish(m) {
          if (cut) return;
          const text = JSON.stringify(m);
          for (const other of nodes) if (other !== node) for (const h of other.handlers) h(node.id, JSON.parse(text));
        },
        onMessage: (fn) => void node.handlers.push(fn),
        onReconnect: (fn) => void node.reconnect.push(fn),
        close: async () => undefined,
        reconnect: () => {
          for (const r of node.reconnect) r();
        },
      };
    },
  };
}

function member(topic: string, key: string, got: ChannelMessage[], self = false): ChannelMember {
  return { topic, ip: '127.0.0.1', presenceKey: key, self, meta: null, deliver: (m) => got.push(m) };
}

const keysOf = (s: Record<string, unknown>) => Object.keys(s).sort();

describe('channels across instances (an in-memory bus)', () => {
  it('a broadcast reaches members on the other instance once, the sender only with self, bytes as bytes', () => {
    const net = network();
    const [a, b] = [new Channels(undefined, { bus: net.bus() }), new Channels(undefined, { bus: net.bus() })];
    const [gotA, gotA2, gotB] = [[], [], []] as ChannelMessage[][];
    const sender = member('room', 'alice', gotA);
    const selfish = member('room', 'carol', gotA2, true);
    a.join(sender);
    a.join(selfish);
    b.join(member('room', 'bob', gotB));
    expect(a.broadcast('room', sender, 'msg', { text: 'hi' })).toBe(1);
    a.broadcast('room', selfish, 'msg', { text: 'me too' });
    expect(gotB).toEqual([
      { kind: 'broadcast', event: 'msg', payload: { text: 'hi' } },
      { kind: 'broadcast', event: 'msg', payload: { text: 'me too' } },
    ]);
    expect(gotA).toEqual([{ kind: 'broadcast', event: 'msg', payload: { text: 'me too' } }]);
    expect(gotA2).toHaveLength(2);
    // A private channel of the same name is apart on every instance.
    a.broadcast('room', null, 'secret', 1, true);
    expect(gotB).toHaveLength(2);
    a.broadcast('room', null, 'bytes', Buffer.from([0, 1, 254]));
    expect(Buffer.isBuffer((gotB[2] as { payload: unknown }).payload)).toBe(true);
    expect([...(gotB[2] as { payload: Buffer }).payload]).toEqual([0, 1, 254]);
  });

  it('presence joins and leaves show on the other instance, and a late joiner sees the whole state', () => {
    const net = network();
    const [a, b] = [new Channels(undefined, { bus: net.bus() }), new Channels(undefined, { bus: net.bus() })];
    const gotB: ChannelMessage[] = [];
    const alice = member('room', 'alice', []);
    a.join(alice);
    b.join(member('room', 'bob', gotB));
    a.track(alice, { status: 'online' });
    // A tick's presence changes go out at its end (Channels.flush).
    a.flush();
    expect(gotB.at(-1)).toMatchObject({ kind: 'presence_diff', joins: { alice: { metas: [{ status: 'online' }] } }, leaves: {} });
    a.track(alice, { status: 'away' });
    a.flush();
    const diff = gotB.at(-1) as Extract<ChannelMessage, { kind: 'presence_diff' }>;
    expect(diff.joins.alice.metas[0].status).toBe('away');
    expect(diff.leaves.alice.metas[0].status).toBe('online');
    expect(b.state('room').alice.metas.map((m) => m.status)).toEqual(['away']);
    const carol = member('room', 'carol', []);
    b.join(carol);
    b.track(carol, {});
    b.flush();
    expect(keysOf(a.state('room'))).toEqual(['alice', 'carol']);
    expect(keysOf(b.state('room'))).toEqual(['alice', 'carol']);
    a.leave(alice);
    a.flush();
    expect(keysOf(b.state('room'))).toEqual(['carol']);
    expect(gotB.at(-1)).toMatchObject({ kind: 'presence_diff', joins: {}, leaves: { alice: {} } });
  });

  it('an instance that stops renewing its presence (killed) leaves everywhere within the heartbeat; a lost diff heals at the next republish', () => {
    const net = network();
    let now = 1_000_000;
    const opts = () => ({ bus: net.bus(), heartbeatMs: 4000, now: () => now });
    const [a, b] = [new Channels(undefined, opts()), new Channels(undefined, opts())];
    const gotB: ChannelMessage[] = [];
    const alice = member('room', 'alice', []);
    a.join(alice);
    a.track(alice, { n: 1 });
    a.flush();
    b.join(member('room', 'bob', gotB));
    expect(keysOf(b.state('room'))).toEqual(['alice']);
    // A renews its lease every heartbeat/4: alive, it stays.
    for (let i = 0; i < 8; i++) {
      now += 1000;
      a.tick();
      b.tick();
    }
    expect(keysOf(b.state('room'))).toEqual(['alice']);
    // A diff lost on the way (the carrier was down): the next republish shows it as a diff.
    net.cut = true;
    const dave = member('room', 'dave', []);
    a.join(dave);
    a.track(dave, {});
    a.flush();
    net.cut = false;
    expect(keysOf(b.state('room'))).toEqual(['alice']);
    a.tick();
    expect(keysOf(b.state('room'))).toEqual(['alice', 'dave']);
    expect(gotB.at(-1)).toMatchObject({ kind: 'presence_diff', joins: { dave: {} }, leaves: {} });
    // A dies: no more republishing. Within the heartbeat (4 s) B drops its presence.
    const before = gotB.length;
    for (let t = 0; t < 4 && keysOf(b.state('room')).length > 0; t++) {
      now += 1000;
      b.tick();
    }
    expect(b.state('room')).toEqual({});
    expect(b.remoteTopics()).toBe(0);
    expect(gotB.slice(before)).toEqual([
      expect.objectContaining({
        kind: 'presence_diff',
        joins: {},
        leaves: expect.objectContaining({ alice: expect.anything(), dave: expect.anything() }),
      }),
    ]);
  });

  it('a started or reconnected instance asks for the others presence and gets it', async () => {
    const net = network();
    const a = new Channels(undefined, { bus: net.bus() });
    const alice = member('room', 'alice', []);
    a.join(alice);
    a.track(alice, {});
    const busB = net.bus();
    const b = new Channels(undefined, { bus: busB });
    expect(b.state('room')).toEqual({});
    busB.reconnect();
    await expect.poll(() => keysOf(b.state('room'))).toEqual(['alice']);
  });
});

describe('NOTIFY payloads (bus.ts)', () => {
  it('packs small messages together under 8,000 bytes and splits a large one into chunks that join again', () => {
    let s = 0;
    const small: BusMessage[] = Array.from({ length: 500 }, (_, i) => ({
      t: 'broadcast',
      k: 'o:room',
      event: 'e',
      payload: { i, text: 'é'.repeat(40) },
    }));
    const big: BusMessage = { t: 'broadcast', k: 'o:room', event: 'big', payload: 'ü'.repeat(30_000) };
    const payloads = packNotifications('me', () => ++s, [...small, big, small[0]]);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(NOTIFY_PAYLOAD_BYTES + 1);
    // Far fewer notifications than messages; every payload distinct (PostgreSQL folds equal ones).
    expect(payloads.length).toBeLessThan(40);
    expect(new Set(payloads).size).toBe(payloads.length);
    const joiner = new Reassembler();
    const out: BusMessage[] = [];
    for (const p of payloads) {
      const env = JSON.parse(p) as { f: string; x: Array<BusMessage | { c: string; i: number; n: number; d: string }> };
      expect(env.f).toBe('me');
      for (const item of env.x) {
        if ('c' in item) {
          const m = joiner.add(env.f, item);
          if (m) out.push(m);
        } else out.push(item);
      }
    }
    expect(out).toEqual([...small, big, small[0]]);
    expect(joiner.size).toBe(0);
  });

  it('a malformed message (anyone who may NOTIFY can send one) is told apart from the real ones', () => {
    expect(wellFormed({ t: 'sync' })).toBe(true);
    expect(wellFormed({ t: 'broadcast', k: 'o:room', event: 'e', payload: null })).toBe(true);
    expect(wellFormed({ t: 'diff', k: 'o:room', joins: { a: { metas: [{}] } }, leaves: {} })).toBe(true);
    expect(wellFormed({ t: 'diff', k: 'o:room', joins: { a: null }, leaves: {} })).toBe(false);
    expect(wellFormed({ t: 'state', k: 'o:room', state: { a: { metas: [1] } } })).toBe(false);
    expect(wellFormed({ t: 'broadcast', k: 5, event: 'e' })).toBe(false);
    expect(wellFormed({ t: 'other', k: 'o:room' })).toBe(false);
    expect(wellFormed(null)).toBe(false);
  });

  it('a chunked message whose sender died midway is dropped, and partial messages stay bounded', () => {
    const joiner = new Reassembler();
    for (let i = 0; i < 1000; i++) joiner.add('dead', { c: `m${i}`, i: 0, n: 2, d: 'AA==' });
    expect(joiner.size).toBeLessThanOrEqual(256);
    expect(joiner.add('dead', { c: 'x', i: 5, n: 2, d: 'AA==' })).toBeUndefined();
  });
});
