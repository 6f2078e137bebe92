import { describe, expect, it } from 'vitest';
import { openWorker, retryAfterMs } from './worker.js';

/** A run the test finishes by hand, recording how many ran and how many at once. */
function manualRun(more: () => boolean = () => false) {
  const pending: Array<() => void> = [];
  let runs = 0;
  let active = 0;
  let maxActive = 0;
  const run = () =>
    new Promise<boolean>((resolve) => {
      runs++;
      active++;
      maxActive = Math.max(maxActive, active);
      pending.push(() => {
        active--;
        resolve(more());
      });
    });
  const finishNext = async () => {
    for (let i = 0; i < 1000 && pending.length === 0; i++) await new Promise((r) => setImmediate(r));
    pending.shift()?.();
  };
  return { run, finishNext, runs: () => runs, maxActive: () => maxActive, waiting: () => pending.length };
}

describe('openWorker', () => {
  it('never runs twice at once, and kicks during a run give exactly one more run after it', async () => {
    const m = manualRun();
    const w = openWorker({ run: m.run, pollMs: null, autoStart: false, onError: () => undefined });
    w.kick();
    await expect.poll(() => m.waiting()).toBe(1);
    w.kick();
    w.kick();
    w.kick();
    expect(m.runs()).toBe(1); // the three kicks wait for the run under way
    await m.finishNext(); // it ends: the kicks made during it ask for one more run, not three
    await expect.poll(() => m.runs()).toBe(2);
    await m.finishNext();
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(m.runs()).toBe(2);
    expect(m.maxActive()).toBe(1);
    await w.close();
  });

  it('runs again at once while a run says there is more (a full batch), until it says no', async () => {
    let left = 5;
    let runs = 0;
    const w = openWorker({
      run: async () => {
        runs++;
        left--;
        return left > 0;
      },
      pollMs: null,
      autoStart: false,
      onError: () => undefined,
    });
    await w.drain();
    expect(runs).toBe(5);
    expect(left).toBe(0);
    await w.close();
  });

  it('a failing run is reported and the loop goes on at the next kick, not in a tight loop', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const w = openWorker({
      run: async () => {
        runs++;
        if (runs === 1) throw new Error('database down');
        return false;
      },
      pollMs: null,
      autoStart: false,
      onError: (err) => errors.push(err),
    });
    await w.drain();
    expect(runs).toBe(1);
    expect(errors).toHaveLength(1);
    await w.drain();
    expect(runs).toBe(2);
    await w.close();
  });

  it('polls while idle, and stops polling and kicking once closed', async () => {
    let runs = 0;
    const w = openWorker({
      run: async () => {
        runs++;
      },
      pollMs: 1,
      onError: () => undefined,
    });
    await expect.poll(() => runs).toBeGreaterThanOrEqual(3);
    await w.close();
    const after = runs;
    w.kick();
    await w.drain();
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(after);
  });

  it('keeps the gap between two starts: kicks inside it are coalesced into one run after it', async () => {
    let t = 0;
    let runs = 0;
    const w = openWorker({
      run: async () => {
        runs++;
      },
      pollMs: null,
      minGapMs: 1000,
      now: () => t,
      onError: () => undefined,
    });
    await expect.poll(() => runs).toBe(1);
    for (let i = 0; i < 10; i++) w.kick();
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(runs).toBe(1); // inside the gap: waiting for its timer
    t = 1000;
    await w.drain(); // drain does not wait for the gap
    expect(runs).toBe(2);
    await w.close();
  });
});

describe('retryAfterMs', () => {
  it('doubles from the minimum up to the maximum', () => {
    expect([0, 1, 2, 3, 4].map((n) => retryAfterMs(n, { min: 5_000, max: 600_000 }))).toEqual([5_000, 5_000, 10_000, 20_000, 40_000]);
    expect(retryAfterMs(8, { min: 5_000, max: 600_000 })).toBe(600_000);
    expect(retryAfterMs(500, { min: 1_000, max: 60_000 })).toBe(60_000);
  });
});
