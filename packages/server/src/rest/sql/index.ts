/** SQL stage: plan → one statement (`text`) and its bound `values`. PostgreSQL builds the JSON. */
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';
import type { DeletePlan, InsertPlan, Plan, PlannedFilter, PlannedOrder, ReadPlan, UpdatePlan } from '../plan/index.js';
import { arrayLiteral, quoteIdent } from './quote.js';

export { arrayLiteral, quoteIdent } from './quote.js';

export interface SqlStatement {
  /**
   * Values are read as `$1[1]`, `$1[2]`, …: elements of one `text[]` parameter, so the statement
   * runs through `plinth.run_as` in one round trip (Db.runAs). Each is cast to its column's
   * type in the text (`$1[1]::text::int4`).
   */
  text: string;
  values: string[];
}

/** The placeholder of the value just pushed. */
const ph = (values: string[]) => `$1[${values.length}]`;

/** Closed map of comparison operators: the only operator text that reaches SQL. */
const COMPARE = { eq: '=', neq: '<>', gt: '>', lt: '<', gte: '>=', lte: '<=', like: 'like', ilike: 'ilike' } as const;
const IS = { null: 'null', true: 'true', false: 'false', unknown: 'unknown' } as const;

const tableRef = (t: TableInfo) => `"public".${quoteIdent(t.name)}`;
const columnList = (cols: ColumnInfo[]) => (cols.length === 0 ? '*' : cols.map((c) => quoteIdent(c.name)).join(', '));

/** A row alias no returned column shadows (`row_to_json(_r)` must name the row, not a column). */
function rowAlias(table: TableInfo): string {
  let alias = '_r';
  while (table.columns.has(alias)) alias += '_';
  return alias;
}

function condition(f: PlannedFilter, values: string[]): string {
  const col = quoteIdent(f.column.name);
  switch (f.op) {
    case 'is':
      return `${col} is ${IS[f.value]}`;
    case 'in':
      values.push(arrayLiteral(f.value));
      return `${col} = any(${ph(values)}::text::${f.column.castType}[])`;
    case 'like':
    case 'ilike':
      values.push(f.value);
      return `${col} ${COMPARE[f.op]} ${ph(values)}::text`;
    default:
      // The value is cast to the column's type, not the column to text, so indexes apply.
      values.push(f.value);
      return `${col} ${COMPARE[f.op]} ${ph(values)}::text::${f.column.castType}`;
  }
}

function where(filters: PlannedFilter[], values: string[]): string {
  if (filters.length === 0) return '';
  let out = ' where ';
  for (let i = 0; i < filters.length; i++) out += (i > 0 ? ' and ' : '') + condition(filters[i], values);
  return out;
}

function orderBy(order: PlannedOrder[]): string {
  if (order.length === 0) return '';
  const terms = order.map((o) => `${quoteIdent(o.column.name)}${o.desc ? ' desc' : ''}${o.nulls ? ` nulls ${o.nulls}` : ''}`);
  return ` order by ${terms.join(', ')}`;
}

/** The outer select that turns rows (`from`) into the one text value the driver returns. */
function aggregate(single: boolean, alias: string, from: string, extra = ''): string {
  // string_agg of row_to_json rather than json_agg: the same JSON without json_agg's
  // newline between elements, and `single` (at most one row) needs no unwrapping.
  const rows = `string_agg(row_to_json(${alias})::text, ',')`;
  const body = single ? rows : `coalesce('[' || ${rows} || ']', '[]')`;
  return `select ${body} as body, count(*) as n, ${extra || 'null::int8'} as total from ${from}`;
}

function read(p: ReadPlan): SqlStatement {
  const values: string[] = [];
  const t = tableRef(p.table);
  const w = where(p.filters, values);
  const alias = rowAlias(p.table);
  let inner = `select ${columnList(p.returning)} from ${t}${w}`;
  if (!p.single) {
    values.push(String(p.limit));
    const limit = ph(values);
    values.push(String(p.offset));
    inner += `${orderBy(p.order)} limit ${limit}::text::int8 offset ${ph(values)}::text::int8`;
  }
  // Same filters, same parameters: the total costs one more scan only when asked for.
  const total = p.count ? `(select count(*) from ${t}${w})` : '';
  return { text: aggregate(p.single, alias, `(${inner}) ${alias}`, total), values };
}

/** A write, wrapped so PostgreSQL returns its rows as JSON text (or bare for return=minimal). */
function wrap(p: Plan, statement: string): string {
  if (p.returning === null) return statement;
  const alias = rowAlias(p.table);
  return `with ${alias} as (${statement} returning ${columnList(p.returning)}) ${aggregate(p.single, alias, alias)}`;
}

function insert(p: InsertPlan): SqlStatement {
  const t = tableRef(p.table);
  // An empty array creates nothing; `default values` would create one row.
  if (p.rows === 0) return { text: `select '[]'::text as body, 0::int8 as n, null::int8 as total`, values: [] };
  if (p.target.length === 0) return { text: wrap(p, `insert into ${t} default values`), values: [] };
  const cols = columnList(p.target);
  // Keys map to columns by name and each value is read with the column's own type.
  const stmt = `insert into ${t} (${cols}) select ${cols} from json_populate_recordset(null::${t}, $1[1]::text::json)`;
  return { text: wrap(p, stmt), values: [p.payload] };
}

function update(p: UpdatePlan): SqlStatement {
  const values = [p.payload];
  const t = tableRef(p.table);
  const cols = columnList(p.target);
  const source = `(select ${cols} from json_populate_record(null::${t}, $1[1]::text::json))`;
  // A one-column list is not a row, so it takes the plain `col = (sub-select)` form.
  const set = p.target.length === 1 ? `${cols} = ${source}` : `(${cols}) = ${source}`;
  return { text: wrap(p, `update ${t} set ${set}${where(p.filters, values)}`), values };
}

function remove(p: DeletePlan): SqlStatement {
  const values: string[] = [];
  return { text: wrap(p, `delete from ${tableRef(p.table)}${where(p.filters, values)}`), values };
}

/**
 * Builds the statement of a plan. Names are quoted by `quoteIdent`, values are bound.
 * @example toSql(plan) // { text: 'select coalesce(… row_to_json(_r) …) … where "owner" = $1::text::uuid …', values: ['…'] }
 */
export function toSql(plan: Plan): SqlStatement {
  switch (plan.kind) {
    case 'read':
      return read(plan);
    case 'insert':
      return insert(plan);
    case 'update':
      return update(plan);
    case 'delete':
      return remove(plan);
  }
}
