import { describe, expect, it } from 'vitest';
import { singleFlight } from './single-flight.js';

/** A load whose runs the test finishes by hand, in order. */
function manualLoad() {
  const pending: Array<() => void> = [];
  let runs = 0;
  const load = () =>
    new Promise<number>((resolve) => {
      const n = ++runs;
      pending.push(() => resolve(n));
    });
  const finishNext = async () => {
    for (let i = 0; i < 100 && pending.length === 0; i++) await Promise.resolve();
    pending.shift()?.();
  };
  return { load, finishNext, runs: () => runs };
}

describe('singleFlight', () => {
  it('runs one load at a time; calls meanwhile share one more run, which reads what changed', async () => {
    const m = manualLoad();
    const reload = singleFlight(m.load);
    const first = reload();
    const second = reload();
    const third = reload();
    expect(m.runs()).toBe(1); // the second and third wait for the first to end
    await m.finishNext();
    await m.finishNext();
    // All three callers get the result of the run that started after their call.
    expect(await Promise.all([first, second, third])).toEqual([2, 2, 2]);
    expect(m.runs()).toBe(2);
  });

  it('starts afresh after a run, and after a failed one', async () => {
    let calls = 0;
    const reload = singleFlight(async () => {
      calls++;
      if (calls === 1) throw new Error('database down');
      return calls;
    });
    await expect(reload()).rejects.toThrow('database down');
    expect(await reload()).toBe(2);
    expect(await reload()).toBe(3);
  });
});
