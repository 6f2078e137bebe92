import type { FilterOperator } from '@plinth/shared';

/** The operators that compare a column with one value (everything but `in` and `is`). */
export type ScalarOperator = Exclude<FilterOperator, 'in' | 'is'>;

/** One `<op>.<column>=<value>` parameter, not yet checked against the schema. */
export type Filter =
  | { op: ScalarOperator; column: string; value: string }
  | { op: 'in'; column: string; value: string[] }
  | { op: 'is'; column: string; value: IsValue };

export type IsValue = 'null' | 'true' | 'false' | 'unknown';

export interface OrderTerm {
  column: string;
  desc: boolean;
  /** `null` keeps PostgreSQL's default (nulls last for asc, first for desc). */
  nulls: 'first' | 'last' | null;
}

/** The query string of a REST request as an AST: names are still the client's strings. */
export interface QueryAst {
  filters: Filter[];
  /** `select=`: null means every column. */
  select: string[] | null;
  order: OrderTerm[];
  /** null when the client sent no `limit`; otherwise already clamped to the maximum. */
  limit: number | null;
  offset: number | null;
  /** `columns=` (create only): the payload keys to insert. */
  columns: string[] | null;
}

/** What the `Prefer` header asks for. */
export interface Preferences {
  count: boolean;
  minimal: boolean;
}
