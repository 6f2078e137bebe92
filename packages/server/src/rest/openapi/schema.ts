/** PostgreSQL column → JSON Schema (the shape the SDK's type generator reads). */
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';

export type JsonSchema = Record<string, unknown>;

/** Base type name (`pg_type.typname`) → JSON Schema of its JSON form as `json_agg` writes it. */
const BY_UDT: Record<string, JsonSchema> = {
  int2: { type: 'integer', format: 'int32' },
  int4: { type: 'integer', format: 'int32' },
  int8: { type: 'integer', format: 'int64' },
  oid: { type: 'integer', format: 'int64' },
  float4: { type: 'number', format: 'float' },
  float8: { type: 'number', format: 'double' },
  numeric: { type: 'number' },
  bool: { type: 'boolean' },
  uuid: { type: 'string', format: 'uuid' },
  timestamptz: { type: 'string', format: 'date-time' },
  timestamp: { type: 'string', format: 'date-time' },
  date: { type: 'string', format: 'date' },
  time: { type: 'string', format: 'time' },
  timetz: { type: 'string', format: 'time' },
  interval: { type: 'string', format: 'duration' },
  inet: { type: 'string', format: 'ip' },
  // Any JSON value: no `type`.
  json: {},
  jsonb: {},
};

function typeOf(udt: string, category: string, enumValues: string[] | null): JsonSchema {
  if (enumValues) return { type: 'string', enum: [...enumValues] };
  const known = BY_UDT[udt];
  if (known) return { ...known };
  // Arrays are `_<element>`; the element's category is not cached, its name is enough here.
  if (category === 'A' && udt.startsWith('_')) return { type: 'array', items: typeOf(udt.slice(1), '', null) };
  if (category === 'C') return { type: 'object' };
  if (category === 'N') return { type: 'number' };
  if (category === 'B') return { type: 'boolean' };
  return { type: 'string' };
}

/**
 * The JSON Schema of one column: nullable columns get `[type, 'null']`, enums `enum`,
 * comments `description`, generated columns `readOnly`.
 * @example columnSchema({ udt: 'int8', notNull: false, ... }) // { type: ['integer', 'null'], format: 'int64' }
 */
export function columnSchema(col: ColumnInfo): JsonSchema {
  const s = typeOf(col.udt, col.category, col.enumValues);
  const length = /^character(?: varying)?\((\d+)\)$/.exec(col.type);
  if (length) s.maxLength = Number(length[1]);
  if (!col.notNull && typeof s.type === 'string') {
    s.type = [s.type, 'null'];
    if (Array.isArray(s.enum)) s.enum = [...s.enum, null];
  }
  if (col.comment) s.description = col.comment;
  if (col.generated) s.readOnly = true;
  return s;
}

/**
 * A table or view as a JSON Schema object; `required` lists the not-null columns without a
 * default (what a create must send).
 * @example tableSchema(todos) // { type: 'object', properties: { id: {...} }, required: ['title'] }
 */
export function tableSchema(table: TableInfo): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const col of table.columnList) {
    properties[col.name] = columnSchema(col);
    if (col.notNull && !col.hasDefault && !col.generated) required.push(col.name);
  }
  const s: JsonSchema = { type: 'object', properties, required };
  if (table.comment) s.description = table.comment;
  return s;
}
