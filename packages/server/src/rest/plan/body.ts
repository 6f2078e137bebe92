import { ApiError } from '../../http/index.js';
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';

/** Largest bulk create (docs/api.md §2). */
export const MAX_BULK_ROWS = 1000;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A payload key must be a writable column of the table. */
export function writableColumn(table: TableInfo, name: string): ColumnInfo {
  const col = table.columns.get(name);
  if (!col) {
    throw new ApiError('column_not_found', `The table "${table.name}" has no column "${name}".`, { column: name });
  }
  if (col.generated)
    throw new ApiError(
      'invalid_value',
      `The column "${name}" is generated (a computed or an always-identity column) and cannot be written.`,
      { column: name },
    );
  return col;
}

/**
 * The create payload: an object or an array (≤ 1000) of objects. The target columns are the
 * union of the keys (or `columns=`), so a column no object names keeps its default.
 * @example createPayload(todos, [{ title: 'a' }, { title: 'b', done: true }], null)
 *   // { rows: [...], target: [title, done], single: false }
 */
export function createPayload(
  table: TableInfo,
  body: unknown,
  columns: string[] | null,
): { rows: Record<string, unknown>[]; target: ColumnInfo[]; single: boolean } {
  const single = !Array.isArray(body);
  const rows = single ? [body] : (body as unknown[]);
  if (rows.length > MAX_BULK_ROWS) {
    throw new ApiError('too_many_rows', `A bulk create takes at most ${MAX_BULK_ROWS} objects; this one has ${rows.length}.`, {
      max: MAX_BULK_ROWS,
    });
  }
  const names = new Set<string>();
  for (const row of rows) {
    if (!isPlainObject(row)) {
      throw new ApiError('invalid_request', 'The body must be a JSON object, or an array of JSON objects, of column names to values.');
    }
    if (columns === null) for (const key in row) names.add(key);
  }
  const target = [...(columns ?? names)].map((name) => writableColumn(table, name));
  if (target.length === 0 && rows.length > 1) {
    throw new ApiError('invalid_request', 'Each object of a bulk create must name at least one column.');
  }
  return { rows: rows as Record<string, unknown>[], target, single };
}

/**
 * The JSON text bound as the statement's one parameter. A body can parse and still be too
 * deep to serialise again (thousands of nested arrays): that is the client's 400, not a 500.
 * @example payloadText([{ title: 'a' }]) // '[{"title":"a"}]'
 */
export function payloadText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new ApiError('invalid_value', 'A value of the body is nested too deeply.', undefined, { cause: err });
  }
}

/**
 * The update payload: one object with at least one column.
 * @example updatePayload(todos, { done: true }) // [done]
 */
export function updatePayload(table: TableInfo, body: unknown): ColumnInfo[] {
  if (!isPlainObject(body)) throw new ApiError('invalid_request', 'The body of an update must be a JSON object of column names to values.');
  const target: ColumnInfo[] = [];
  for (const key in body) target.push(writableColumn(table, key));
  if (target.length === 0) throw new ApiError('invalid_request', 'The body of an update must set at least one column.');
  return target;
}
