/**
 * What the schema cache reads besides columns: foreign keys, unique keys and functions of
 * one schema (`$1`: `public`, or another the project exposes), each as one JSON text (the same on both drivers, whatever they make of arrays).
 */
import type { ColumnInfo, TableInfo } from './index.js';
import type { ForeignKey } from './relations.js';

export const CATALOG_SQL = `
select
  (select coalesce(json_agg(json_build_object(
      'name', c.conname, 'table', cl.relname, 'refTable', rf.relname,
      'columns', (select json_agg(a.attname order by k.i) from unnest(c.conkey) with ordinality k(n, i)
                  join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n),
      'refColumns', (select json_agg(a.attname order by k.i) from unnest(c.confkey) with ordinality k(n, i)
                     join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n))
    order by cl.relname, c.conname), '[]')::text
   from pg_constraint c join pg_class cl on cl.oid = c.conrelid join pg_class rf on rf.oid = c.confrelid
   where c.contype = 'f' and cl.relnamespace = to_regnamespace($1)::oid and rf.relnamespace = to_regnamespace($1)::oid) as fks,
  (select coalesce(json_agg(json_build_object(
      'table', cl.relname,
      'columns', (select json_agg(a.attname order by k.i) from unnest(i.indkey::int2[]) with ordinality k(n, i)
                  join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.n where k.i <= i.indnkeyatts))
    order by cl.relname, i.indisprimary desc, i.indexrelid), '[]')::text
   from pg_index i join pg_class cl on cl.oid = i.indrelid
   where cl.relnamespace = to_regnamespace($1)::oid and i.indisunique and i.indisvalid and i.indpred is null and i.indexprs is null) as uniques,
  (select coalesce(json_agg(json_build_object(
      'oid', p.oid::int8, 'name', p.proname, 'volatility', p.provolatile, 'retset', p.proretset,
      'ndefaults', p.pronargdefaults, 'rows', p.prorows, 'comment', obj_description(p.oid, 'pg_proc'),
      'ret', json_build_object('type', format_type(p.prorettype, null), 'udt', rt.typname, 'typtype', rt.typtype,
                               'category', rt.typcategory),
      'retTable', (select c.relname from pg_class c where c.oid = rt.typrelid and c.relnamespace = to_regnamespace($1)::oid
                   and c.relkind in ('r', 'p', 'v', 'm', 'f')),
      'retColumns', (select json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                       'cast', format_type(a.atttypid, null), 'udt', t.typname, 'category', t.typcategory, 'typtype', t.typtype)
                     order by a.attnum)
                     from pg_attribute a join pg_type t on t.oid = a.atttypid
                     where rt.typrelid <> 0 and a.attrelid = rt.typrelid and a.attnum > 0 and not a.attisdropped),
      'args', (select json_agg(json_build_object('name', coalesce(p.proargnames[a.i], ''), 'mode', coalesce(p.proargmodes[a.i]::text, 'i'),
                 'type', format_type(a.t, null), 'cast', format_type(a.t, null), 'udt', t.typname, 'category', t.typcategory,
                 'typtype', t.typtype,
                 'rel', (select c.relname from pg_class c where c.oid = t.typrelid and c.relnamespace = to_regnamespace($1)::oid
                         and c.relkind in ('r', 'p', 'v', 'm', 'f'))) order by a.i)
               from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality a(t, i) join pg_type t on t.oid = a.t))
    order by p.proname, p.oid), '[]')::text
   from pg_proc p join pg_type rt on rt.oid = p.prorettype
   where p.pronamespace = to_regnamespace($1)::oid and p.prokind = 'f'
     and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')) as functions,
  (select coalesce(json_agg(distinct jsonb_build_object('view', v.relname, 'column', va.attname, 'source', src.relname, 'sourceColumn', sa.attname)), '[]')::text
   from pg_class v
   join pg_rewrite r on r.ev_class = v.oid and r.rulename = '_RETURN'
   cross join lateral regexp_matches(r.ev_action::text,
     ':resno ([0-9]+) :resname ([^ ]+) :ressortgroupref [0-9]+ :resorigtbl ([0-9]+) :resorigcol ([0-9]+)', 'g') m
   join pg_attribute va on va.attrelid = v.oid and va.attnum = m[1]::int and va.attname = m[2] and not va.attisdropped
   join pg_class src on src.oid = m[3]::oid and src.relnamespace = to_regnamespace($1)::oid
   join pg_attribute sa on sa.attrelid = src.oid and sa.attnum = m[4]::int
   where v.relnamespace = to_regnamespace($1)::oid and v.relkind in ('v', 'm')) as view_columns`;

export interface CatalogRow {
  fks: string;
  uniques: string;
  functions: string;
  /** Which column of a table (or view) each column of a view of public shows as it is (the view's rule). */
  view_columns: string;
}

export interface FunctionArg {
  /** '' for an unnamed argument: the one argument of `f(json)`, given the whole body (PostgREST's rule). */
  name: string;
  /** `format_type` of the type, which is also what a value is cast to (`integer`, `text[]`). */
  type: string;
  udt: string;
  category: string;
  /** A composite type's arguments are read from a JSON object (`json_populate_record`). */
  composite: boolean;
  hasDefault: boolean;
  variadic: boolean;
}

/** What a function returns, as the API sends it. */
export type FunctionResult =
  | { kind: 'void' }
  /** One value (`returns int`), or an array of them (`returns setof int`): `column` describes the value. */
  | { kind: 'scalar'; set: boolean; column: ColumnInfo }
  /** A row (`returns posts`, OUT parameters), or rows (`returns setof posts`, `returns table (…)`). */
  | { kind: 'row'; set: boolean; table: TableInfo };

export interface FunctionInfo {
  name: string;
  oid: number;
  /** Input arguments, in order. */
  args: FunctionArg[];
  volatility: 'volatile' | 'stable' | 'immutable';
  returns: FunctionResult;
  /** `name(a integer, b text)`, for errors and documents. */
  signature: string;
  comment: string | null;
}

interface RawType {
  type: string;
  cast?: string;
  udt: string;
  typtype: string;
  category: string;
}
interface RawArg extends RawType {
  name: string;
  mode: string;
  /** The relation of public whose row type this is, if any (a computed field's or relationship's argument). */
  rel?: string | null;
}
interface RawColumn extends RawType {
  name: string;
}
interface RawFunction {
  oid: number;
  name: string;
  volatility: string;
  retset: boolean;
  ndefaults: number;
  rows?: number;
  comment: string | null;
  ret: RawType;
  retTable: string | null;
  retColumns: RawColumn[] | null;
  args: RawArg[] | null;
}

const VOLATILITY = { v: 'volatile', s: 'stable', i: 'immutable' } as const;

function column(name: string, t: RawType): ColumnInfo {
  return {
    name,
    type: t.type,
    castType: (t.cast ?? t.type).replace(/^character(\[\])?$/, 'bpchar$1'),
    udt: t.udt,
    category: t.category,
    notNull: false,
    hasDefault: false,
    isPk: false,
    generated: false,
    enumValues: null,
    comment: null,
  };
}

function resultTable(name: string, columns: ColumnInfo[]): TableInfo {
  return { name, kind: 'view', columns: new Map(columns.map((c) => [c.name, c])), columnList: columns, pk: [], comment: null };
}

/** The types a function's one unnamed argument may have to be callable: it is given the whole body (PostgREST's rule). */
const UNNAMED_TYPES = new Set(['json', 'jsonb', 'text', 'xml', 'bytea']);

/**
 * A function `f(tbl)` of one argument of a table's (or view's) row type returning another
 * relation's rows: `select=…,f(…)` on `tbl` embeds its rows like a relationship (PostgREST's
 * computed relationship): one row (or null) when it returns a row or `setof … rows 1`, an array
 * otherwise.
 */
export interface ComputedRelation {
  kind: 'computed';
  function: string;
  source: string;
  target: string;
  cardinality: 'one' | 'many';
}

export interface FunctionCatalog {
  /** The functions the API can call, by name (overloads in one list). */
  functions: Map<string, FunctionInfo[]>;
  /**
   * Computed fields by table: `f(tbl)` returning one scalar is selectable (and filterable,
   * sortable) on `tbl` as the column `f`, never part of `*`. The ColumnInfo's `computed` says
   * which function.
   */
  computedFields: Map<string, Map<string, ColumnInfo>>;
  /** Computed relationships by source table. */
  computedRelations: Map<string, ComputedRelation[]>;
}

/**
 * The functions of public as the API sees them. Callable: every input argument named, or one
 * unnamed argument of type json, jsonb, text, xml or bytea (PostgREST's rule; it is handed the
 * whole body). Left out: pseudo-typed (`anyelement`, `internal`) arguments, and results of a
 * trigger, a pseudo type or a `record` without OUT parameters — no call could be written.
 * @example readFunctions(row.functions, tables).functions.get('search_posts') // [{ name: 'search_posts', args: [...], … }]
 */
export function readFunctions(json: string, tables: Map<string, TableInfo>): FunctionCatalog {
  const out = new Map<string, FunctionInfo[]>();
  const computedFields = new Map<string, Map<string, ColumnInfo>>();
  const computedRelations = new Map<string, ComputedRelation[]>();
  for (const f of JSON.parse(json) as RawFunction[]) {
    const all = f.args ?? [];
    const inputs = all.filter((a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v');
    const outputs = all.filter((a) => a.mode === 'o' || a.mode === 'b' || a.mode === 't');
    if (inputs.some((a) => a.typtype === 'p')) continue;
    const returns = result(f, outputs, tables);
    if (returns === null) continue;
    const only = inputs.length === 1 ? inputs[0] : null;
    if (only?.rel && tables.has(only.rel) && outputs.length === 0) {
      const source = only.rel;
      if (returns.kind === 'scalar' && !returns.set) {
        const fields = computedFields.get(source) ?? new Map<string, ColumnInfo>();
        fields.set(f.name, { ...returns.column, name: f.name, computed: { function: f.name, table: source } });
        computedFields.set(source, fields);
      } else if (returns.kind === 'row' && f.retTable && tables.get(f.retTable) === returns.table) {
        const one = !returns.set || Number(f.rows) === 1;
        const rels = computedRelations.get(source) ?? [];
        rels.push({ kind: 'computed', function: f.name, source, target: f.retTable, cardinality: one ? 'one' : 'many' });
        computedRelations.set(source, rels);
      }
    }
    const unnamed = inputs.filter((a) => a.name === '');
    if (unnamed.length > 1 || (unnamed.length === 1 && !UNNAMED_TYPES.has(inputs[0].udt))) continue;
    const firstDefault = inputs.length - f.ndefaults;
    const args: FunctionArg[] = inputs.map((a, i) => ({
      name: a.name,
      type: a.type,
      udt: a.udt,
      category: a.category,
      composite: a.typtype === 'c',
      hasDefault: i >= firstDefault,
      variadic: a.mode === 'v',
    }));
    const info: FunctionInfo = {
      name: f.name,
      oid: Number(f.oid),
      args,
      volatility: VOLATILITY[f.volatility as keyof typeof VOLATILITY] ?? 'volatile',
      returns,
      signature: `${f.name}(${args.map((a) => `${a.name ? `${a.name} ` : ''}${a.type}${a.hasDefault ? ' default' : ''}`).join(', ')})`,
      comment: f.comment,
    };
    out.set(f.name, [...(out.get(f.name) ?? []), info]);
  }
  return { functions: out, computedFields, computedRelations };
}

function result(f: RawFunction, outputs: RawArg[], tables: Map<string, TableInfo>): FunctionResult | null {
  const set = f.retset;
  if (outputs.length > 0) {
    // OUT parameters or `returns table (…)`: one OUT parameter returns its type, not a row;
    // `returns table (x int)` sends rows `{"x": …}` all the same.
    if (outputs.length === 1 && outputs[0].mode !== 't' && f.ret.typtype !== 'c') {
      return { kind: 'scalar', set, column: column(f.name, outputs[0]) };
    }
    return {
      kind: 'row',
      set,
      table: resultTable(
        f.name,
        outputs.map((o) => column(o.name, o)),
      ),
    };
  }
  if (f.ret.udt === 'void' && f.ret.typtype === 'p') return set ? null : { kind: 'void' };
  if (f.ret.typtype === 'p') return null; // trigger, record without OUT parameters, any*, internal
  if (f.ret.typtype === 'c') {
    const table = f.retTable ? tables.get(f.retTable) : undefined;
    if (table) return { kind: 'row', set, table };
    return {
      kind: 'row',
      set,
      table: resultTable(
        f.name,
        (f.retColumns ?? []).map((c) => column(c.name, c)),
      ),
    };
  }
  return { kind: 'scalar', set, column: column(f.name, f.ret) };
}

/** Foreign keys, and unique keys (primary key first) by table. */
export function readKeys(row: CatalogRow): { fks: ForeignKey[]; uniqueKeys: Map<string, string[][]> } {
  const fks = JSON.parse(row.fks) as ForeignKey[];
  const uniqueKeys = new Map<string, string[][]>();
  for (const u of JSON.parse(row.uniques) as Array<{ table: string; columns: string[] | null }>) {
    if (!u.columns) continue;
    uniqueKeys.set(u.table, [...(uniqueKeys.get(u.table) ?? []), u.columns]);
  }
  return { fks, uniqueKeys };
}

interface ViewColumn {
  view: string;
  column: string;
  source: string;
  sourceColumn: string;
}

/**
 * The foreign keys views inherit (PostgREST's view relationships): a view that shows all of a
 * key's columns as they are (`select * from t where …`, through views of views too) has the key
 * on those columns, from it or to it. Marked `derived`: named by the tables only, never by column.
 * @example viewForeignKeys(fks, row.view_columns) // [{ name: 'messages_username_fkey', table: 'recent_messages', refTable: 'users', … }]
 */
export function viewForeignKeys(fks: ForeignKey[], json: string): ForeignKey[] {
  const direct = new Map<string, Map<string, [string, string]>>();
  for (const c of JSON.parse(json) as ViewColumn[]) {
    const m = direct.get(c.view) ?? new Map<string, [string, string]>();
    m.set(c.column, [c.source, c.sourceColumn]);
    direct.set(c.view, m);
  }
  /** A view's column down to a table's (through views of views, at most 16 deep). */
  const base = (view: string, column: string): [string, string] | null => {
    let at: [string, string] | undefined = direct.get(view)?.get(column);
    for (let i = 0; at && direct.has(at[0]) && i < 16; i++) at = direct.get(at[0])?.get(at[1]);
    return at && !direct.has(at[0]) ? at : null;
  };
  /** Each relation (the table itself, and every view showing all `columns` of it) with the columns' names there. */
  const showing = (table: string, columns: string[]): Array<[string, string[]]> => {
    const out: Array<[string, string[]]> = [[table, columns]];
    for (const [view, cols] of direct) {
      const names = columns.map((c) => [...cols.keys()].find((vc) => base(view, vc)?.[0] === table && base(view, vc)?.[1] === c));
      if (names.every((n) => n !== undefined)) out.push([view, names as string[]]);
    }
    return out;
  };
  const out: ForeignKey[] = [];
  for (const fk of fks) {
    for (const [table, columns] of showing(fk.table, fk.columns)) {
      for (const [refTable, refColumns] of showing(fk.refTable, fk.refColumns)) {
        if (table === fk.table && refTable === fk.refTable) continue;
        out.push({ name: fk.name, table, columns, refTable, refColumns, derived: true });
      }
    }
  }
  return out;
}
