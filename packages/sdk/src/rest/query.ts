/**
 * Pure functions that turn builder state into the wire format of docs/api.md §2. No I/O, so the
 * exact query strings are unit-tested.
 */

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** How the response body is shaped for the caller. */
export type Expect = 'as-is' | 'one' | 'maybe-one';

export interface RequestState {
  method: Method;
  /** The table (or function) named in messages. */
  table: string;
  /** Where the request goes: `/api/v1/db/{table}` or `/api/v1/rpc/{function}`. */
  path: string;
  select: string | null;
  /** `[param, value]` pairs such as `['eq.id', '1']` or `['comments.eq.approved', 'true']`, in call order. */
  filters: Array<[string, string]>;
  order: string[];
  limit: number | null;
  offset: number | null;
  /** Order terms, limits and offsets of embedded relations (`comments.order`, `comments.limit`), by parameter. */
  embedded: Map<string, string[] | number>;
  /** `on_conflict=` of an upsert. */
  onConflict: string | null;
  /** `Prefer: resolution=…` (an upsert). */
  resolution: 'merge' | 'ignore' | null;
  body?: unknown;
  count: boolean;
  minimal: boolean;
  expect: Expect;
}

/**
 * Fresh state for one request on `table` (or, with `path`, on a function).
 * @example initialState('GET', 'todos') // { method: 'GET', table: 'todos', path: '/api/v1/db/todos', filters: [], ... }
 */
export function initialState(method: Method, table: string, path = `/api/v1/db/${encodeURIComponent(table)}`): RequestState {
  return {
    method,
    table,
    path,
    select: null,
    filters: [],
    order: [],
    limit: null,
    offset: null,
    embedded: new Map(),
    onConflict: null,
    resolution: null,
    count: false,
    minimal: false,
    expect: 'as-is',
  };
}

/**
 * The wire name of a filter on a column, or on a column of an embedded relation:
 * `comments.approved` with `eq` is `comments.eq.approved` (every dot but in a JSON path
 * separates relations; the last part is the column).
 * @example filterName('eq', 'comments.author.name') // 'comments.author.eq.name'
 */
export function filterName(op: string, column: string): string {
  const dot = column.lastIndexOf('.');
  return dot === -1 ? `${op}.${column}` : `${column.slice(0, dot)}.${op}.${column.slice(dot + 1)}`;
}

/**
 * Renders a value for a group of `or()`/`and()`: double-quoted when it holds `.`, `,`, `(`, `)`
 * or a quote.
 * @example groupValue('a,b') // '"a,b"'
 */
export function groupValue(value: unknown): string {
  const s = formatValue(value);
  return /[.,()"\\]/.test(s) || s === '' ? `"${s.replace(/[\\"]/g, '\\$&')}"` : s;
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
 * Normalises a select list: whitespace outside double quotes dropped, `*` or nothing means
 * every column (no parameter).
 * @example formatSelect(' id, author ( name ) ') // 'id,author(name)'
 */
export function formatSelect(columns: string | undefined): string | null {
  const list = (columns ?? '*').replace(/"(?:[^"\\]|\\.)*"|\s+/g, (m) => (m.startsWith('"') ? m : ''));
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
  for (const [name, value] of state.embedded)
    parts.push(`${encode(name)}=${encode(Array.isArray(value) ? value.join(',') : String(value))}`);
  if (state.onConflict !== null) parts.push(`on_conflict=${encode(state.onConflict)}`);
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
  if (state.resolution) prefs.push(`resolution=${state.resolution}-duplicates`);
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
