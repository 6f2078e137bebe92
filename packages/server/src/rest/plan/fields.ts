/** Columns, JSON paths, conditions and sort terms resolved against one table of the schema cache. */
import { ApiError } from '../../http/index.js';
import type { Condition, OrderTerm } from '../request/index.js';
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';
import type { JsonStep, PlannedCondition, PlannedFilter, PlannedOrder } from './types.js';

const JSON_TYPES = new Set(['json', 'jsonb']);
/** Text a full-text search can read: string types, json (to_tsvector has json forms) and tsvector. */
const SEARCHABLE = new Set(['tsvector', 'json', 'jsonb']);

export function resolveColumn(table: TableInfo, name: string): ColumnInfo {
  const col = table.columns.get(name);
  if (!col) throw new ApiError('column_not_found', `The table "${table.name}" has no column "${name}".`, { column: name });
  return col;
}

/**
 * A column, or a JSON path into a json/jsonb column: `meta->kind` (json), `meta->>kind` (text),
 * `tags->0` (array index). A column whose own name contains `->` is found first.
 * @example resolveField(todos, 'meta->>kind') // { column: meta, path: [{ key: 'kind', text: true }] }
 */
export function resolveField(table: TableInfo, text: string): { column: ColumnInfo; path: JsonStep[] } {
  // A computed field (`f(tbl)`, catalog.ts) reads like a column; reads only (never a write's target).
  const exact = table.columns.get(text) ?? table.computed?.get(text);
  if (exact) return { column: exact, path: [] };
  const parts = text.split(/(->>?)/);
  if (parts.length === 1) return { column: resolveColumn(table, text), path: [] };
  const column = table.computed?.get(parts[0]) ?? resolveColumn(table, parts[0]);
  if (!JSON_TYPES.has(column.udt)) {
    throw new ApiError(
      'invalid_parameter',
      `"${text}": the column "${column.name}" is ${column.type}; -> and ->> apply to json and jsonb columns.`,
      { column: column.name },
    );
  }
  const path: JsonStep[] = [];
  for (let i = 1; i < parts.length; i += 2) {
    const key = parts[i + 1];
    const text_ = parts[i] === '->>';
    if (key === '' || (text_ && i + 2 < parts.length)) {
      throw new ApiError('invalid_parameter', `"${text}" is not a JSON path: write col->key, col->>key or col->0, with ->> last.`, {
        column: column.name,
      });
    }
    path.push({ key, text: text_ });
  }
  return { column, path };
}

/** The output key of a column or JSON path: the column's name, or the last key of the path. */
export const fieldKey = (f: { column: ColumnInfo; path: JsonStep[] }) => (f.path.length ? f.path[f.path.length - 1].key : f.column.name);

/**
 * Resolves conditions (filters and `or`/`and` groups) against a table.
 * @example planConditions(todos, [{ op: 'eq', column: 'done', value: 'true' }])
 */
export function planConditions(table: TableInfo, conditions: Condition[]): PlannedCondition[] {
  return conditions.map((c) => planCondition(table, c));
}

function planCondition(table: TableInfo, c: Condition): PlannedCondition {
  if ('items' in c) return { op: c.op, negate: c.negate, items: c.items.map((i) => planCondition(table, i)) };
  const { column, path } = resolveField(table, c.column);
  const planned = { ...c, column, ...(path.length ? { path } : {}) } as PlannedFilter;
  if (c.op === 'fts') {
    const asText = path.length > 0 && path[path.length - 1].text;
    if (!asText && column.category !== 'S' && !SEARCHABLE.has(column.udt)) {
      throw new ApiError(
        'invalid_value',
        `fts applies to text and tsvector columns; "${c.column}" is ${path.length ? 'json' : column.type}.`,
        { column: column.name },
      );
    }
  }
  return planned;
}

/**
 * Resolves sort terms; with aggregates in `select`, a term may also name an aggregate's key.
 * @example planOrder(todos, [{ column: 'created_at', desc: true, nulls: null }], new Set())
 */
export function planOrder(table: TableInfo, terms: OrderTerm[], aggregates: Set<string>): PlannedOrder[] {
  return terms.map((o) => {
    if (aggregates.has(o.column) && !table.columns.has(o.column)) return { column: null, output: o.column, desc: o.desc, nulls: o.nulls };
    const { column, path } = resolveField(table, o.column);
    return { column, ...(path.length ? { path } : {}), desc: o.desc, nulls: o.nulls };
  });
}
