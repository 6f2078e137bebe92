/** SQL stage: plan → one statement (`text`) and its bound `values`. PostgreSQL builds the JSON. */
import type { DeletePlan, InsertPlan, OutputItem, Plan, ReadPlan, RpcPlan, UpdatePlan } from '../plan/index.js';
import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';
import { quoteIdent } from './quote.js';
import { Binder, groupBy, groupExpressions, needsAlias, orderBy, outputList, paging, plainColumns, where } from './rows.js';

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

const tableRef = (t: TableInfo) => `${quoteIdent(t.schema ?? 'public')}.${quoteIdent(t.name)}`;
const columnList = (cols: ColumnInfo[]) => (cols.length === 0 ? '*' : cols.map((c) => quoteIdent(c.name)).join(', '));

/** A row alias no output key shadows (`row_to_json(_r)` must name the row, not a column). */
function rowAlias(keys: Iterable<string>): string {
  const taken = new Set(keys);
  let alias = '_r';
  while (taken.has(alias)) alias += '_';
  return alias;
}
const keysOf = (items: OutputItem[]) => items.map((i) => i.key);

/** The outer select that turns rows (`from`) into the one text value the driver returns. */
function aggregate(single: boolean, alias: string, from: string, extra = ''): string {
  // string_agg of row_to_json rather than json_agg: the same JSON without json_agg's
  // newline between elements, and `single` (at most one row) needs no unwrapping.
  const rows = `string_agg(row_to_json(${alias})::text, ',')`;
  const body = single ? rows : `coalesce('[' || ${rows} || ']', '[]')`;
  return `select ${body} as body, count(*) as n, ${extra || 'null::int8'} as total from ${from}`;
}

/**
 * Rows of a table or of a function's result: `from` is the FROM item, `qual` its alias (null
 * when the statement names one table only, so columns stay bare).
 */
function rows(
  p: {
    single: boolean;
    returning: OutputItem[];
    filters: Plan['filters'];
    order: ReadPlan['order'];
    limit: number;
    offset: number;
    count: boolean;
  },
  from: string,
  qual: string | null,
  b: Binder,
): { inner: string; total: string } {
  const list = outputList(p.returning, qual, b);
  const w = where(p.filters, qual, b);
  let inner = `select ${list} from ${from}${w}${groupBy(p.returning)}`;
  if (!p.single) inner += `${orderBy(p.order, qual, b)}${paging(p.limit, p.offset, b)}`;
  let total = '';
  if (p.count) {
    // Same filters, same parameters: the total costs one more scan only when asked for.
    const groups = groupExpressions(p.returning, qual, b);
    total = groups.length
      ? `(select count(*) from (select 1 from ${from}${w} group by ${groups.join(', ')}) _g)`
      : `(select count(*) from ${from}${w})`;
  }
  return { inner, total };
}

/**
 * The rows a read would count (`select 1 from <table> where <filters>`, groups aside): what the
 * planner's estimate of `Prefer: count=planned` is taken from (PostgREST's rule).
 */
export function countRows(p: ReadPlan): SqlStatement {
  const b = new Binder(p.table.schema);
  const qual = needsAlias(null, p.filters) ? b.alias() : null;
  const text = `select 1 from ${tableRef(p.table)}${qual ? ` ${qual}` : ''}${where(p.filters, qual, b)}`;
  return { text, values: b.values };
}

function read(p: ReadPlan): SqlStatement {
  const b = new Binder(p.table.schema);
  const qual = needsAlias(p.returning, p.filters) ? b.alias() : null;
  const { inner, total } = rows(p, `${tableRef(p.table)}${qual ? ` ${qual}` : ''}`, qual, b);
  const alias = rowAlias(keysOf(p.returning));
  return { text: aggregate(p.single, alias, `(${inner}) ${alias}`, total), values: b.values };
}

/** A write, wrapped so PostgreSQL returns its rows as JSON text (or bare for return=minimal). */
function wrap(p: Plan, statement: string, b: Binder): string {
  if (p.returning === null) return statement;
  const plain = plainColumns(p.returning);
  if (plain) {
    const alias = rowAlias(p.table.columns.keys());
    return `with ${alias} as (${statement} returning ${columnList(plain)}) ${aggregate(p.single, alias, alias)}`;
  }
  // Keys other than the columns (aliases, JSON paths, embedded relations): the written rows
  // are read back through the same output list as a read.
  const w = '_w';
  const alias = rowAlias(keysOf(p.returning));
  const list = outputList(p.returning, w, b);
  return `with ${w} as (${statement} returning *) ${aggregate(p.single, alias, `(select ${list} from ${w}) ${alias}`)}`;
}

function insert(p: InsertPlan): SqlStatement {
  const b = new Binder(p.table.schema);
  const t = tableRef(p.table);
  // An empty array creates nothing; `default values` would create one row.
  if (p.rows === 0) return { text: `select '[]'::text as body, 0::int8 as n, null::int8 as total`, values: [] };
  let stmt: string;
  if (p.target.length === 0) {
    stmt = `insert into ${t} default values`;
  } else if (p.perRow) {
    // missing=default: a VALUES row per object, DEFAULT where it lacks the column, each value read
    // from its object with the column's own type (json_populate_record, as below).
    const rows = p.perRow.map((r) => {
      const record = `json_populate_record(null::${t}, ${b.bind(r.json)}::text::json)`;
      const cells = p.target.map((c) => (r.keys.includes(c.name) ? `(${record}).${quoteIdent(c.name)}` : 'DEFAULT'));
      return `(${cells.join(', ')})`;
    });
    stmt = `insert into ${t} (${columnList(p.target)}) values ${rows.join(', ')}`;
  } else {
    const cols = columnList(p.target);
    // Keys map to columns by name and each value is read with the column's own type.
    stmt = `insert into ${t} (${cols}) select ${cols} from json_populate_recordset(null::${t}, ${b.bind(p.payload)}::text::json)`;
  }
  if (p.conflict) stmt += onConflict(p);
  if (p.conflict?.action === 'merge' && p.returning !== null && p.table.ordinary) return { text: upsertWrap(p, stmt, b), values: b.values };
  return { text: wrap(p, stmt, b), values: b.values };
}

/**
 * An upsert that returns rows, as `wrap` does, with `total` the number of rows it inserted
 * rather than updated (`xmax = 0` on a row version this statement created): PostgREST answers
 * 200, not 201, to a merge that inserted nothing. Ordinary tables only: a partitioned or
 * foreign table has no `xmax` to read (its upserts stay 201).
 */
function upsertWrap(p: InsertPlan, statement: string, b: Binder): string {
  const flag = '"_plinth_inserted"';
  const cols = columnList(p.table.columnList);
  const w = '_w';
  const alias = rowAlias(keysOf(p.returning ?? []));
  const list = outputList(p.returning ?? [], w, b);
  return (
    `with _u as (${statement} returning *, (xmax = 0) as ${flag}), ${w} as (select ${cols} from _u) ` +
    aggregate(p.single, alias, `(select ${list} from ${w}) ${alias}`, `(select count(*) from _u where ${flag})`)
  );
}

/**
 * An upsert's clause. Row-level security applies to both paths: the insert's WITH CHECK, and
 * for a merge the UPDATE policies on the existing row, which PostgreSQL refuses with an error
 * (never a silent skip) when the row is not the caller's: 403 `rls_violation`, nothing changed.
 */
function onConflict(p: InsertPlan): string {
  const c = p.conflict;
  if (!c) return '';
  const target = c.columns.length ? ` (${columnList(c.columns)})` : '';
  if (c.action === 'ignore' || p.target.length === 0) return ` on conflict${target} do nothing`;
  return ` on conflict${target} do update set ${p.target.map((col) => `${quoteIdent(col.name)} = excluded.${quoteIdent(col.name)}`).join(', ')}`;
}

function update(p: UpdatePlan): SqlStatement {
  const b = new Binder(p.table.schema);
  const payload = b.bind(p.payload);
  const t = tableRef(p.table);
  const cols = columnList(p.target);
  const source = `(select ${cols} from json_populate_record(null::${t}, ${payload}::text::json))`;
  // A one-column list is not a row, so it takes the plain `col = (sub-select)` form.
  const set = p.target.length === 1 ? `${cols} = ${source}` : `(${cols}) = ${source}`;
  return { text: wrap(p, `update ${t} set ${set}${where(p.filters, null, b)}`, b), values: b.values };
}

function remove(p: DeletePlan): SqlStatement {
  const b = new Binder(p.table.schema);
  return { text: wrap(p, `delete from ${tableRef(p.table)}${where(p.filters, null, b)}`, b), values: b.values };
}

/**
 * A function call with named arguments, each bound and cast to its type (a composite one read
 * from a JSON object). A value or a row is the JSON of the call; a set is read like a table,
 * with the call as its FROM item (counted from a CTE, so the function runs once).
 */
function rpc(p: RpcPlan): SqlStatement {
  const b = new Binder(p.schema);
  const args = p.args.map(({ arg, value }) => {
    const v =
      value === null
        ? `null::${arg.type}`
        : arg.composite
          ? `json_populate_record(null::${arg.type}, ${b.bind(value)}::text::json)`
          : `${b.bind(value)}::text::${arg.type}`;
    // An unnamed argument is the only one (catalog.ts): passed by position.
    if (arg.name === '') return v;
    return `${arg.variadic ? 'variadic ' : ''}${quoteIdent(arg.name)} => ${v}`;
  });
  const call = `${b.ns}.${quoteIdent(p.fn.name)}(${args.join(', ')})`;
  const one = (json: string) => ({
    text: `select coalesce(${json}::text, 'null') as body, 1::int8 as n, null::int8 as total`,
    values: b.values,
  });
  if (p.result === 'value') return one(`to_json(${call})`);
  if (p.result === 'row' && p.returning.length === 0) return one(`row_to_json(${call})`);
  const qual = b.alias();
  const names = p.aliasColumns ? `(${p.table.columnList.map((c) => quoteIdent(c.name)).join(', ')})` : '';
  let from = `${call} as ${qual}${names}`;
  if (p.result === 'row') {
    // One row with select and filters: read as a table of one row; filtered out, the answer is null.
    const { inner } = rows(p, from, qual, b);
    const alias = rowAlias(keysOf(p.returning));
    return {
      text: `select coalesce(string_agg(row_to_json(${alias})::text, ','), 'null') as body, count(*) as n, null::int8 as total from (${inner}) ${alias}`,
      values: b.values,
    };
  }
  let cte = '';
  if (p.count) {
    cte = `with _s as (select * from ${from}) `;
    from = `_s ${qual}`;
  }
  if (p.result === 'values') {
    const column = p.table.columnList[0];
    const scalar = { ...p, returning: [{ kind: 'column' as const, key: column.name, column, path: [] }] };
    const { inner, total } = rows(scalar, from, qual, b);
    const r = rowAlias([column.name]);
    const values = `string_agg(to_json(${r}.${quoteIdent(column.name)})::text, ',')`;
    return {
      text: `${cte}select coalesce('[' || ${values} || ']', '[]') as body, count(*) as n, ${total || 'null::int8'} as total from (${inner}) ${r}`,
      values: b.values,
    };
  }
  const { inner, total } = rows(p, from, qual, b);
  const alias = rowAlias(keysOf(p.returning));
  return { text: cte + aggregate(false, alias, `(${inner}) ${alias}`, total), values: b.values };
}

/**
 * A statement run in a read-only transaction, as PostgREST runs GET: nothing it calls can
 * write (25006, read_only_sql_transaction). `transaction_read_only` is switched on by an
 * uncorrelated sub-select, which PostgreSQL runs once, as the one-time filter of a Result node
 * above the whole statement, before any of it; switching to read-only is allowed at any point
 * of a transaction, and `set_config(…, true)` ends with it (runAs's batch is one transaction).
 * @example readOnly(toSql(plan)) // { text: 'select * from (…) _ro where (select pg_catalog.set_config(…)) = …', values }
 */
export function readOnly(stmt: SqlStatement): SqlStatement {
  return {
    text: `select * from (${stmt.text}) _ro where (select pg_catalog.set_config('transaction_read_only', 'on', true)) is not null`,
    values: stmt.values,
  };
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
    case 'rpc':
      return rpc(plan);
  }
}
