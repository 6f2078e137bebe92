/**
 * A subscription's `filter`: REST's operators (rest/ parses them, docs/api.md), ANDed, decided
 * for each change on the row as written by the one evaluator realtime and webhooks share
 * (changes/filter.ts): in memory where its verdict is exact (equality and order on numbers,
 * dates, timestamps and uuids, equality on text, booleans and enums, like/ilike, is), and
 * otherwise by PostgreSQL with the policies (authorize.ts: ordering text, json…, a value past
 * the LIKE budget), so no operator is decided differently from a REST read. What is realtime's
 * own here: the refusals at subscribe time (`invalid_parameter`, `invalid_value`,
 * `column_not_found`) and the filter as one SQL condition for PostgreSQL.
 */
import { ApiError } from '../http/index.js';
import { compileEvaluator, FilterProblem, isEvaluated, type Verdict } from '../changes/index.js';
import type { Db } from '../db/index.js';
import { arrayLiteral, type ColumnInfo, type Condition, type Filter, parseQuery, quoteIdent, type TableInfo } from '../rest/index.js';

/** The operators a subscription takes: REST's comparisons, ANDed (docs/realtime.md). */
type RealtimeFilter = Exclude<Filter, { op: 'fts' }>;

export type { Verdict };

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

const COMPARE = { eq: '=', neq: '<>', gt: '>', lt: '<', gte: '>=', lte: '<=', like: 'like', ilike: 'ilike' } as const;

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
 * `and=(…)` groups, `fts` and other operators, which a subscription does not take (the
 * protocol's filters are the evaluator's operators, ANDed: docs/realtime.md).
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
  if (!isEvaluated(c.op)) throw refuse(`${c.op}`);
  return c as RealtimeFilter;
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
  const filters = ast.filters.map(plainFilter);
  for (const f of filters) {
    const col = table.columns.get(f.column);
    if (col && f.op === 'is' && f.value !== 'null' && col.udt !== 'bool') {
      throw new ApiError('invalid_value', `is.${f.column}=${f.value} needs a boolean column.`, { field: 'filter' });
    }
  }
  let evaluator: Awaited<ReturnType<typeof compileEvaluator>>;
  try {
    evaluator = await compileEvaluator(db, table, filters);
  } catch (err) {
    if (!(err instanceof FilterProblem)) throw err;
    if (err.kind === 'column_not_found') throw new ApiError('column_not_found', err.message, { column: err.column });
    if (err.kind === 'pattern') throw new ApiError('invalid_value', err.message, { field: 'filter' });
    throw new ApiError('invalid_value', `A value of the filter "${text.slice(0, 200)}" does not fit its column's type.`, {
      field: 'filter',
    });
  }
  const values: string[] = [];
  const conditions = filters.map((f) => condition(f, table.columns.get(f.column) as ColumnInfo, values));
  return { sql: conditions.join(' and '), values, columns: evaluator.columns, test: evaluator.test };
}
