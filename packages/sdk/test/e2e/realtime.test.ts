import { createServer, type Server, type Socket, connect } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type PlinthClient, type RealtimeChange, type RealtimeStatus, type WebSocketLike } from '../../src/index.js';
import { type E2eServer, email, startServer } from './server.js';

// client.realtime against the real server (Node 20 has no WebSocket: the `ws` class is passed in).
// A TCP proxy between the SDK and the server drops connections on demand, so the SDK's own
// reconnection and resume are what is tested.

let s: E2eServer;
let proxy: Server;
let proxyUrl: string;
const sockets = new Set<Socket>();
const clients: PlinthClient[] = [];
const PASSWORD = 'correct horse battery';

type Todo = { id: number; title: string; user_id: string };

function sdk(): PlinthClient {
  const c = createClient(proxyUrl, s.publicKey, {
    realtime: { WebSocket: WebSocket as unknown as WebSocketLike, maxReconnectDelayMs: 500 },
  });
  clients.push(c);
  return c;
}

/** Drops every connection through the proxy (the server and the SDK each see a reset). */
function dropAll() {
  for (const sock of sockets) sock.destroy();
}

async function until(what: string, probe: () => boolean, ms = 30_000) {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function recorder<T>() {
  const changes: RealtimeChange<T>[] = [];
  const statuses: RealtimeStatus[] = [];
  return {
    changes,
    statuses,
    onChange: (c: RealtimeChange) => changes.push(c as unknown as RealtimeChange<T>),
    onStatus: (st: RealtimeStatus) => statuses.push(st),
  };
}

beforeAll(async () => {
  s = await startServer();
  const res = await s.t.sql(`
    create table todos (id bigserial primary key, title text not null, user_id uuid default auth.uid());
    create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());
    select realtime.enable('todos');`);
  expect(res.statusCode, res.body).toBe(200);
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
  const port = (proxy.address() as { port: number }).port;
  proxyUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const c of clients) {
    c.realtime.dispose();
    c.auth.dispose();
  }
  dropAll();
  await new Promise((r) => proxy?.close(r));
  await s?.t.stop();
});

async function signedIn(tag: string) {
  const c = sdk();
  const addr = email(tag);
  const { data, error } = await c.auth.signUp({ email: addr, password: PASSWORD });
  expect(error).toBeNull();
  return { c, id: data!.user.id, addr };
}

describe('client.realtime.subscribe', () => {
  it('each user gets their own changes, and resumes after a dropped connection with nothing lost or repeated', async () => {
    const alice = await signedIn('rt-alice');
    const bob = await signedIn('rt-bob');
    const ra = recorder<Todo>();
    const rb = recorder<Todo>();
    const subA = alice.c.realtime.subscribe({ table: 'todos' }, ra.onChange, ra.onStatus);
    bob.c.realtime.subscribe({ table: 'todos' }, rb.onChange, rb.onStatus);
    await until('both subscribed', () => ra.statuses.includes('SUBSCRIBED') && rb.statuses.includes('SUBSCRIBED'));
    expect((await alice.c.from('todos').insert({ title: 'a1' })).error).toBeNull();
    expect((await bob.c.from('todos').insert({ title: 'b1' })).error).toBeNull();
    await until('first changes', () => ra.changes.length === 1 && rb.changes.length === 1);

    dropAll();
    await until('reconnecting', () => ra.statuses.includes('RECONNECTING'));
    // Written while the SDK is away (straight to the server, not through the dropped proxy).
    const direct = createClient(s.url, s.publicKey);
    clients.push(direct);
    expect((await direct.auth.signIn({ email: alice.addr, password: PASSWORD })).error).toBeNull();
    for (let i = 2; i <= 20; i++) expect((await direct.from('todos').insert({ title: `a${i}` })).error).toBeNull();
    await until('all of alice', () => ra.changes.length === 20);
    expect(ra.changes.map((c) => c.row?.title)).toEqual(Array.from({ length: 20 }, (_, i) => `a${i + 1}`));
    expect(new Set(ra.changes.map((c) => c.seq)).size).toBe(20);
    expect(subA.lastSeq).toBe(ra.changes[19].seq);
    expect(ra.statuses.at(-1)).toBe('SUBSCRIBED');
    expect(rb.changes.map((c) => c.row?.title)).toEqual(['b1']);
  });

  it('the token follows the session: signed out it sees nothing of its rows, signed in as another user it sees theirs', async () => {
    const carol = await signedIn('rt-carol');
    const dave = await signedIn('rt-dave');
    const c = sdk();
    expect((await c.auth.signIn({ email: carol.addr, password: PASSWORD })).error).toBeNull();
    const r = recorder<Todo>();
    c.realtime.subscribe({ table: 'todos' }, r.onChange, r.onStatus);
    await until('subscribed', () => r.statuses.includes('SUBSCRIBED'));
    await carol.c.from('todos').insert({ title: 'carol 1' });
    await until('carol 1', () => r.changes.length === 1);
    await c.auth.signOut();
    await carol.c.from('todos').insert({ title: 'carol 2 (signed out)' });
    expect((await c.auth.signIn({ email: dave.addr, password: PASSWORD })).error).toBeNull();
    // The new token reaches the server a moment after signIn resolves (an auth message): Dave
    // writes until one of his rows arrives; only changes after the switch are his to see.
    for (let i = 1; !r.changes.some((x) => x.row?.title?.startsWith('dave')); i++) {
      await dave.c.from('todos').insert({ title: `dave ${i}` });
      await until('a change or a moment', () => r.changes.some((x) => x.row?.title?.startsWith('dave')), 200).catch(() => undefined);
    }
    expect(r.changes[0].row?.title).toBe('carol 1');
    expect(r.changes.slice(1).every((x) => x.row?.user_id === dave.id)).toBe(true);
  });

  it('reports a refused subscription as ERROR with the server’s code', async () => {
    const c = sdk();
    const errors: string[] = [];
    c.realtime.subscribe(
      { table: 'nope' },
      () => undefined,
      (st, err) => st === 'ERROR' && errors.push(err?.code ?? ''),
    );
    await until('error', () => errors.length === 1);
    expect(errors).toEqual(['table_not_found']);
  });

  it('unsubscribe ends deliveries (CLOSED)', async () => {
    const erin = await signedIn('rt-erin');
    const r = recorder<Todo>();
    const sub = erin.c.realtime.subscribe({ table: 'todos' }, r.onChange, r.onStatus);
    await until('subscribed', () => r.statuses.includes('SUBSCRIBED'));
    await sub.unsubscribe();
    expect(r.statuses.at(-1)).toBe('CLOSED');
    expect(sub.status).toBe('CLOSED');
  });
});
