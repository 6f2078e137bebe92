import { afterAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../test/receiver.js';
import { parseWebhooks } from '../config/webhooks.js';
import { createPoster } from './post.js';
import { retryDelayMs } from './sender.js';

// The attempt's limits (issue 24: "2xx is success, 10 s timeout, … exponential backoff up to 3
// days"): the defaults, the backoff's schedule, and a receiver that never answers, against a real
// HTTP server on the loopback.

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close().catch(() => undefined);
});

describe('the attempt', () => {
  it('defaults: 10 s for an answer, retries from 1 s doubling to 1 h, given up after 3 days', () => {
    expect(parseWebhooks({})).toMatchObject({
      allowPrivate: false,
      timeoutMs: 10_000,
      retryMinMs: 1000,
      retryMaxMs: 3_600_000,
      retryWindowMs: 3 * 86_400_000,
    });
  });

  it('the backoff doubles from WEBHOOK_RETRY_MIN and stops at WEBHOOK_RETRY_MAX', () => {
    const c = { retryMinMs: 1000, retryMaxMs: 3_600_000 };
    const waits = Array.from({ length: 16 }, (_, i) => retryDelayMs(i + 1, c) / 1000);
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600, 3600, 3600]);
    // Far into the three days, still the cap (no overflow to Infinity or 0).
    expect(retryDelayMs(500, c)).toBe(3_600_000);
  });

  it('a receiver that does not answer within the timeout is a failed attempt with no status; 2xx of any kind is success', async () => {
    const r = await startReceiver();
    receivers.push(r);
    r.answer = (n) => (n === 0 ? 'hang' : { status: n === 1 ? 204 : 299 });
    // The timeout shortened here (WEBHOOK_TIMEOUT is 10 s by default, above).
    const poster = createPoster({ allowPrivate: true, timeoutMs: 300 });
    try {
      const hung = await poster.post(r.url, { 'content-type': 'application/json' }, '{}');
      expect(hung).toMatchObject({ ok: false, status: null });
      expect(hung.response).toMatch(/no complete answer within 300 ms/);
      expect(await poster.post(r.url, { 'content-type': 'application/json' }, '{}')).toMatchObject({ ok: true, status: 204 });
      expect(await poster.post(r.url, { 'content-type': 'application/json' }, '{}')).toMatchObject({ ok: true, status: 299 });
    } finally {
      poster.close();
    }
  });
});
