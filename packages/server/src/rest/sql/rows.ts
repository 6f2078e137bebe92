/**
 * The parts of a statement that read rows: output lists (columns, JSON paths, aggregates,
 * embedded relations as correlated subqueries), conditions and sort terms. Embedded relations
 * are scalar subqueries in the select list — `json_agg` for arrays, `row_to_json` for one row —
 * so a request is one statement whatever it embeds (PostgREST builds the same with lateral
 * joins). With ORDER BY and LIMIT, PostgreSQL evaluates such subqueries after the sort, for the
 * rows of the page only (make_sort_input_target).
 */
import type { ColumnInfo } from '../schema-cache/index.js';
import type { EmbedPlan, JsonStep, OutputItem, PlannedCondition, PlannedFilter, PlannedOrder } from '../plan/index.js';
import { arrayLiteral, quoteIdent } from './quote.js';

/** Values bound so far, and fresh aliases (`_1`, `_2`, …) for tables and subqueries. */
export class Binder {
  readonly values: string[] = [];
  private n = 0;
  /** The quoted schema the statement's tables and functions are in (`"public"`, or an exposed one). */
  readonly ns: string;

  constructor(schema = 'public') {
    this.ns = quoteIdent(schema);
  }

  /** Binds a value; returns its placeholder (`$1[n]`, text). */
  bind(value: string): string {
    this.values.push(value);
    return `$1[${this.values.length}]`;
  }

  alias(): string {
    return `_${++this.n}`;
  }
}

/** Closed map of comparison operators: the only operator text that reaches SQL. */
const COMPARE = {
  eq: '=',
  neq: '<>',
  gt: '>',
  lt: '<',
  gte: '>=',
  lte: '<=',
  like: 'like',
  ilike: 'ilike',
  match: '~',
  imatch: '~*',
  isdistinct: 'is distinct from',
  cs: '@>',
  cd: '<@',
  ov: '&&',
  sl: '<<',
  sr: '>>',
  nxr: '&<',
  nxl: '&>',
  adj: '-|-',
} as const;
/** The operators whose right side is text whatever the column: patterns. */
const PATTERN = new Set(['like', 'ilike', 'match', 'imatch']);
/** How each mode of full-text search reads its query. */
const TSQUERY = { websearch: 'websearch_to_tsquery', plain: 'plainto_tsquery', phrase: 'phraseto_tsquery', raw: 'to_tsquery' } as const;
const IS = { null: 'null', true: 'true', false: 'false', unknown: 'unknown' } as const;
const AGGREGATE = { count: 'count', sum: 'sum', avg: 'avg', min: 'min', max: 'max' } as const;

/**
 * The parent's row as its table's row type, for a computed field's or relationship's function:
 * `row(_1.*)::"public"."tbl"` (the cast picks the overload, and makes a write's CTE record that
 * type; `.*` never reads a column named like the table).
 */
const rowOf = (qual: string, table: string, b: Binder) => `row(${qual}.*)::${b.ns}.${quoteIdent(table)}`;

/** A column, qualified by its table's alias when the statement has several tables; a computed field is its function of the row. */
export const ref = (qual: string | null, column: ColumnInfo, b: Binder) => {
  const c = column.computed;
  if (c) return `${b.ns}.${quoteIdent(c.function)}(${rowOf(qual ?? quoteIdent(c.table), c.table, b)})`;
  return qual ? `${qual}.${quoteIdent(column.name)}` : quoteIdent(column.name);
};

/** A column or a JSON path into it; path keys are bound values, digits an array index. */
export function field(qual: string | null, column: ColumnInfo, path: JsonStep[] | undefined, b: Binder): string {
  const base = ref(qual, column, b);
  if (!path || path.length === 0) return base;
  let e = base;
  for (const step of path) e += `${step.text ? '->>' : '->'}${/^[0-9]+$/.test(step.key) ? `${b.bind(step.key)}::int` : b.bind(step.key)}`;
  return `(${e})`;
}

/**
 * The select list of output items. A plain column keeps its name (`"id"`), anything else gets
 * its key as alias.
 */
export function outputList(items: OutputItem[], qual: string | null, b: Binder): string {
  return items.map((item) => outputItem(item, qual, b)).join(', ');
}

function outputItem(item: OutputItem, qual: string | null, b: Binder): string {
  if (item.kind === 'aggregate') {
    // The cast's type name was checked by the plan stage (plan/select.ts CAST_TYPE).
    const cast = item.cast ? `::${item.cast}` : '';
    return `${AGGREGATE[item.fn]}(${item.column ? ref(qual, item.column, b) : '*'})${cast} as ${quoteIdent(item.key)}`;
  }
  if (item.kind === 'embed') return `${embedValue(item.embed, qual ?? '', b)} as ${quoteIdent(item.key)}`;
  if (item.kind === 'spread') return `${spreadValue(item, qual ?? '', b)} as ${quoteIdent(item.key)}`;
  const f = field(qual, item.column, item.path, b);
  // The cast's type name was checked by the plan stage (plan/select.ts CAST_TYPE): letters, digits, _ and spaces.
  const e = item.cast ? `(${f})::${item.cast}` : f;
  const bare = item.path.length === 0 && !item.cast && item.key === item.column.name && !item.column.computed;
  return bare ? e : `${e} as ${quoteIdent(item.key)}`;
}

/** An aggregate of this level: its own, or one a to-one spread brings up (spreadValue). */
const aggregates = (item: OutputItem) => item.kind === 'aggregate' || (item.kind === 'spread' && item.item.kind === 'aggregate');
/** A key this level groups by when it aggregates: a plain column, or a spread's non-aggregate key. */
const groups = (item: OutputItem) => item.kind === 'column' || (item.kind === 'spread' && item.item.kind !== 'aggregate');

/** `group by 1, 3`: the output's plain columns, when it has aggregates. */
export function groupBy(items: OutputItem[]): string {
  if (!items.some(aggregates)) return '';
  const positions = items.flatMap((item, i) => (groups(item) ? [String(i + 1)] : []));
  return positions.length ? ` group by ${positions.join(', ')}` : '';
}

/** The grouping expressions themselves (for a count of groups, whose select list is not the output). */
export function groupExpressions(items: OutputItem[], qual: string | null, b: Binder): string[] {
  if (!items.some(aggregates)) return [];
  return items.flatMap((item) =>
    !groups(item)
      ? []
      : item.kind === 'column'
        ? [field(qual, item.column, item.path, b)]
        : [spreadValue(item as SpreadItem, qual ?? '', b)],
  );
}

export function where(conditions: PlannedCondition[], qual: string | null, b: Binder): string {
  if (conditions.length === 0) return '';
  return ` where ${conditions.map((c) => condition(c, qual, b)).join(' and ')}`;
}

export function orderBy(order: PlannedOrder[], qual: string | null, b: Binder): string {
  if (order.length === 0) return '';
  const terms = order.map((o) => {
    const e = o.column ? field(qual, o.column, o.path, b) : quoteIdent(o.output ?? '');
    return `${e}${o.desc ? ' desc' : ''}${o.nulls ? ` nulls ${o.nulls}` : ''}`;
  });
  return ` order by ${terms.join(', ')}`;
}

/** ` limit $n offset $m`, each part only when given. */
export function paging(limit: number | null, offset: number | null, b: Binder): string {
  let out = '';
  if (limit !== null) out += ` limit ${b.bind(String(limit))}::text::int8`;
  if (offset !== null) out += ` offset ${b.bind(String(offset))}::text::int8`;
  return out;
}

export function condition(c: PlannedCondition, qual: string | null, b: Binder): string {
  if (c.op === 'exists') {
    const s = embedSource(c.embed, qual ?? '', b);
    return `exists (select 1 from ${s.from}${conditionsOf(s.conditions)})`;
  }
  if ('items' in c) {
    return `${c.negate ? 'not ' : ''}(${c.items.map((i) => condition(i, qual, b)).join(` ${c.op} `)})`;
  }
  const text = filter(c, qual, b);
  return c.negate ? `not (${text})` : text;
}

function filter(f: PlannedFilter, qual: string | null, b: Binder): string {
  const path = f.path ?? [];
  const base = field(qual, f.column, path, b);
  // A path ending in `->` is json or jsonb: compared as jsonb (json has no equality); `->>` is text.
  const json = path.length > 0 && !path[path.length - 1].text;
  const expr = json ? `${base}::jsonb` : base;
  const type = json ? 'jsonb' : path.length > 0 ? 'text' : f.column.castType;
  switch (f.op) {
    case 'is':
      return `${expr} is ${IS[f.value]}`;
    case 'in':
      return `${expr} = any(${b.bind(arrayLiteral(f.value))}::text::${type}[])`;
    case 'like':
    case 'ilike':
    case 'match':
    case 'imatch':
      return `${json ? `${base}::text` : expr} ${COMPARE[f.op]} ${b.bind(f.value)}::text`;
    case 'any':
    case 'all': {
      if (PATTERN.has(f.compare)) {
        return `${json ? `${base}::text` : expr} ${COMPARE[f.compare]} ${f.op}(${b.bind(arrayLiteral(f.value))}::text::text[])`;
      }
      return `${expr} ${COMPARE[f.compare]} ${f.op}(${b.bind(arrayLiteral(f.value))}::text::${type}[])`;
    }
    case 'fts': {
      const config = f.config === null ? null : `${b.bind(f.config)}::text::regconfig`;
      const doc =
        f.column.udt === 'tsvector' && path.length === 0 ? expr : config ? `to_tsvector(${config}, ${base})` : `to_tsvector(${base})`;
      const value = `${b.bind(f.value)}::text`;
      const fn = TSQUERY[f.mode ?? 'websearch'];
      return `${doc} @@ ${config ? `${fn}(${config}, ${value})` : `${fn}(${value})`}`;
    }
    default:
      // The value is cast to the column's type, not the column to text, so indexes apply.
      return `${expr} ${COMPARE[f.op]} ${b.bind(f.value)}::text::${type}`;
  }
}

const conditionsOf = (conditions: string[]) => (conditions.length ? ` where ${conditions.join(' and ')}` : '');

/**
 * The embedded table (and its join table) with the conditions that tie it to the parent row and
 * its own filters; for a computed relationship, the function called with the parent's row.
 */
function embedSource(e: EmbedPlan, parent: string, b: Binder): { from: string; alias: string; conditions: string[] } {
  const a = b.alias();
  const r = e.relation;
  const conditions: string[] = [];
  if (r.kind === 'computed') {
    const from = `${b.ns}.${quoteIdent(r.function)}(${rowOf(parent, r.source, b)}) ${a}`;
    for (const c of e.filters) conditions.push(condition(c, a, b));
    return { from, alias: a, conditions };
  }
  let from = `${b.ns}.${quoteIdent(e.table.name)} ${a}`;
  const via = r.via;
  if (via) {
    const j = b.alias();
    from += ` join ${b.ns}.${quoteIdent(via.table)} ${j} on ${via.on.map(([jc, tc]) => `${j}.${quoteIdent(jc)} = ${a}.${quoteIdent(tc)}`).join(' and ')}`;
    for (const [sc, jc] of r.on) conditions.push(`${j}.${quoteIdent(jc)} = ${parent}.${quoteIdent(sc)}`);
  } else {
    for (const [sc, tc] of r.on) conditions.push(`${a}.${quoteIdent(tc)} = ${parent}.${quoteIdent(sc)}`);
  }
  for (const c of e.filters) conditions.push(condition(c, a, b));
  return { from, alias: a, conditions };
}

/** An embedded relation's JSON: an object (or null) for one row, an array for many. */
function embedValue(e: EmbedPlan, parent: string, b: Binder): string {
  const s = embedSource(e, parent, b);
  const list = outputList(e.output, s.alias, b);
  const rows =
    `select ${list} from ${s.from}${conditionsOf(s.conditions)}${groupBy(e.output)}` +
    `${orderBy(e.order, s.alias, b)}${paging(e.limit, e.offset, b)}`;
  const r = b.alias();
  return e.relation.cardinality === 'one'
    ? `(select row_to_json(${r}.*) from (${rows}) ${r})`
    : `(select coalesce(json_agg(${r}.*), '[]') from (${rows}) ${r})`;
}

/**
 * One key of a spread relation: a scalar subquery of that item over the related row (at most
 * one: a to-one relation), or the array of its values over the related rows, in the relation's
 * order and page (a to-many relation; `[]` when none).
 */
type SpreadItem = Extract<OutputItem, { kind: 'spread' }>;

function spreadValue(item: SpreadItem, parent: string, b: Binder): string {
  const e = item.embed;
  const s = embedSource(e, parent, b);
  const agg = item.item;
  if (agg.kind === 'aggregate') {
    // A to-one spread's aggregate (plan/select.ts): over this level's rows, of the related row's
    // value read per row (`count()`: the rows that have a related row).
    const value = agg.column ? ref(s.alias, agg.column, b) : '1';
    const cast = agg.cast ? `::${agg.cast}` : '';
    return `${AGGREGATE[agg.fn]}((select ${value} from ${s.from}${conditionsOf(s.conditions)} limit 1))${cast}`;
  }
  const inner = outputItem(item.item, s.alias, b);
  if (e.relation.cardinality === 'one') return `(select ${inner} from ${s.from}${conditionsOf(s.conditions)} limit 1)`;
  const rows = `select ${inner} from ${s.from}${conditionsOf(s.conditions)}${orderBy(e.order, s.alias, b)}${paging(e.limit, e.offset, b)}`;
  const r = b.alias();
  return `(select coalesce(json_agg(${r}.${quoteIdent(item.item.key)}), '[]') from (${rows}) ${r})`;
}

/** Whether a level refers to its table from subqueries, so its columns need the table's alias. */
export function needsAlias(output: OutputItem[] | null, conditions: PlannedCondition[]): boolean {
  return (output ?? []).some((o) => o.kind === 'embed' || o.kind === 'spread') || conditions.some(hasExists);
}

function hasExists(c: PlannedCondition): boolean {
  return c.op === 'exists' || ('items' in c && c.items.some(hasExists));
}

/** Output that is plain columns under their own names: what writes returned before `select` grew. */
export function plainColumns(items: OutputItem[]): ColumnInfo[] | null {
  const cols: ColumnInfo[] = [];
  for (const i of items) {
    if (i.kind !== 'column' || i.path.length > 0 || i.key !== i.column.name) return null;
    cols.push(i.column);
  }
  return cols;
}
