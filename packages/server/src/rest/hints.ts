/**
 * "Did you mean" for `table_not_found` and `column_not_found`: the closest name (case first,
 * then a small edit distance; lib/suggest.ts) among the tables and columns the caller could
 * use. The secret key may hear of any; the public key and a user only of the relations and
 * columns their role has a privilege on (what their OpenAPI document lists), so a hint never
 * names a table they could not know of. Runs only when a request already failed.
 */
import type { Db } from '../db/index.js';
import { ApiError, type Principal } from '../http/index.js';
import { closest } from '../lib/index.js';
import { relationAccess } from './openapi/access.js';
import type { SchemaSnapshot } from './schema-cache/index.js';

/**
 * The same error with `; did you mean "x"?` on its message and `did_you_mean` in its details,
 * or the error itself when it is no unknown table or column, or nothing is close.
 * @example throw await withHint(err, { db, schema: cache.get(), principal, table: 'todso' });
 */
export async function withHint(
  err: unknown,
  context: { db: Db; schema: SchemaSnapshot; principal: Principal; table: string },
): Promise<unknown> {
  if (!(err instanceof ApiError) || (err.code !== 'table_not_found' && err.code !== 'column_not_found')) return err;
  const details = (err.details ?? {}) as Record<string, unknown>;
  const { schema, principal } = context;
  const visible =
    principal.role === 'service'
      ? null
      : await relationAccess(context.db, principal.role, schema.schema).catch(() => new Map<string, never>());
  let candidates: string[];
  if (err.code === 'table_not_found') {
    const names = [...schema.tables.keys()];
    // Every relation has an entry: the ones with any privilege count.
    candidates = visible
      ? names.filter((n) => {
          const a = visible.get(n);
          return a !== undefined && (a.select.size > 0 || a.insert.size > 0 || a.update.size > 0 || a.delete);
        })
      : names;
  } else {
    const table = schema.tables.get(context.table);
    const columns = table ? [...table.columns.keys()] : [];
    const access = visible?.get(context.table);
    candidates = visible
      ? columns.filter((c) => access && (access.select.has(c) || access.insert.has(c) || access.update.has(c)))
      : columns;
  }
  const name = String(details.table ?? details.column ?? '');
  const meant = name ? closest(name, candidates) : null;
  if (!meant) return err;
  return new ApiError(err.code, `${err.message.replace(/\.$/, '')}; did you mean "${meant}"?`, { ...details, did_you_mean: meant });
}
