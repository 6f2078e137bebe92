/**
 * A subscription's `filter`: REST's operators (rest/ parses them, docs/api.md), ANDed, decided
 * for each change on the row as written. Most are decided in memory on PostgreSQL's JSON text of
 * the value, where that text is exact: equality on integers, booleans, uuids and text, order on
 * integers, `like` on text, `is`. The rest (timestamps, numeric, ilike, json…) go to PostgreSQL
 * with the policies (authorize.ts), so no operator is decided differently from a REST read.
 */
import { ApiError } from '../http/index.js';
import { LIKE_MEMORY_BUDGET, likeMatch, likeWildcardProblem, parseLike } from '../changes/index.js';
import { type Db, dbErrorKind } from '../db/index.js';
import { arrayLiteral, type ColumnInfo, type Condition, type Filter, parseQuery, quoteIdent, type TableInfo } from '../rest/index.js';

/** The operators a subscription takes: REST's comparisons, ANDed (docs/realtime.md). */
type RealtimeFilter = Exclude<Filter, { op: 'fts' }>;

/** true, false, or null when only PostgreSQL can tell. */
export type Verdict = boolean | null;

export interface CompiledFilter {
  /** The filter as one SQL condition over the row; its values are `$2[1]`, `$2[2]`, … */
  sql: string;
  values: string[];
  /** Columns it reads (the subscriber must be allowed to select them). */
  columns: string[];
  /** Decides on a row's field texts (changes/row.ts); null: ask PostgreSQL. */
  test(field: (column: string) => string | undefined): Verdict;
}

export const NO_FILTER: CompiledFilter = { sql: 'true', values: [], columns: [], test: () => true };

/** Types whose JSON text is the same for equal values (canonical), so text equality is equality. */
const EXACT = new Set(['int2', 'int4', 'int8', 'bool', 'uuid', 'text', 'varchar']);
const INTEGER = new Set(['int2', 'int4', 'int8']);
const TEXT = new Set(['text', 'varchar']);
const COMPARE = { eq: '=', neq: '<>', gt: '>', lt: '<', gte: '>=', lte: '<=', like: 'like', ilike: 'ilike' } as const;

type Test = (raw: string | undefined) => Verdict;

const bigint = (text: string) => BigInt(text);

/** The in-memory test of one filter, given the canonical JSON text of its value(s); null: none. */
function memoryTest(f: RealtimeFilter, col: ColumnInfo, canonical: string[]): Test | null {
  const udt = col.udt;
  switch (f.op) {
    case 'is':
      if (f.value === 'null') return (raw) => (raw === undefined ? null : raw === 'null');
      if (udt !== 'bool') return null;
      if (f.value === 'unknown') return (raw) => (raw === undefined ? null : raw === 'null');
      return (raw) => (raw === undefined ? null : raw === f.value);
    case 'eq':
      if (!EXACT.has(udt)) return null;
      return (raw) => (raw === undefined ? null : raw === canonical[0]);
    case 'neq':
      if (!EXACT.has(udt)) return null;
      return (raw) => (raw === undefined ? null : raw !== 'null' && raw !== canonical[0]);
    case 'in': {
      if (!EXACT.has(udt)) return null;
      const set = new Set(canonical);
      return (raw) => (raw === undefined ? null : raw !== 'null' && set.has(raw));
    }
    case 'gt':
    case 'lt':
    case 'gte':
    case 'lte': {
      if (!INTEGER.has(udt)) return null;
      const v = bigint(canonical[0]);
      const op = f.op;
      return (raw) => {
        if (raw === undefined) return null;
        if (raw === 'null') return false;
        const x = bigint(raw);
        return op === 'gt' ? x > v : op === 'lt' ? x < v : op === 'gte' ? x >= v : x <= v;
      };
    }
    case 'like': {
      if (!TEXT.has(udt)) return null;
      const pattern = parseLike(f.value);
      // Past the budget, PostgreSQL decides (with the policy, off the event loop).
      return (raw) =>
        raw === undefined || raw.length * pattern.width > LIKE_MEMORY_BUDGET
          ? null
          : raw !== 'null' && likeMatch(pattern, JSON.parse(raw) as string);
    }
    default:
      return null;
  }
}

/** The SQL condition of one filter, its value pushed onto `values` (REST's operators and casts). */
function condition(f: RealtimeFilter, col: ColumnInfo, values: string[]): string {
  const c = quoteIdent(col.name);
  const ph = () => `$2[${values.length}]`;
  switch (f.op) {
    case 'is':
      return `${c} is ${f.value === 'null' ? 'null' : f.value === 'true' ? 'true' : f.value === 'false' ? 'false' : 'unknown'}`;
    case 'in':
      values.push(arrayLiteral(f.value));
      return `${c} = any(${ph()}::text::${col.castType}[])`;
    case 'like':
    case 'ilike':
      values.push(f.value);
      return `${c} ${COMPARE[f.op]} ${ph()}::text`;
    default:
      values.push(f.value);
      return `${c} ${COMPARE[f.op]} ${ph()}::text::${col.castType}`;
  }
}

/**
 * The condition as a realtime filter, or a refusal: REST's grammar also has `not.`, `or=(…)` /
 * `and=(…)` groups and `fts`, which a subscription does not take (each change is decided in
 * memory where it can, and those would need three-valued logic or PostgreSQL's parser there).
 */
function plainFilter(c: Condition): RealtimeFilter {
  const refuse = (what: string) =>
    new ApiError(
      'invalid_parameter',
      `A realtime filter takes no ${what}: only <operator>.<column>=<value> with eq, neq, gt, lt, gte, lte, like, ilike, in or is, joined with &.`,
      { field: 'filter' },
    );
  if ('items' in c) throw refuse('or=(…) / and=(…) groups');
  if (c.negate) throw refuse('not.');
  if (c.op === 'fts') throw refuse('fts (full-text search)');
  return c;
}

/**
 * Parses and checks a filter against the table; values are cast by PostgreSQL once, here, so a
 * wrong one is refused at subscribe time (`invalid_value`) and never at each change.
 * @example const f = await compileFilter(db, table, 'eq.list_id=7&is.done=false'); f.test((c) => fields.get(c))
 */
export async function compileFilter(db: Db, table: TableInfo, text: string | null): Promise<CompiledFilter> {
  if (text === null) return NO_FILTER;
  const ast = parseQuery(text, { maxRows: 1 });
  if (
    ast.select ||
    ast.order.length ||
    ast.limit !== null ||
    ast.offset !== null ||
    ast.columns ||
    ast.onConflict ||
    ast.embedded.size > 0
  ) {
    throw new ApiError('invalid_parameter', 'A realtime filter takes filters only (<operator>.<column>=<value>, joined with &).', {
      field: 'filter',
    });
  }
  if (ast.filters.length === 0) return NO_FILTER;
  const planned = ast.filters.map((c) => {
    const f = plainFilter(c);
    const col = table.columns.get(f.column);
    if (!col) throw new ApiError('column_not_found', `The table "${table.name}" has no column "${f.column}".`, { column: f.column });
    const wild = f.op === 'like' || f.op === 'ilike' ? likeWildcardProblem(f.value) : null;
    if (wild) throw new ApiError('invalid_value', `${f.op}.${f.column}: ${wild}`, { field: 'filter' });
    if (f.op === 'is' && f.value !== 'null' && col.udt !== 'bool') {
      throw new ApiError('invalid_value', `is.${f.column}=${f.value} needs a boolean column.`, { field: 'filter' });
    }
    return { f, col };
  });
  // Each scalar value cast to its column's type and written back as JSON: the canonical text a
  // row image holds for an equal value. One statement for the whole filter.
  const casts: string[] = [];
  const params: string[] = [];
  const slots = planned.map(({ f, col }) => {
    if (f.op === 'is' || f.op === 'like' || f.op === 'ilike') return [];
    const items = f.op === 'in' ? f.value : [f.value];
    return items.map((v) => {
      params.push(v);
      casts.push(`to_jsonb($${params.length}::text::${col.castType})::text`);
      return casts.length - 1;
    });
  });
  let canonical: string[] = [];
  if (casts.length > 0) {
    try {
      const { rows } = await db.query<{ v: string }>(`select json_build_array(${casts.join(', ')})::text as v`, params);
      canonical = JSON.parse(rows[0]?.v ?? '[]') as string[];
    } catch (err) {
      const kind = dbErrorKind(err);
      if (kind === 'invalid_value' || kind === 'nul_in_text') {
        throw new ApiError('invalid_value', `A value of the filter "${text.slice(0, 200)}" does not fit its column's type.`, {
          field: 'filter',
        });
      }
      throw err;
    }
  }
  const values: string[] = [];
  const conditions: string[] = [];
  const tests: Array<{ column: string; test: Test | null }> = [];
  planned.forEach(({ f, col }, i) => {
    conditions.push(condition(f, col, values));
    tests.push({
      column: col.name,
      test: memoryTest(
        f,
        col,
        slots[i].map((k) => canonical[k]),
      ),
    });
  });
  return {
    sql: conditions.join(' and '),
    values,
    columns: [...new Set(planned.map((p) => p.col.name))],
    test(field) {
      let unknown = false;
      for (const t of tests) {
        if (!t.test) {
          unknown = true;
          continue;
        }
        const v = t.test(field(t.column));
        if (v === false) return false;
        if (v === null) unknown = true;
      }
      return unknown ? null : true;
    },
  };
}
