import postgres from 'postgres';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RealtimeChange, type RealtimeStatus, type WebSocketLike } from '../../sdk/src/index.js';
import { cleanup, type Instance, type ReverseProxy, startInstance, startNginx, until } from './cluster.js';
import { freshDbTarget, type TestDbTarget } from './db.js';

// docs/realtime.md, "every instance delivers every table's changes; killing one instance mid-stream loses
// nothing for a client that reconnects to the other with its lastSeq": two real Plinth processes
// on one PostgreSQL behind nginx, a client of the SDK on the proxy, 2,000 rows written straight
// into the database (not through either instance), and the instance holding the client's
// WebSocket killed with SIGKILL in the middle of the stream.

const PK = `pk_realtime_${'a1b2c3d4'.repeat(5)}`;
const SK = `sk_realtime_${'e5f6a7b8'.repeat(5)}`;
const WRITES = 2000;
const stack = cleanup();
let target: TestDbTarget;
let a: Instance;
let b: Instance;
let proxy: ReverseProxy;

beforeAll(async () => {
  target = stack.add(await freshDbTarget(), (t) => t.cleanup());
  const env = {
    DATABASE_URL: target.databaseUrl ?? '',
    PUBLIC_URL: 'http://plinth.test',
    PLINTH_PUBLIC_KEY: PK,
    PLINTH_SECRET_KEY: SK,
    TRUST_PROXY: '127.0.0.1',
    AUTH_RATE_REQUESTS_IP: '100000/60',
    AUTH_RATE_SIGNIN_IP: '100000/900',
  };
  a = stack.add(await startInstance(env), (i) => i.kill());
  b = stack.add(await startInstance(env), (i) => i.kill());
  proxy = stack.add(await startNginx([a.port, b.port]), (p) => p.stop());
}, 120_000);
afterAll(() => stack.run(), 60_000);

const service = { authorization: `Bearer ${SK}`, 'content-type': 'application/json' };

/** Realtime connections an instance holds now (its own GET /metrics). */
async function connectionsOf(i: Instance): Promise<number> {
  const text = await (await fetch(`${i.url}/metrics`, { headers: service })).text();
  const line = text.split('\n').find((l) => l.startsWith('plinth_realtime_connections '));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('two instances behind nginx, one killed mid-stream', () => {
  it('the client ends with every one of 2,000 changes exactly once, in order', async () => {
    const sql = await fetch(`${proxy.url}/api/v1/sql`, {
      method: 'POST',
      headers: service,
      body: JSON.stringify({
        query: `create table feed (id int primary key, owner uuid not null, body text not null);
                create policy own on feed for select using (owner = auth.uid());
                select realtime.enable('feed');`,
      }),
    });
    expect(sql.status, await sql.text()).toBe(200);
    const client = createClient(proxy.url, PK, {
      realtime: { WebSocket: WebSocket as unknown as WebSocketLike, maxReconnectDelayMs: 300 },
    });
    const signup = await client.auth.signUp({ email: `rt-${process.pid}@example.com`, password: 'correct horse battery' });
    expect(signup.error).toBeNull();
    const me = signup.data?.user.id as string;
    const got: RealtimeChange<{ id: number; owner: string; body: string }>[] = [];
    const statuses: RealtimeStatus[] = [];
    client.realtime.subscribe(
      { table: 'feed' },
      (c) => got.push(c as RealtimeChange<{ id: number; owner: string; body: string }>),
      (st) => statuses.push(st),
    );
    await until('subscribed', () => statuses.includes('SUBSCRIBED'));
    const [onA, onB] = [await connectionsOf(a), await connectionsOf(b)];
    expect(onA + onB).toBe(1);
    const holder = onA === 1 ? a : b;
    const other = holder === a ? b : a;

    // The writer: straight into PostgreSQL, one transaction per row, other users' rows between.
    const db = postgres(target.databaseUrl as string, { max: 1, onnotice: () => undefined });
    let written = 0;
    let writtenAtKill = -1;
    // The second half waits for the kill, so the kill is mid-stream however fast the machine writes.
    let resume = () => {};
    const killed = new Promise<void>((r) => {
      resume = r;
    });
    const writing = (async () => {
      for (let i = 1; i <= WRITES; i++, written++) {
        if (i === WRITES / 2 + 1) await killed;
        await db`insert into feed (id, owner, body) values (${i}, ${me}, ${`row ${i}`})`;
        if (i % 10 === 0)
          await db`insert into feed (id, owner, body) values (${-i}, ${'00000000-0000-4000-8000-000000000001'}, 'not mine')`;
      }
    })();
    try {
      await until('a part of the stream', () => got.length >= 300, 60_000);
      writtenAtKill = written;
      await holder.kill();
      resume();
      await until('reconnecting', () => statuses.includes('RECONNECTING'), 30_000);
      await writing;
      await until('every change', () => got.length >= WRITES, 120_000);
    } finally {
      resume();
      await writing.catch(() => undefined);
      await db.end();
      client.realtime.dispose();
      client.auth.dispose();
    }
    // Killed mid-stream: rows were still to be written.
    expect(writtenAtKill).toBeLessThan(WRITES);
    expect(await connectionsOf(other)).toBeLessThanOrEqual(1);
    expect(got.map((c) => c.row?.id)).toEqual(Array.from({ length: WRITES }, (_, i) => i + 1));
    expect(got.every((c) => c.op === 'insert' && c.row?.owner === me)).toBe(true);
    const seqs = got.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    // Reconnected and live again before the end (the last status is CLOSED, from dispose).
    expect(statuses.slice(statuses.indexOf('RECONNECTING'))).toContain('SUBSCRIBED');
  });
});
