/** The rows part of a plan, shared by tables and set-returning functions. */
import type { QueryAst } from '../request/index.js';
import type { SchemaSnapshot, TableInfo } from '../schema-cache/index.js';
import { planConditions } from './fields.js';
import { checkEmbeddedUsed, planOutput, type SelectContext } from './select.js';
import type { OutputItem, PlannedCondition } from './types.js';

/** `limit` when the client sends none (docs/api.md §2). */
export const DEFAULT_LIMIT = 100;

/**
 * What a table (or a function's result) returns and which rows: `select`, the filters, the
 * `exists` conditions of `!inner` embeddings, and the embedded relations' own parameters.
 * @example const { returning, filters } = planRows(schema, posts, query, true)
 */
export function planRows(
  schema: SchemaSnapshot,
  table: TableInfo,
  q: QueryAst,
  withOutput: boolean,
): { returning: OutputItem[] | null; filters: PlannedCondition[]; inner: PlannedCondition[] } {
  const ctx: SelectContext = { schema, embedded: q.embedded, used: new Set() };
  const filters = planConditions(table, q.filters);
  let returning: OutputItem[] | null = null;
  let inner: PlannedCondition[] = [];
  if (withOutput || q.select !== null) {
    const planned = planOutput(ctx, table, q.select, []);
    inner = planned.inner;
    returning = withOutput ? planned.output : null;
  }
  checkEmbeddedUsed(ctx);
  return { returning, filters, inner };
}
