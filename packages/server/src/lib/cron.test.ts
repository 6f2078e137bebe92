import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CronError, cronMatches, nextRun, parseCron, runsBetween } from './cron.js';

const at = (iso: string) => Date.parse(iso);

describe('cron expressions', () => {
  it('reads the forms crontab users write', () => {
    const c = parseCron('*/15 9-17 * jan-mar mon-fri');
    expect([...c.minutes]).toEqual([0, 15, 30, 45]);
    expect([...c.hours]).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect([...c.months]).toEqual([1, 2, 3]);
    expect([...c.weekdays]).toEqual([1, 2, 3, 4, 5]);
    expect([...parseCron('5/20 * * * 7').minutes]).toEqual([5, 25, 45]);
    expect([...parseCron('0 0 * * 7').weekdays]).toEqual([0]); // 7 is Sunday too
    expect(parseCron('@daily')).toMatchObject({ source: '@daily' });
    expect(nextRun(parseCron('@hourly'), at('2026-03-01T10:00:00Z'))).toBe(at('2026-03-01T11:00:00Z'));
  });

  it('runs at the next matching minute, in UTC, across days, months and years', () => {
    expect(nextRun(parseCron('0 3 * * *'), at('2026-01-01T04:00:00Z'))).toBe(at('2026-01-02T03:00:00Z'));
    expect(nextRun(parseCron('*/5 * * * *'), at('2026-01-01T00:04:59Z'))).toBe(at('2026-01-01T00:05:00Z'));
    expect(nextRun(parseCron('*/5 * * * *'), at('2026-01-01T00:05:00Z'))).toBe(at('2026-01-01T00:10:00Z'));
    expect(nextRun(parseCron('30 23 31 12 *'), at('2026-12-31T23:30:00Z'))).toBe(at('2027-12-31T23:30:00Z'));
    expect(nextRun(parseCron('0 0 29 2 *'), at('2026-03-01T00:00:00Z'))).toBe(at('2028-02-29T00:00:00Z'));
    expect(nextRun(parseCron('0 0 31 2 *'), at('2026-03-01T00:00:00Z'))).toBeNull();
    // Both day fields restricted: either one (the 1st, or any Monday).
    expect(nextRun(parseCron('0 12 1 * mon'), at('2026-06-02T00:00:00Z'))).toBe(at('2026-06-08T12:00:00Z'));
    // One of them `*`-based: both must hold (every other day that is a Monday).
    expect(nextRun(parseCron('0 12 */2 * mon'), at('2026-06-02T00:00:00Z'))).toBe(at('2026-06-15T12:00:00Z'));
  });

  it('counts runs in a span (the missed runs of a server that was down), up to a cap', () => {
    const every5 = parseCron('*/5 * * * *');
    expect(runsBetween(every5, at('2026-01-01T00:00:00Z'), at('2026-01-01T01:00:00Z'))).toBe(12);
    expect(runsBetween(every5, at('2026-01-01T00:00:00Z'), at('2027-01-01T00:00:00Z'), 50)).toBe(50);
  });

  it('refuses what is not a schedule with the field and the fix', () => {
    const refusal = (s: string) => {
      try {
        parseCron(s);
      } catch (err) {
        expect(err).toBeInstanceOf(CronError);
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('* * * *')).toMatch(/has 4 fields; a schedule has five: minute hour/);
    expect(refusal('60 * * * *')).toBe('minute 60 is outside 0–59');
    expect(refusal('* 5-2 * * *')).toBe('hour range 5-2 runs backwards');
    expect(refusal('*/0 * * * *')).toMatch(/step "0" must be a number from 1/);
    expect(refusal('* * * foo *')).toBe('month "foo" is not a number or a name');
    expect(refusal('@often')).toMatch(/not a macro/);
    expect(refusal('1,,2 * * * *')).toMatch(/is not a value/);
    expect(refusal('x'.repeat(101))).toMatch(/at most 100 characters/);
    // A name of Object.prototype is no macro (a property test found "__proto__" throwing a TypeError).
    expect(refusal('__proto__')).toMatch(/has 1 fields; a schedule has five/);
    expect(refusal('constructor')).toMatch(/has 1 fields/);
  });

  const part = (min: number, max: number) =>
    fc.oneof(
      fc.constant('*'),
      fc.integer({ min, max }).map(String),
      fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
      fc.integer({ min: 1, max: max - min + 1 }).map((s) => `*/${s}`),
      fc.array(fc.integer({ min, max }), { minLength: 1, maxLength: 4 }).map((xs) => xs.join(',')),
    );
  const expression = fc.tuple(part(0, 59), part(0, 23), part(1, 31), part(1, 12), part(0, 7)).map((fields) => fields.join(' '));
  const instant = fc.integer({ min: at('2020-01-01T00:00:00Z'), max: at('2035-01-01T00:00:00Z') });

  it('property: the next run matches, is after the instant, and no minute between them matches (checked minute by minute)', () => {
    fc.assert(
      fc.property(expression, instant, (text, t) => {
        const c = parseCron(text);
        const next = nextRun(c, t);
        // The brute force looks 100 days ahead; past that only "after t and matching" is checked.
        const horizon = t + 100 * 86_400_000;
        let brute: number | null = null;
        for (let m = Math.floor(t / 60_000) * 60_000 + 60_000; m <= horizon; m += 60_000)
          if (cronMatches(c, m)) {
            brute = m;
            break;
          }
        if (brute !== null) expect(next).toBe(brute);
        else if (next !== null) {
          expect(next).toBeGreaterThan(horizon);
          expect(cronMatches(c, next)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('property: any text is a schedule or a CronError, never another exception', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          expression.map((e) => e.replace(/\d/, 'x')),
        ),
        (text) => {
          try {
            parseCron(text);
          } catch (err) {
            expect(err).toBeInstanceOf(CronError);
          }
        },
      ),
    );
  });
});
