/**
 * The one wire format of time: RFC 3339 in UTC with milliseconds, `2026-11-24T21:43:45.978Z`.
 * Every timestamp the server sends or binds is written by one of these two, `iso` where Node
 * has the time and `isoSql` where PostgreSQL has it (its own text, `2026-11-24
 * 21:43:45.978+00`, and its JSON, `…45.978123+00:00`, are other formats). Rows of the
 * project's own tables are the exception: they go out as PostgreSQL writes them (docs/api.md).
 */

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
