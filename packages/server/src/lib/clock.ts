/**
 * Time: the injected clock (so token decisions are tested with a fake one), and the one wire
 * format of time, RFC 3339 in UTC with milliseconds, `2026-11-24T21:43:45.978Z`. Every
 * timestamp the server sends or binds is written by `iso` where Node has the time and by
 * `isoSql` where PostgreSQL has it (its own text, `2026-11-24 21:43:45.978+00`, and its JSON,
 * `…45.978123+00:00`, are other formats). Rows of the project's own tables are the exception:
 * they go out as PostgreSQL writes them (docs/api.md §1).
 */

/** Injected clock so token decisions can be tested with a fake time. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can move: `clock.advance(15 * 60_000)`. */
export function fakeClock(start = Date.now()): Clock & { advance(ms: number): void; set(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}

/**
 * Epoch milliseconds (or a Date) as wire time; also the text bound as `$n::timestamptz`.
 * @example iso(0) // '1970-01-01T00:00:00.000Z'
 */
export function iso(ms: number | Date): string {
  return new Date(ms).toISOString();
}

/**
 * The SQL expression that writes a `timestamptz` column or expression as wire time (null stays null).
 * @example `select ${isoSql('u.created_at')} as created_at from auth.users u` // '2026-11-24T21:43:45.978Z'
 */
export function isoSql(expr: string): string {
  return `to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
