import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, code, createAuthServer, email, signUp } from '../../../test/auth.js';
import { redisCounter } from './counter.js';

// Needs a redis-server binary: scripts/test.sh installs it (scripts/ensure-packages.sh).
const PORT = 56_379 + (process.pid % 500);
let server: ChildProcess | null = null;
const url = `redis://127.0.0.1:${PORT}`;

describe('limits in Redis (REDIS_URL)', () => {
  beforeAll(async () => {
    server = spawn('redis-server', ['--port', String(PORT), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
      stdio: 'ignore',
    });
    const probe = redisCounter(url, 'probe:');
    for (let i = 0; i < 50; i++) {
      try {
        await probe.peek('x');
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await probe.close();
  });
  afterAll(() => {
    server?.kill();
  });

  it('two counters on one Redis count together, and the window expires', async () => {
    const prefix = `t${Date.now()}:`;
    const a = redisCounter(url, prefix);
    const b = redisCounter(url, prefix);
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
});
