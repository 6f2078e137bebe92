/**
 * Cron expressions for function schedules (docs/functions.md, "Schedules"): the five fields of
 * crontab(5), `minute hour day-of-month month day-of-week`, in UTC, with `*`, lists (`1,15`),
 * ranges (`1-5`), steps (`*\/15`, `10-50/10`), month and day names (`jan`, `mon`), 7 as Sunday,
 * and the macros `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`),
 * `@hourly`. As in cron, when both day fields are restricted a day matching either runs.
 * Parsing is one pass over at most 100 characters; `next` walks months, days, hours and minutes
 * by sets (at most a few thousand steps over eight years), never minute by minute.
 */

export interface Cron {
  /** The expression as written. */
  readonly source: string;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 (Sunday) to 6. */
  readonly weekdays: ReadonlySet<number>;
  /** Day-of-month and day-of-week both restricted: a day matching either runs (cron's rule). */
  readonly eitherDay: boolean;
}

export class CronError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronError';
  }
}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** The first name's number (months start at 1). */
  base?: number;
}
const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, base: 0 },
];

function value(text: string, f: FieldSpec): number {
  const named = f.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (f.base ?? 0);
  if (!/^\d{1,2}$/.test(text)) throw new CronError(`${f.name} "${text}" is not a number${f.names ? ' or a name' : ''}`);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new CronError(`${f.name} ${n} is outside ${f.min}–${f.max}`);
  return n;
}

function field(text: string, f: FieldSpec): { set: Set<number>; star: boolean } {
  const set = new Set<number>();
  // Vixie cron's rule: a field written from `*` (`*`, `*\/2`) is "any" for the two-day-fields choice.
  const star = text.startsWith('*');
  for (const part of text.split(',')) {
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined || range === '') throw new CronError(`${f.name} "${part}" is not a value, a range or a step`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d{1,2}$/.test(stepText) || Number(stepText) < 1) throw new CronError(`${f.name} step "${stepText}" must be a number from 1`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      [lo, hi] = [f.min, f.max];
    } else if (range.includes('-')) {
      const [a, b, more] = range.split('-');
      if (more !== undefined) throw new CronError(`${f.name} "${range}" is not a range`);
      [lo, hi] = [value(a, f), value(b, f)];
      if (lo > hi) throw new CronError(`${f.name} range ${range} runs backwards`);
    } else {
      lo = value(range, f);
      // `5/15` is 5, 20, 35, 50 (from 5 to the end, as Vixie cron reads it).
      hi = stepText === undefined ? lo : f.max;
    }
    for (let v = lo; v <= hi; v += step) set.add(v);
  }
  return { set, star };
}

/**
 * @example parseCron('*\/5 * * * *').minutes.has(10) // true
 * @throws CronError naming the field and the fix
 */
export function parseCron(source: string): Cron {
  if (typeof source !== 'string' || source.length > 100) throw new CronError('a schedule is a cron expression of at most 100 characters');
  const text = source.trim();
  // Own keys only: `__proto__` or `constructor` is text, not a macro.
  const expanded = Object.hasOwn(MACROS, text.toLowerCase()) ? MACROS[text.toLowerCase()] : text;
  if (expanded.startsWith('@')) throw new CronError(`"${text}" is not a macro (${Object.keys(MACROS).join(', ')})`);
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5)
    throw new CronError(`"${text}" has ${parts.length} fields; a schedule has five: minute hour day-of-month month day-of-week`);
  const [mi, ho, dom, mo, dow] = parts.map((p, i) => field(p, FIELDS[i]));
  const weekdays = new Set([...dow.set].map((d) => d % 7));
  return {
    source: text,
    minutes: mi.set,
    hours: ho.set,
    days: dom.set,
    months: mo.set,
    weekdays,
    eitherDay: !dom.star && !dow.star,
  };
}

function dayMatches(c: Cron, d: Date): boolean {
  const byDate = c.days.has(d.getUTCDate());
  const byWeekday = c.weekdays.has(d.getUTCDay());
  return c.eitherDay ? byDate || byWeekday : byDate && byWeekday;
}

/** True when the minute of `ms` (UTC) is one the expression runs at. */
export function cronMatches(c: Cron, ms: number): boolean {
  const d = new Date(ms);
  return c.minutes.has(d.getUTCMinutes()) && c.hours.has(d.getUTCHours()) && c.months.has(d.getUTCMonth() + 1) && dayMatches(c, d);
}

/**
 * The first minute strictly after `ms` that the expression runs at (ms since the epoch, UTC), or
 * null when there is none within eight years (`0 0 31 2 *`: February has no 31st).
 * @example nextRun(parseCron('0 3 * * *'), Date.parse('2026-01-01T04:00:00Z')) // Date.parse('2026-01-02T03:00:00Z')
 */
export function nextRun(c: Cron, ms: number): number | null {
  const d = new Date(Math.floor(ms / 60_000) * 60_000 + 60_000);
  const limit = d.getTime() + 8 * 366 * 86_400_000;
  while (d.getTime() <= limit) {
    if (!c.months.has(d.getUTCMonth() + 1)) {
      d.setUTCMonth(d.getUTCMonth() + 1, 1);
      d.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!dayMatches(c, d)) {
      d.setUTCDate(d.getUTCDate() + 1);
      d.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!c.hours.has(d.getUTCHours())) {
      d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (!c.minutes.has(d.getUTCMinutes())) {
      d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
      continue;
    }
    return d.getTime();
  }
  return null;
}

/**
 * How many runs fell in (`from`, `to`], counting up to `cap` (the missed runs of a schedule
 * whose server was down, reported and not made up).
 * @example runsBetween(parseCron('*\/5 * * * *'), t, t + 3_600_000) // 12
 */
export function runsBetween(c: Cron, from: number, to: number, cap = 1000): number {
  let n = 0;
  for (let t = nextRun(c, from); t !== null && t <= to && n < cap; t = nextRun(c, t)) n++;
  return n;
}
