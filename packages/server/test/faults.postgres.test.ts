import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type BlackHole, cleanup, startBlackHole, startInstance, startNginx, startPgCluster, until } from './cluster.js';
import { freshDbTarget } from './db.js';
import { startSmtpSink } from './mail.js';

// Faults survived (docs/operations.md): the database restarted under writes, an instance killed under
// load behind the proxy, clients that trickle their requests. Real processes; each test stops
// what it started, also when it fails.

const PK = `pk_faults_${'0a1b2c3d'.repeat(5)}`;
const SK = `sk_faults_${'4e5f6a7b'.repeat(5)}`;
const service = { authorization: `Bearer ${SK}`, 'content-type': 'application/json' };
const stack = cleanup();
afterEach(() => stack.run(), 60_000);

async function post(base: string, path: string, body: unknown, timeoutMs = 10_000) {
  const t0 = Date.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: service,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, ms: Date.now() - t0 };
  } catch (err) {
    return { status: 0, body: { error: String(err) }, ms: Date.now() - t0 };
  }
}
const sql = async (base: string, query: string) => {
  const r = await post(base, '/api/v1/sql', { query });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.results as Array<{ rows: Array<Record<string, unknown>> }>;
};

/** Writers posting rows with unique titles until stopped; what was acknowledged (201) is kept. */
function writeLoad(base: string, writers: number) {
  const acked = new Set<string>();
  const answers: Array<{ status: number; code?: string; ms: number; startedAt: number }> = [];
  let stop = false;
  let seq = 0;
  const loops = Array.from({ length: writers }, async () => {
    while (!stop) {
      const title = `w-${++seq}`;
      const startedAt = Date.now();
      const r = await post(base, '/api/v1/db/writes', { title });
      answers.push({ status: r.status, code: r.body?.code, ms: r.ms, startedAt });
      if (r.status === 201) acked.add(title);
      // An outage answers at once: do not spin on it.
      if (r.status !== 201) await new Promise((res) => setTimeout(res, 20));
    }
  });
  return {
    acked,
    answers,
    async stop() {
      stop = true;
      await Promise.all(loops);
    },
  };
}

describe('faults', () => {
  it('PostgreSQL restarted under a write load: 503 at once, recovery within 5 s, no acknowledged write lost', async () => {
    const pg = stack.add(await startPgCluster(), (c) => c.destroy());
    const plinth = stack.add(
      await startInstance({ DATABASE_URL: pg.url, PLINTH_PUBLIC_KEY: PK, PLINTH_SECRET_KEY: SK, DB_POOL_SIZE: '4' }),
      (i) => i.stop(),
    );
    await sql(plinth.url, 'create table writes (id bigserial primary key, title text unique not null)');
    const load = stack.add(writeLoad(plinth.url, 6), (l) => l.stop());
    await until('writes acknowledged before the outage', () => load.acked.size >= 50);

    await pg.stop();
    const downAt = Date.now();
    // While it is down: every request answers 503 database_unavailable, each within a second.
    for (let i = 0; i < 5; i++) {
      const r = await post(plinth.url, '/api/v1/db/writes', { title: `probe-${i}` });
      expect([r.status, r.body?.code]).toEqual([503, 'database_unavailable']);
      expect(r.ms).toBeLessThan(1000);
    }
    const health = await fetch(`${plinth.url}/health`);
    expect(health.status).toBe(503);
    expect((await health.json()).status).toBe('unavailable');

    // The outage lasts until the writers have gone on for over a second against it.
    await until('writes answered for a second of the outage', () => load.answers.some((a) => a.startedAt >= downAt + 1500));
    const restartAt = Date.now();
    await pg.start();
    const upAt = Date.now();
    const recovered = await until(
      'a write succeeds again',
      async () => (await post(plinth.url, '/api/v1/db/writes', { title: `after-${Date.now()}` })).status === 201,
      30_000,
    );
    expect(recovered).toBeLessThan(5000);
    // /health recovers too, within the same 5 s of the database's return (a load balancer
    // that took the instance out puts it back).
    await until('/health answers 200 again', async () => (await fetch(`${plinth.url}/health`)).status === 200, 30_000);
    expect(Date.now() - upAt).toBeLessThan(5000);
    const before = load.acked.size;
    await until('the load goes on after recovery', () => load.acked.size >= before + 20);
    await load.stop();

    // No hang and no other failure: every answer was a 201 or a 503 database_unavailable.
    const other = load.answers.filter((a) => a.status !== 201 && !(a.status === 503 && a.code === 'database_unavailable'));
    expect(other).toEqual([]);
    // While the database was down, each answer came within a second: every write begun at least
    // a second before the restart began (its whole second in the outage). A write begun later may
    // wait for PostgreSQL to accept connections again (CI saw one take over a second): that
    // window is the recovery's, checked above.
    const whileDown = load.answers.filter((a) => a.startedAt >= downAt && a.startedAt + 1000 <= restartAt);
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((a) => a.ms >= 1000)).toEqual([]);
    const [{ rows }] = await sql(plinth.url, 'select title from writes');
    const stored = new Set(rows.map((r) => String(r.title)));
    const lost = [...load.acked].filter((t) => !stored.has(t));
    expect(lost).toEqual([]);
  }, 180_000);

  it('kill -9 of one instance of two under load: the other serves on, no acknowledged write lost, its outbox claim is sent after the lease', async () => {
    const target = stack.add(await freshDbTarget(), (t) => t.cleanup());
    const sink = stack.add(await startSmtpSink(), (s) => s.stop());
    const hole: BlackHole = stack.add(await startBlackHole(), (h) => h.stop());
    const env = {
      DATABASE_URL: target.databaseUrl ?? '',
      PUBLIC_URL: 'http://plinth.test',
      PLINTH_PUBLIC_KEY: PK,
      PLINTH_SECRET_KEY: SK,
      OUTBOX_LEASE_SECONDS: '3',
      AUTH_RATE_REQUESTS_IP: '100000/60',
    };
    // a's mail server hangs: what a claims, it never finishes sending before it dies.
    const a = stack.add(await startInstance({ ...env, SMTP_URL: hole.url }), (i) => i.kill());
    const b = stack.add(await startInstance({ ...env, SMTP_URL: sink.url }), (i) => i.stop());
    const proxy = stack.add(await startNginx([a.port, b.port]), (p) => p.stop());
    await sql(a.url, 'create table writes (id bigserial primary key, title text unique not null)');
    // Without event triggers (a hosted owner) b learns of the table by its catalog poll: the load starts once b serves it.
    await until('b serves the table', async () => (await fetch(`${b.url}/api/v1/db/writes?limit=1`, { headers: service })).status === 200);
    const patch = await fetch(`${a.url}/api/v1/settings/auth`, {
      method: 'PATCH',
      headers: service,
      body: JSON.stringify({ magic_link_enabled: true, allowed_redirect_urls: ['http://app.test'], magic_link_url: 'http://app.test/m' }),
    });
    expect(patch.status).toBe(200);
    await until('b has the settings', async () => (await (await fetch(`${b.url}/v1/auth/settings`)).json()).magic_link_enabled === true);

    // A message that a claims: a sends it at once (kick) and hangs on its mail server. b polls
    // too and could win the race: then try another address.
    let claimed: string | null = null;
    for (let i = 0; i < 5 && !claimed; i++) {
      const addr = `claimed-${i}-${process.pid}@example.com`;
      const held = hole.connections;
      const res = await fetch(`${a.url}/v1/auth/request-magic-link`, {
        method: 'POST',
        headers: { apikey: PK, 'content-type': 'application/json' },
        body: JSON.stringify({ email: addr }),
      });
      expect(res.status).toBe(200);
      await until('someone sends it', () => hole.connections > held || sink.received.some((m) => m.to.includes(addr)));
      if (hole.connections > held) claimed = addr;
    }
    expect(claimed).not.toBeNull();

    const load = stack.add(writeLoad(proxy.url, 6), (l) => l.stop());
    await until('writes through the proxy', () => load.acked.size >= 30);
    await a.kill();
    // From here on a is gone: every request goes to nginx, which finds a's port refused and
    // passes the request to b. (Requests in flight when a died may be lost: never acknowledged.)
    const killedAt = Date.now();
    const late = () => load.answers.filter((x) => x.startedAt > killedAt);
    await until('b serves on', () => late().filter((x) => x.status === 201).length >= 40);
    await load.stop();
    expect(late().filter((x) => x.status !== 201)).toEqual([]);
    // Whatever was acknowledged, by either instance, is there.
    const [{ rows }] = await sql(b.url, 'select title from writes');
    const stored = new Set(rows.map((r) => String(r.title)));
    expect([...load.acked].filter((t) => !stored.has(t))).toEqual([]);

    // The message a had claimed: sent by b once a's lease ran out, exactly once.
    const addr = claimed as string;
    await until('the claimed message reaches the sink', () => sink.received.some((m) => m.to.includes(addr)), 60_000);
    expect(sink.received.filter((m) => m.to.includes(addr))).toHaveLength(1);
  }, 180_000);

  it('slow clients (trickled headers or body) cannot hold the workers, directly or behind the proxy', async () => {
    const target = stack.add(await freshDbTarget(), (t) => t.cleanup());
    const plinth = stack.add(
      await startInstance(
        { DATABASE_URL: target.databaseUrl ?? '', PLINTH_PUBLIC_KEY: PK, PLINTH_SECRET_KEY: SK, REQUEST_TIMEOUT_MS: '2000' },
        ['--workers', '2'],
      ),
      (i) => i.stop(),
    );
    const proxy = stack.add(await startNginx([plinth.port]), (p) => p.stop());
    const sockets: Socket[] = [];
    stack.add(sockets, (all) => {
      for (const s of all) s.destroy();
    });
    /** A client that sends a request's start and then one byte every 200 ms, forever. */
    const trickle = (port: number, kind: 'headers' | 'body') => {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      let got = '';
      s.on('data', (d) => {
        got += d;
      });
      s.on('error', () => undefined);
      const closed = new Promise<string>((resolve) => s.on('close', () => resolve(got)));
      s.write(
        kind === 'headers'
          ? 'GET /health HTTP/1.1\r\nHost: x\r\n'
          : `POST /api/v1/sql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${SK}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
      const timer = setInterval(() => s.writable && s.write(kind === 'headers' ? 'X' : ' '), 200);
      s.on('close', () => clearInterval(timer));
      return closed;
    };
    const direct = [
      ...Array.from({ length: 20 }, () => trickle(plinth.port, 'headers')),
      ...Array.from({ length: 20 }, () => trickle(plinth.port, 'body')),
    ];
    const proxied = Array.from({ length: 20 }, (_, i) => trickle(proxy.port, i % 2 ? 'headers' : 'body'));
    // Meanwhile, ordinary requests are answered, directly and through the proxy.
    for (let i = 0; i < 10; i++) {
      expect((await fetch(`${plinth.url}/health`)).status).toBe(200);
      expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    }
    // The workers close every trickling client once REQUEST_TIMEOUT_MS (or the headers timeout) is over.
    const answers = await Promise.race([Promise.all(direct), new Promise<null>((r) => setTimeout(() => r(null), 60_000))]);
    expect(answers, 'every slow client closed').not.toBeNull();
    for (const got of answers ?? []) {
      if (got) expect(got).toMatch(/^HTTP\/1\.1 408 .*"code":"request_timeout"/s);
    }
    expect((answers ?? []).filter((got) => got.startsWith('HTTP/1.1 408')).length).toBeGreaterThan(0);
    expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    void proxied;
  }, 180_000);
});
