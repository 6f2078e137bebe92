/**
 * PostgreSQL columns → JSON Schema of the values the REST API sends and takes. Rows are JSON
 * written by PostgreSQL itself (`row_to_json`), so each schema describes that JSON exactly:
 * `bigint` and `numeric` are JSON numbers with every digit; `NaN` and `±Infinity` (float and
 * numeric columns) are the strings "NaN", "Infinity", "-Infinity"; timestamps with a time zone
 * are RFC 3339 (`date-time`), other dates and times carry no format they would not match, and any
 * date or timestamp may be "infinity" or "-infinity" (docs/api.md, "Numbers, dates and times").
 */
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';

export type JsonSchema = Record<string, unknown>;

const NON_FINITE: JsonSchema = { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] };
const INFINITE_TIME: JsonSchema = { type: 'string', enum: ['infinity', '-infinity'] };

/** A finite value of `base`, or one of `extra`'s strings. */
const orStrings = (base: JsonSchema, extra: JsonSchema): JsonSchema => ({ anyOf: [base, extra] });

/** Base type name (`pg_type.typname`) → JSON Schema of its JSON form as `row_to_json` writes it. */
const BY_UDT: Record<string, JsonSchema> = {
  int2: { type: 'integer', format: 'int32' },
  int4: { type: 'integer', format: 'int32' },
  int8: { type: 'integer', format: 'int64' },
  oid: { type: 'integer', format: 'int64' },
  float4: orStrings({ type: 'number', format: 'float' }, NON_FINITE),
  float8: orStrings({ type: 'number', format: 'double' }, NON_FINITE),
  numeric: orStrings({ type: 'number' }, NON_FINITE),
  // `$1,234.56`: locale text, not a number.
  money: { type: 'string' },
  bool: { type: 'boolean' },
  uuid: { type: 'string', format: 'uuid' },
  // `2026-01-02T03:04:05.123456+00:00`
  timestamptz: orStrings({ type: 'string', format: 'date-time' }, INFINITE_TIME),
  // `2026-01-02T03:04:05`: no offset, so not RFC 3339's date-time.
  timestamp: { type: 'string', description: 'Date and time without a time zone (`2026-01-02T03:04:05`), or infinity/-infinity.' },
  date: orStrings({ type: 'string', format: 'date' }, INFINITE_TIME),
  // `03:04:05` and `03:04:05+02`: neither is RFC 3339's full-time.
  time: { type: 'string', description: 'Time of day (`03:04:05`).' },
  timetz: { type: 'string', description: 'Time of day with an offset (`03:04:05+02`).' },
  // `1 day 02:00:00`: PostgreSQL's interval style, not ISO 8601.
  interval: { type: 'string', description: 'An interval as PostgreSQL writes it (`1 day 02:00:00`).' },
  // Any JSON value: no `type`.
  json: {},
  jsonb: {},
};

function typeOf(udt: string, category: string, enumValues: string[] | null): JsonSchema {
  if (enumValues) return { type: 'string', enum: [...enumValues] };
  const known = BY_UDT[udt];
  if (known) return structuredClone(known);
  // Arrays are `_<element>`; the element's category is not cached, its name is enough here.
  if (category === 'A' && udt.startsWith('_')) return { type: 'array', items: typeOf(udt.slice(1), '', null) };
  if (category === 'C') return { type: 'object' };
  if (category === 'N') return orStrings({ type: 'number' }, NON_FINITE);
  if (category === 'B') return { type: 'boolean' };
  return { type: 'string' };
}

/** `null` added to a schema: to its `type`, or as one more `anyOf` branch. */
function nullable(s: JsonSchema): JsonSchema {
  if (Array.isArray(s.anyOf)) return { ...s, anyOf: [...s.anyOf, { type: 'null' }] };
  if (typeof s.type === 'string') {
    const out: JsonSchema = { ...s, type: [s.type, 'null'] };
    if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
    return out;
  }
  return s; // no type: any JSON value, null included
}

/**
 * The JSON Schema of one column: nullable columns also take `null`, enums `enum`, comments
 * `description`, generated columns `readOnly`.
 * @example columnSchema({ udt: 'int8', notNull: false, ... }) // { type: ['integer', 'null'], format: 'int64' }
 */
export function columnSchema(col: ColumnInfo): JsonSchema {
  let s = typeOf(col.udt, col.category, col.enumValues);
  const length = /^character(?: varying)?\((\d+)\)$/.exec(col.type);
  if (length) s.maxLength = Number(length[1]);
  if (!col.notNull) s = nullable(s);
  if (col.comment) s.description = col.comment;
  if (col.generated) s.readOnly = true;
  return s;
}

/** The three shapes of a table: a row as sent, the body of a create, the body of an update. */
export interface TableSchemas {
  row: JsonSchema;
  insert: JsonSchema;
  update: JsonSchema;
}

/** Which columns a caller may read, insert and update (its privileges); all when absent. */
export interface ColumnAccess {
  select: Set<string>;
  insert: Set<string>;
  update: Set<string>;
}

/**
 * A table's schemas. A returned row has every column it may read (all `required`: present,
 * perhaps null; `select=` narrows it). A create must give the not-null columns without a
 * default; an update gives any. Neither takes generated columns or unknown keys.
 * @example tableSchemas(todos).insert // { type: 'object', properties: {...}, required: ['title'], additionalProperties: false }
 */
export function tableSchemas(table: TableInfo, access?: ColumnAccess): TableSchemas {
  const rowProps: Record<string, JsonSchema> = {};
  const insertProps: Record<string, JsonSchema> = {};
  const updateProps: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const col of table.columnList) {
    const s = columnSchema(col);
    if (!access || access.select.has(col.name)) rowProps[col.name] = s;
    if (col.generated) continue;
    const { readOnly: _, ...writable } = s;
    if (!access || access.insert.has(col.name)) {
      insertProps[col.name] = writable;
      if (col.notNull && !col.hasDefault) required.push(col.name);
    }
    if (!access || access.update.has(col.name)) updateProps[col.name] = writable;
  }
  const about = table.comment ? { description: table.comment } : {};
  return {
    row: { type: 'object', title: table.name, ...about, properties: rowProps, required: Object.keys(rowProps) },
    insert: { type: 'object', title: `${table.name} (create)`, properties: insertProps, required, additionalProperties: false },
    update: { type: 'object', title: `${table.name} (update)`, properties: updateProps, additionalProperties: false },
  };
}
