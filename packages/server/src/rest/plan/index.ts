/** Plan stage: AST + schema snapshot → plan. Every table, column, relation and function name is resolved here. */
import { ApiError } from '../../http/index.js';
import type { QueryAst } from '../request/index.js';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../schema-cache/index.js';
import { createPayload, payloadText, updatePayload } from './body.js';
import { planOrder, resolveColumn } from './fields.js';
import { DEFAULT_LIMIT, planRows } from './rows.js';
import { aggregateKeys } from './select.js';
import type { InsertPlan, Plan, RestRequest } from './types.js';

export { MAX_BULK_ROWS } from './body.js';
export { DEFAULT_LIMIT, planRows } from './rows.js';
export { planRpc } from './rpc.js';
export { planConditions, resolveField } from './fields.js';
export { resolveRelation } from './select.js';
export type {
  DeletePlan,
  EmbedPlan,
  InsertPlan,
  JsonStep,
  OutputItem,
  Plan,
  PlannedCondition,
  PlannedFilter,
  PlannedOrder,
  ReadPlan,
  RestRequest,
  RpcPlan,
  RpcRequest,
  UpdatePlan,
} from './types.js';

export interface PlanOptions {
  maxRows: number;
}

/** Resolves a table of the snapshot's schema (public, or an exposed one) or throws 404 `table_not_found`. */
export function resolveTable(schema: SchemaSnapshot, name: string): TableInfo {
  const table = schema.tables.get(name);
  if (!table) throw new ApiError('table_not_found', `No table or view "${name}" in the ${schema.schema} schema.`, { table: name });
  return table;
}

function refuse(param: string, action: string): never {
  throw new ApiError('invalid_parameter', `"${param}" does not apply to ${action}.`, { parameter: param });
}

/**
 * Checks a request against the schema and decides what to run. Unknown table: 404
 * `table_not_found`; unknown column anywhere: 400 `column_not_found`; unknown or ambiguous
 * relation: 400 `relation_not_found` / `ambiguous_relation`.
 * @example planRequest({ action: 'read', table: 'todos', pk: null, query, prefer }, cache.get(), { maxRows: 1000 })
 */
export function planRequest(req: RestRequest, schema: SchemaSnapshot, options: PlanOptions): Plan {
  const table = resolveTable(schema, req.table);
  const q = req.query;
  const minimal = req.prefer.minimal && req.action !== 'read';
  const { returning, filters, inner } = planRows(schema, table, q, !minimal);
  // `!inner` chooses rows to read; it never chooses the rows a write changes.
  if (req.action === 'read') filters.push(...inner);
  else if (inner.length > 0) refuse('select', `a ${req.action}: !inner filters reads only`);
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
  if (req.action !== 'create' && q.columns !== null) refuse('columns', 'this request; it is for creating rows');
  if (req.action !== 'create' && q.onConflict !== null) refuse('on_conflict', 'this request; it is for upserts (POST)');
  if (req.action !== 'read' || single) {
    const what = single ? 'a single row' : `a ${req.action}`;
    if (q.order.length > 0) refuse('order', what);
    if (q.limit !== null) refuse('limit', what);
    if (q.offset !== null) refuse('offset', what);
  }
  if (req.action !== 'read' && returning?.some((o) => o.kind === 'aggregate')) refuse('select', `a ${req.action} with aggregates`);

  switch (req.action) {
    case 'read': {
      const output = returning ?? [];
      return {
        kind: 'read',
        table,
        single,
        filters,
        returning: output,
        order: planOrder(table, q.order, aggregateKeys(output)),
        limit: q.limit ?? Math.min(DEFAULT_LIMIT, options.maxRows),
        offset: q.offset ?? 0,
        count: req.prefer.count && !single,
      };
    }
    case 'create': {
      if (single) throw new ApiError('invalid_parameter', 'Create rows with POST on the collection, not on /{pk}.');
      if (q.filters.length > 0) refuse(filterName(q), 'a create');
      const p = createPayload(table, req.body, q.columns);
      return {
        kind: 'insert',
        table,
        single: p.single,
        filters: [],
        returning,
        target: p.target,
        payload: payloadText(p.rows),
        rows: p.rows.length,
        ...(req.prefer.missingDefault ? { perRow: p.rows.map((r) => ({ json: payloadText(r), keys: Object.keys(r) })) } : {}),
        conflict: conflict(table, schema, req, q),
      };
    }
    case 'update': {
      if (q.filters.length === 0 && !single) throw filterRequired('PATCH');
      const target = updatePayload(table, req.body);
      return { kind: 'update', table, single, filters, returning, target, payload: payloadText(req.body) };
    }
    case 'delete':
      if (q.filters.length === 0 && !single) throw filterRequired('DELETE');
      return { kind: 'delete', table, single, filters, returning };
  }
}

function filterName(q: QueryAst): string {
  const f = q.filters[0];
  return 'items' in f ? f.op : `${f.op}.${f.column}`;
}

/**
 * The upsert of a create with `Prefer: resolution=…`: on `on_conflict`, else the primary key.
 * The columns must be a unique key (PostgreSQL's rule for ON CONFLICT).
 */
function conflict(table: TableInfo, schema: SchemaSnapshot, req: RestRequest, q: QueryAst): InsertPlan['conflict'] {
  const action = req.prefer.resolution;
  if (!action) {
    if (q.onConflict !== null) {
      throw new ApiError('invalid_parameter', '"on_conflict" needs `Prefer: resolution=merge-duplicates` (or `ignore-duplicates`).', {
        parameter: 'on_conflict',
      });
    }
    return null;
  }
  if (table.kind !== 'table') return null; // a view: PostgreSQL answers (ON CONFLICT needs a table), mapped to 405 like other writes
  const keys = schema.uniqueKeys.get(table.name) ?? [];
  const names = q.onConflict ?? (table.pk.length ? table.pk : null);
  if (names === null) {
    if (action === 'ignore') return { columns: [], action };
    throw new ApiError(
      'invalid_parameter',
      `The table "${table.name}" has no primary key: name the unique key a conflict is found on with on_conflict=<columns>.`,
      { parameter: 'on_conflict', unique_keys: keys },
    );
  }
  const columns: ColumnInfo[] = names.map((n) => resolveColumn(table, n));
  const set = new Set(names);
  if (!keys.some((k) => k.length === set.size && k.every((c) => set.has(c)))) {
    throw new ApiError(
      'invalid_parameter',
      `on_conflict=${names.join(',')} is not a unique key of "${table.name}"; its unique keys: ${keys.map((k) => k.join(',')).join('; ') || 'none'}.`,
      { parameter: 'on_conflict', unique_keys: keys },
    );
  }
  return { columns, action };
}

function filterRequired(method: string): ApiError {
  return new ApiError(
    'filter_required',
    `${method} on a whole table needs at least one filter, e.g. ?eq.id=42, so a missing filter cannot change every row.`,
  );
}
