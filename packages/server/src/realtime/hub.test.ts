import { describe, expect, it } from 'vitest';
import type { Principal } from '../http/index.js';
import type { Authorizer } from './authorize.js';
import type { CompiledFilter } from './filter.js';
import { Hub, PLINTH_FORMAT, REPLAYS_PER_IP, type Subscriber, type Subscription } from './hub.js';
import type { Change, ChangeLog } from '../changes/index.js';
import type { RoleAccess, TableAccess } from './policies.js';
import { EVENTS } from './protocol.js';

// Review round 3, R4: `since` replays are bounded (one at a time per connection, REPLAYS_PER_IP per
// client address, the rest wait their turn) and subscriptions of a table replaying the same window
// share one read of the log. The log here answers only when the test says so, so what runs at
// once is counted exactly, without timing.

const ANON: Principal = { role: 'anon', claims: '{"role":"anon"}', uid: null };
const NO_FILTER: CompiledFilter = { sql: '', values: [], columns: [], test: () => true };
const role: RoleAccess = {
  columns: new Set(['id']),
  allColumns: true,
  rls: false,
  permissive: [],
  restrictive: [],
  fast: true,
  sql: 'true',
};
const access: TableAccess = { table: 'pub', pk: ['id'], roles: { anon: role, authenticated: role, service: role } };

/** A log at `frontier` whose reads wait until `answer` is called; each read is recorded. */
function fakeLog(start: number) {
  let frontier = start;
  const reads: Array<{ table: string; after: number; upto: number; answer: () => void }> = [];
  const log: ChangeLog = {
    frontier: () => frontier,
    read(table, after, upto) {
      return new Promise<Change[]>((resolve) => {
        const changes: Change[] = [];
        for (let seq = after + 1; seq <= upto; seq++) {
          changes.push({ seq, table, op: 'insert', row: `{"id": ${seq}}`, old: null, writtenAt: new Date(0).toISOString() });
        }
        reads.push({ table, after, upto, answer: () => resolve(changes) });
      });
    },
    bounds: async () => ({ lastSeq: frontier, trimmedUpto: 0 }),
    poke: () => undefined,
    close: async () => undefined,
  };
  return {
    log,
    reads,
    moveTo: (n: number) => {
      frontier = n;
    },
  };
}

const authorizer: Authorizer = { decide: async (items) => items.map((i) => i.audiences.map(() => 'insert' as const)) };

function conn(ip: string): Subscriber & { sent: string[] } {
  const sent: string[] = [];
  return {
    principal: ANON,
    ip,
    paused: false,
    sent,
    send(text) {
      sent.push(text.toString());
      return true;
    },
    flushed: async () => undefined,
  };
}

function sub(id: string, c: Subscriber, table = 'pub'): Subscription {
  return {
    id,
    table,
    events: new Set(EVENTS),
    filter: NO_FILTER,
    conn: c,
    columns: [],
    format: PLINTH_FORMAT,
    cursor: 0,
    replaying: false,
    announce: false,
    closed: false,
    replayRunning: false,
    principal: c.principal,
  };
}

function hub(log: ChangeLog) {
  return new Hub({
    log,
    authorizer,
    access: async () => access,
    metrics: { delivered: () => undefined, lag: () => undefined },
    onError: (err) => {
      throw err;
    },
  });
}

/** Lets every pending promise chain run (no timer: microtasks and I/O callbacks only). */
const settle = () => new Promise((r) => setImmediate(r));

describe('replays (review round 3, R4)', () => {
  it('run one at a time per connection and REPLAYS_PER_IP per address; the rest wait, then all finish', async () => {
    const { log, reads } = fakeLog(10);
    const h = hub(log);
    // One connection with 3 replays; 6 connections of one address with one each; another address.
    const one = conn('10.0.0.1');
    const many = Array.from({ length: 6 }, () => conn('10.0.0.2'));
    const other = conn('10.0.0.3');
    const subs = [...[0, 1, 2].map((i) => sub(`one${i}`, one)), ...many.map((c, i) => sub(`many${i}`, c, `t${i}`)), sub('other', other)];
    for (const s of subs) h.add(s, 0);
    await settle();
    // Running now: one of `one`'s three, REPLAYS_PER_IP of the six, and `other`'s.
    expect(h.replaysRunning()).toBe(1 + REPLAYS_PER_IP + 1);
    // Answers every read made so far, round after round, until none is left.
    let answered = 0;
    while (answered < reads.length) {
      expect(h.replaysRunning()).toBeLessThanOrEqual(1 + REPLAYS_PER_IP + 1);
      for (const r of reads.slice(answered)) {
        r.answer();
        answered++;
      }
      await settle();
      await settle();
    }
    expect(h.replaysRunning()).toBe(0);
    // Every subscription got its ten changes, then `subscribed`.
    for (const s of subs) {
      const mine = (s.conn as ReturnType<typeof conn>).sent.map((m) => JSON.parse(m)).filter((m) => m.id === s.id);
      expect(mine.filter((m) => m.type === 'change').map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(mine.at(-1)).toMatchObject({ type: 'subscribed', seq: 10 });
    }
    // `one`'s three and `other` replay pub's window (0, 10]: one read of the log, not four.
    expect(reads.filter((r) => r.table === 'pub')).toHaveLength(1);
  });

  it('a connection’s replays go in order: the second starts once the first is live', async () => {
    const { log, reads } = fakeLog(5);
    const h = hub(log);
    const c = conn('10.0.0.9');
    const [a, b] = [sub('a', c, 'ta'), sub('b', c, 'tb')];
    h.add(a, 0);
    h.add(b, 0);
    await settle();
    expect(reads.map((r) => r.table)).toEqual(['ta']);
    reads[0].answer();
    await settle();
    await settle();
    expect(reads.map((r) => r.table)).toEqual(['ta', 'tb']);
    reads[1].answer();
    await settle();
    await settle();
    const order = c.sent.map((m) => JSON.parse(m)).map((m) => `${m.type}:${m.id}`);
    expect(order.indexOf('subscribed:a')).toBeLessThan(order.indexOf('change:b'));
    expect(order.at(-1)).toBe('subscribed:b');
  });

  it('a subscription removed while it waits gives its turn to the next', async () => {
    const { log, reads } = fakeLog(3);
    const h = hub(log);
    const c = conn('10.0.0.8');
    const [a, b, d] = [sub('a', c, 'ta'), sub('b', c, 'tb'), sub('d', c, 'td')];
    for (const s of [a, b, d]) h.add(s, 0);
    await settle();
    h.remove(b);
    reads[0].answer();
    await settle();
    await settle();
    // b never reads; d's turn came.
    expect(reads.map((r) => r.table)).toEqual(['ta', 'td']);
    reads[1].answer();
    await settle();
    await settle();
    const sent = c.sent.map((m) => JSON.parse(m));
    expect(sent.filter((m) => m.id === 'b')).toEqual([]);
    expect(sent.at(-1)).toMatchObject({ type: 'subscribed', id: 'd' });
    expect(h.replaysRunning()).toBe(0);
  });

  it('a decision asked for one principal is not sent once an auth message changed it (R7): the change is decided again', async () => {
    const { log, reads, moveTo } = fakeLog(0);
    const c = conn('10.0.0.7');
    const USER: Principal = { role: 'authenticated', claims: '{"role":"authenticated"}', uid: 'u', payload: {} } as Principal;
    c.principal = USER;
    const s = sub('s', c);
    Object.defineProperty(s, 'principal', { get: () => c.principal });
    let asked = 0;
    const h = new Hub({
      log,
      // The user may see the row, anon may not; the role changes while the first decision is made.
      authorizer: {
        decide: async (items) => {
          const ops = items.map((i) => i.audiences.map((a) => (a.principal.role === 'authenticated' ? ('insert' as const) : null)));
          if (asked++ === 0) c.principal = ANON;
          return ops;
        },
      },
      access: async () => access,
      metrics: { delivered: () => undefined, lag: () => undefined },
      onError: (err) => {
        throw err;
      },
    });
    h.add(s, null);
    moveTo(1);
    const change: Change = { seq: 1, table: 'pub', op: 'insert', row: '{"id": 1}', old: null, writtenAt: new Date(0).toISOString() };
    await h.dispatch([change]);
    await settle();
    // Read again from its cursor, and decided as anon: nothing.
    expect(reads).toHaveLength(1);
    reads[0].answer();
    await settle();
    await settle();
    expect(asked).toBe(2);
    expect(c.sent.map((m) => JSON.parse(m)).filter((m) => m.type === 'change')).toEqual([]);
  });

  it('counts subscriptions per address, live and replaying, until they are removed', () => {
    const { log } = fakeLog(0);
    const h = hub(log);
    const [x, y] = [conn('10.0.0.5'), conn('10.0.0.5')];
    const subs = [sub('1', x), sub('2', x), sub('3', y, 'other')];
    for (const s of subs) h.add(s, null);
    expect(h.subscriptionsOfIp('10.0.0.5')).toBe(3);
    h.remove(subs[0]);
    h.remove(subs[0]);
    expect(h.subscriptionsOfIp('10.0.0.5')).toBe(2);
    h.remove(subs[1]);
    h.remove(subs[2]);
    expect(h.subscriptionsOfIp('10.0.0.5')).toBe(0);
  });
});
