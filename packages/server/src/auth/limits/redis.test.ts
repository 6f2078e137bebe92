import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, signUp } from '../../../test/auth.js';
import { createTestServer } from '../../../test/harness.js';
import { createRedisCounter, redisReady } from './counter.js';

// Needs a redis-server binary: scripts/test.sh installs it (scripts/ensure-packages.sh).
const PORT = 56_379 + (process.pid % 500);
let server: ChildProcess | null = null;
const url = `redis://127.0.0.1:${PORT}`;

const startRedis = async () => {
  server = spawn('redis-server', ['--port', String(PORT), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
    stdio: 'ignore',
  });
  const probe = createRedisCounter(url, 'probe:');
  try {
    for (let i = 0; ; i++) {
      const up = await probe.peek('x').then(
        () => true,
        () => false,
      );
      if (up) break;
      if (i > 100) throw new Error('redis-server did not answer within 10 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await probe.close();
  }
};
const stopRedis = async () => {
  const s = server;
  server = null;
  if (!s || s.exitCode !== null) return;
  const exited = new Promise((r) => s.once('exit', r));
  s.kill('SIGKILL');
  await exited;
};

describe('limits in Redis (REDIS_URL)', () => {
  beforeAll(async () => {
    await startRedis();
  });
  afterAll(() => {
    server?.kill();
  });

  it('two counters on one Redis count together, and the window expires', async () => {
    const prefix = `t${Date.now()}:`;
    const a = createRedisCounter(url, prefix);
    const b = createRedisCounter(url, prefix);
    // Commands are not queued while connecting (a Redis outage must not hold requests).
    await Promise.all([redisReady(a.redis, 10_000), redisReady(b.redis, 10_000)]);
    try {
      expect((await a.hit('k', 1)).count).toBe(1);
      expect((await b.hit('k', 1)).count).toBe(2);
      const seen = await a.peek('k');
      expect(seen.count).toBe(2);
      expect(seen.resetMs).toBeGreaterThan(0);
      expect(seen.resetMs).toBeLessThanOrEqual(1000);
      await new Promise((r) => setTimeout(r, 1100));
      expect((await b.peek('k')).count).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('issue 19: two instances of one project share the console’s sign-in failure counts (per email and IP), apart from end-users’', async () => {
    const env = { REDIS_URL: url, AUTH_RATE_SIGNIN_EMAIL: '2/900', AUTH_RATE_SIGNIN_IP: '1000/900' };
    const one = await createAuthServer(env);
    const two = await createAuthServer(env);
    try {
      const admin = `console-${process.pid}-${Date.now()}@example.com`;
      for (const s of [one, two]) await s.admin.admins.upsert(admin, 'a long admin passphrase');
      const login = (s: typeof one, password: string, ip = '192.0.2.50') =>
        s.app.inject({ method: 'POST', url: '/api/v1/admin/login', remoteAddress: ip, payload: { email: admin, password } });
      expect(code(await login(one, 'wrong password!!'))).toEqual([400, 'invalid_credentials']);
      expect(code(await login(two, 'wrong password!!'))).toEqual([400, 'invalid_credentials']);
      // Two guesses through two instances: the shared count is full, on either one.
      expect(code(await login(one, 'a long admin passphrase'))).toEqual([429, 'rate_limited']);
      expect(code(await login(two, 'a long admin passphrase'))).toEqual([429, 'rate_limited']);
      // From another address the admin signs in; an end-user with that email is not affected.
      expect((await login(two, 'a long admin passphrase', '192.0.2.51')).statusCode).toBe(200);
      await signUp(one, admin);
      expect((await call(one, 'POST', 'signin', { email: admin, password: 'correct horse battery' })).statusCode).toBe(200);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });

  it('two instances of one project share sign-in failure counts', async () => {
    const env = { REDIS_URL: url, AUTH_RATE_SIGNIN_EMAIL: '2/900' };
    const one = await createAuthServer(env);
    // Same PUBLIC_URL → same namespace, as two instances of one project would have.
    const two = await createAuthServer(env);
    try {
      const addr = email('shared');
      await signUp(one, addr);
      expect(code(await call(one, 'POST', 'signin', { email: addr, password: 'wrong wrong' }))).toEqual([400, 'invalid_credentials']);
      expect(code(await call(two, 'POST', 'signin', { email: addr, password: 'wrong wrong' }))).toEqual([400, 'invalid_credentials']);
      const limited = await call(one, 'POST', 'signin', { email: addr, password: 'wrong wrong' });
      expect(code(limited)).toEqual([429, 'rate_limited']);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });

  it('two instances of one project share the per-IP request limit (@fastify/rate-limit in Redis)', async () => {
    // A project of its own (another PUBLIC_URL, so another namespace): counts start at zero.
    const env = { REDIS_URL: url, AUTH_RATE_REQUESTS_IP: '4/60', PUBLIC_URL: `http://ip-${Date.now()}.example.com` };
    const one = await createAuthServer(env);
    const two = await createAuthServer(env);
    try {
      const resend = (s: typeof one) => call(s, 'POST', 'resend-verification', { email: email('ip') });
      for (const s of [one, two, one, two]) expect((await resend(s)).statusCode).toBe(200);
      for (const s of [one, two]) {
        const res = await resend(s);
        expect(code(res)).toEqual([429, 'rate_limited']);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });

  it('Redis down: limits count per instance with one warning and never a 5xx; shared again when Redis is back', async () => {
    const env = {
      REDIS_URL: url,
      AUTH_RATE_SIGNIN_EMAIL: '2/900',
      AUTH_RATE_REQUESTS_IP: '100000/60',
      AUTH_RATE_SIGNIN_IP: '100000/900',
      LOG_LEVEL: 'info',
    };
    const logs: string[] = [];
    const logsTwo: string[] = [];
    const one = await createTestServer(env, { smtp: true, logs });
    const two = await createTestServer(env, { smtp: true, logs: logsTwo });
    const wrong = (s: typeof one, addr: string) => call(s, 'POST', 'signin', { email: addr, password: 'wrong wrong' });
    try {
      await stopRedis();
      const addr = email('down');
      await signUp(one, addr);
      // Each instance counts for itself: two failures on one, then its limit; two has its own count.
      expect(code(await wrong(one, addr))).toEqual([400, 'invalid_credentials']);
      expect(code(await wrong(one, addr))).toEqual([400, 'invalid_credentials']);
      expect(code(await wrong(one, addr))).toEqual([429, 'rate_limited']);
      expect(code(await wrong(two, addr))).toEqual([400, 'invalid_credentials']);
      // The per-IP request limit (the plugin's store) answers too, and other routes work.
      expect((await call(one, 'POST', 'resend-verification', { email: addr })).statusCode).toBe(200);
      expect((await call(two, 'POST', 'resend-verification', { email: addr })).statusCode).toBe(200);
      const warnings = () => logs.filter((l) => l.includes('rate limits count per instance'));
      expect(warnings()).toHaveLength(1);
      expect(JSON.parse(warnings()[0]).level).toBe(40);

      await startRedis();
      const back = (lines: string[]) => lines.some((l) => l.includes('rate limits are shared again'));
      await expect.poll(() => back(logs) && back(logsTwo), { timeout: 10_000 }).toBe(true);
      // Both instances count in Redis again: their failures add up.
      const again = email('back');
      await signUp(one, again);
      expect(code(await wrong(one, again))).toEqual([400, 'invalid_credentials']);
      expect(code(await wrong(two, again))).toEqual([400, 'invalid_credentials']);
      expect(code(await wrong(one, again))).toEqual([429, 'rate_limited']);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });
});
