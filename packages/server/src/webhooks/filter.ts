/**
 * A webhook's `filter`: REST's operators (rest/ parses them; docs/api.md "Filters"), ANDed, with
 * `not.` and `or=(…)` / `and=(…)` groups (SQL's three-valued logic), tested on the row image of
 * each change (the row as written; the old row for a delete) in memory, without a query per
 * change, by the one evaluator realtime and webhooks share (changes/filter.ts: values cast once
 * at compile, compared by type exactly as PostgreSQL compares, `ilike` folded as the database
 * folds). What is the webhooks' own here: a filter is refused at save, with a message naming the
 * problem, unless every condition is decided in memory: operators whose result depends on the
 * collation (ordering text) or on a type's own rules (json, arrays, ranges, citext…), `ilike` on
 * a database that folds case neither as `C` nor as UTF-8, `fts` and JSON paths; so a row matches
 * exactly when a REST read returns it.
 */
import type { Queryable } from '../db/index.js';
import { compileEvaluator, decidedInMemory, familyOf, FilterProblem, leavesOf, memoryOperators } from '../changes/index.js';
import { type Condition, parseQuery, type TableInfo } from '../rest/index.js';

/** A filter that cannot be used: its message names the filter's problem (shown on the `filter` field). */
export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

export interface RowFilter {
  /** Decides on a row image's fields (raw JSON text per column, row.ts); null: no row. */
  test(field: (column: string) => string | undefined): boolean;
  columns: string[];
}

export const EVERY_ROW: RowFilter = { test: () => true, columns: [] };

/** At most this many conditions, groups' included, and this deep: a filter is tested per change. */
const MAX_CONDITIONS = 20;
const MAX_DEPTH = 4;

function checkDepth(conds: Condition[], depth: number): void {
  if (depth > MAX_DEPTH) throw new FilterError(`A webhook filter nests or/and groups at most ${MAX_DEPTH} deep.`);
  for (const c of conds) if ('items' in c) checkDepth(c.items, depth + 1);
}

/**
 * Parses a filter and checks it against the table: columns exist, each operator suits its
 * column's type, each value fits (cast once by PostgreSQL). Throws FilterError with a message for
 * the `filter` field.
 * @example const f = await compileFilter(db, table, 'eq.status=paid&gt.total=100'); f.test((c) => fields.get(c))
 */
export async function compileFilter(db: Queryable, table: TableInfo, text: string | null): Promise<RowFilter> {
  if (text === null || text.trim() === '') return EVERY_ROW;
  let tree: Condition[];
  try {
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
      throw new FilterError('A webhook filter takes filters only (<operator>.<column>=<value>, joined with &, and or=(…)/and=(…) groups).');
    }
    tree = ast.filters;
  } catch (err) {
    if (err instanceof FilterError) throw err;
    throw new FilterError((err as Error).message);
  }
  checkDepth(tree, 0);
  const filters = leavesOf(tree);
  if (filters.length > MAX_CONDITIONS) throw new FilterError(`A webhook filter takes at most ${MAX_CONDITIONS} conditions.`);
  for (const f of filters) {
    if (/->|::/.test(f.column)) throw new FilterError(`${f.column}: JSON paths cannot be used in a webhook filter; filter on a column.`);
    const col = table.columns.get(f.column);
    if (!col) continue; // the evaluator names it
    const family = familyOf(col);
    if (!decidedInMemory(f.op, family, f.op === 'is' ? f.value : undefined)) {
      throw new FilterError(
        `${f.op}.${f.column} cannot be used in a webhook filter: on a ${col.type} column a webhook filter takes ${memoryOperators(family)}` +
          (family === 'text' && f.op !== 'is' ? ' (ordering text depends on the database collation)' : '') +
          '.',
      );
    }
  }
  let evaluator: Awaited<ReturnType<typeof compileEvaluator>>;
  try {
    // No LIKE budget: nobody is asked at fan-out; a like costs the value's length × the pattern's width.
    evaluator = await compileEvaluator(db, table, tree, { likeBudget: Number.POSITIVE_INFINITY });
  } catch (err) {
    if (err instanceof FilterProblem) throw new FilterError(err.message);
    throw err;
  }
  if (!evaluator.inMemory) {
    throw new FilterError(
      'ilike cannot be used in a webhook filter on this database: its case folding (ctype) is neither C nor UTF-8; use like.',
    );
  }
  return {
    columns: evaluator.columns,
    // A field the image lacks is SQL NULL here (a column added since the change was written).
    test: (field) => evaluator.test((c) => field(c) ?? 'null') === true,
  };
}
