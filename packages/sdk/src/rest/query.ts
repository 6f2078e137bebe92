/**
 * Pure functions that turn builder state into the wire format of docs/api.md §2. No I/O, so the
 * exact query strings are unit-tested.
 */

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** How the response body is shaped for the caller. */
export type Expect = 'as-is' | 'one' | 'maybe-one';

export interface RequestState {
  method: Method;
  table: string;
  select: string | null;
  /** `[param, value]` pairs such as `['eq.id', '1']`, in call order. */
  filters: Array<[string, string]>;
  order: string[];
  limit: number | null;
  offset: number | null;
  body?: unknown;
  count: boolean;
  minimal: boolean;
  expect: Expect;
}

/**
 * Fresh state for one request on `table`.
 * @example initialState('GET', 'todos') // { method: 'GET', table: 'todos', filters: [], ... }
 */
export function initialState(method: Method, table: string): RequestState {
  return { method, table, select: null, filters: [], order: [], limit: null, offset: null, count: false, minimal: false, expect: 'as-is' };
}

/**
 * Renders a filter value. Dates become ISO strings and objects JSON (for json columns).
 * @example formatValue(new Date(0)) // '1970-01-01T00:00:00.000Z'
 */
export function formatValue(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (value === null) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Renders the value list of `in`: items are comma-separated; an item that is empty, holds a
 * comma or starts with a quote is double-quoted with `\` escapes (the server's list syntax).
 * @example formatList(['a', 'b,c', 3]) // 'a,"b,c",3'
 */
export function formatList(values: readonly unknown[]): string {
  return values
    .map((value) => {
      const s = formatValue(value);
      return s === '' || s.includes(',') || s.startsWith('"') ? `"${s.replace(/[\\"]/g, '\\$&')}"` : s;
    })
    .join(',');
}

/**
 * One term of `order=`.
 * @example formatOrder('created_at', { ascending: false, nullsFirst: false }) // 'created_at.desc.nullslast'
 */
export function formatOrder(column: string, options: { ascending?: boolean; nullsFirst?: boolean } = {}): string {
  const direction = options.ascending === false ? 'desc' : 'asc';
  const nulls = options.nullsFirst === undefined ? '' : options.nullsFirst ? '.nullsfirst' : '.nullslast';
  return `${column}.${direction}${nulls}`;
}

/**
 * Normalises a select list: whitespace dropped, `*` or nothing means every column (no parameter).
 * @example formatSelect(' id, title ') // 'id,title'
 */
export function formatSelect(columns: string | undefined): string | null {
  const list = (columns ?? '*').replace(/\s+/g, '');
  return list === '' || list === '*' ? null : list;
}

/** Percent-encodes a query component but keeps commas readable; the server decodes either way. */
function encode(s: string): string {
  return encodeURIComponent(s).replace(/%2C/gi, ',');
}

/**
 * The query string (without `?`) for a request: select, filters, order, limit, offset.
 * @example buildQuery({ ...initialState('GET', 'todos'), select: 'id,title', filters: [['eq.done', 'false']], limit: 10 })
 *   // 'select=id,title&eq.done=false&limit=10'
 */
export function buildQuery(state: RequestState): string {
  const parts: string[] = [];
  if (state.select !== null) parts.push(`select=${encode(state.select)}`);
  for (const [name, value] of state.filters) parts.push(`${encode(name)}=${encode(value)}`);
  if (state.order.length > 0) parts.push(`order=${encode(state.order.join(','))}`);
  if (state.limit !== null) parts.push(`limit=${state.limit}`);
  if (state.offset !== null) parts.push(`offset=${state.offset}`);
  return parts.join('&');
}

/**
 * The `Prefer` header for a request, or null.
 * @example preferHeader({ ...initialState('POST', 't'), count: true, minimal: true }) // 'count=exact, return=minimal'
 */
export function preferHeader(state: RequestState): string | null {
  const prefs: string[] = [];
  if (state.count) prefs.push('count=exact');
  if (state.minimal) prefs.push('return=minimal');
  return prefs.length > 0 ? prefs.join(', ') : null;
}

/**
 * The total of `Content-Range: 0-9/42`; null when absent or not counted (`*`).
 * @example parseCount('0-9/42') // 42
 */
export function parseCount(contentRange: string | null): number | null {
  const match = contentRange ? /\/(\d+)\s*$/.exec(contentRange) : null;
  return match ? Number(match[1]) : null;
}
