/** Plan stage: AST + schema snapshot → plan. Every table and column name is resolved here. */
import { ApiError } from '../../http/index.js';
import type { Filter, OrderTerm } from '../request/index.js';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../schema-cache/index.js';
import { createPayload, payloadText, updatePayload } from './body.js';
import type { Plan, PlannedFilter, PlannedOrder, RestRequest } from './types.js';

export { MAX_BULK_ROWS } from './body.js';
export type { DeletePlan, InsertPlan, Plan, PlannedFilter, PlannedOrder, ReadPlan, RestRequest, UpdatePlan } from './types.js';

/** `limit` when the client sends none (docs/api.md §2). */
export const DEFAULT_LIMIT = 100;

export interface PlanOptions {
  maxRows: number;
}

/** Resolves a table of the public schema or throws 404 `table_not_found`. */
export function resolveTable(schema: SchemaSnapshot, name: string): TableInfo {
  const table = schema.tables.get(name);
  if (!table) throw new ApiError('table_not_found', `No table or view "${name}" in the public schema.`, { table: name });
  return table;
}

function resolveColumn(table: TableInfo, name: string): ColumnInfo {
  const col = table.columns.get(name);
  if (!col) throw new ApiError('column_not_found', `The table "${table.name}" has no column "${name}".`, { column: name });
  return col;
}

function planFilter(table: TableInfo, f: Filter): PlannedFilter {
  return { op: f.op, column: resolveColumn(table, f.column), value: f.value } as PlannedFilter;
}

function planOrder(table: TableInfo, o: OrderTerm): PlannedOrder {
  return { column: resolveColumn(table, o.column), desc: o.desc, nulls: o.nulls };
}

function selectList(table: TableInfo, select: string[] | null): ColumnInfo[] {
  if (select === null) return table.columnList;
  const seen = new Set<string>();
  const cols: ColumnInfo[] = [];
  for (const name of select) {
    if (seen.has(name)) continue;
    seen.add(name);
    cols.push(resolveColumn(table, name));
  }
  return cols;
}

function refuse(param: string, action: string): never {
  throw new ApiError('invalid_parameter', `"${param}" does not apply to ${action}.`, { parameter: param });
}

/**
 * Checks a request against the schema and decides what to run. Unknown table: 404
 * `table_not_found`; unknown column anywhere: 400 `column_not_found`.
 * @example planRequest({ action: 'read', table: 'todos', pk: null, query, prefer }, cache.get(), { maxRows: 1000 })
 */
export function planRequest(req: RestRequest, schema: SchemaSnapshot, options: PlanOptions): Plan {
  const table = resolveTable(schema, req.table);
  const q = req.query;
  const filters = q.filters.map((f) => planFilter(table, f));
  if (req.pk !== null) {
    if (table.pk.length !== 1) {
      throw new ApiError(
        'invalid_parameter',
        `The table "${table.name}" has no single-column primary key; filter the collection instead.`,
        {
          table: table.name,
        },
      );
    }
    filters.push({ op: 'eq', column: resolveColumn(table, table.pk[0]), value: req.pk });
  }
  const single = req.pk !== null;
  const returning = req.prefer.minimal && req.action !== 'read' ? null : selectList(table, q.select);
  if (req.action !== 'create' && q.columns !== null) refuse('columns', 'this request; it is for creating rows');
  if (req.action !== 'read' || single) {
    const what = single ? 'a single row' : `a ${req.action}`;
    if (q.order.length > 0) refuse('order', what);
    if (q.limit !== null) refuse('limit', what);
    if (q.offset !== null) refuse('offset', what);
  }

  switch (req.action) {
    case 'read':
      return {
        kind: 'read',
        table,
        single,
        filters,
        returning: returning ?? table.columnList,
        order: q.order.map((o) => planOrder(table, o)),
        limit: q.limit ?? Math.min(DEFAULT_LIMIT, options.maxRows),
        offset: q.offset ?? 0,
        count: req.prefer.count && !single,
      };
    case 'create': {
      if (single) throw new ApiError('invalid_parameter', 'Create rows with POST on the collection, not on /{pk}.');
      if (filters.length > 0) refuse(`${q.filters[0].op}.${q.filters[0].column}`, 'a create');
      const p = createPayload(table, req.body, q.columns);
      return {
        kind: 'insert',
        table,
        single: p.single,
        filters,
        returning,
        target: p.target,
        payload: payloadText(p.rows),
        rows: p.rows.length,
      };
    }
    case 'update': {
      if (filters.length === 0) throw filterRequired('PATCH');
      const target = updatePayload(table, req.body);
      return { kind: 'update', table, single, filters, returning, target, payload: payloadText(req.body) };
    }
    case 'delete':
      if (filters.length === 0) throw filterRequired('DELETE');
      return { kind: 'delete', table, single, filters, returning };
  }
}

function filterRequired(method: string): ApiError {
  return new ApiError(
    'filter_required',
    `${method} on a whole table needs at least one filter, e.g. ?eq.id=42, so a missing filter cannot change every row.`,
  );
}
