import type { AggregateFunction, FilterOperator, LogicOperator } from '@plinth/shared';

/**
 * Operators beyond FILTER_OPERATORS, after PostgREST's: regular expressions (`match`, `imatch`),
 * `isdistinct`, containment and overlap of arrays, ranges and jsonb (`cs`, `cd`, `ov`), and
 * range position (`sl`, `sr`, `nxr`, `nxl`, `adj`). Their SQL is the closed map of sql/rows.ts.
 */
export const EXTRA_OPERATORS = ['match', 'imatch', 'isdistinct', 'cs', 'cd', 'ov', 'sl', 'sr', 'nxr', 'nxl', 'adj'] as const;

/** The comparisons of the core grammar, which realtime and webhooks also evaluate (rest/index.ts's `Filter`). */
export type CoreScalarOperator = Exclude<FilterOperator, 'in' | 'is'>;
/** The operators that compare a column with one value (everything but `in` and `is`). */
export type ScalarOperator = CoreScalarOperator | (typeof EXTRA_OPERATORS)[number];

/** The operators `any`/`all` may quantify: `eq(any).{1,2}` is `= any('{1,2}')`. */
export const QUANTIFIABLE = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch'] as const;
export type QuantifiableOperator = (typeof QUANTIFIABLE)[number];

/**
 * How a full-text query is read: `websearch` (websearch_to_tsquery, our `fts`), `plain`
 * (plainto_tsquery), `phrase` (phraseto_tsquery), `raw` (to_tsquery, PostgREST's `fts`).
 */
export type TextQueryMode = 'websearch' | 'plain' | 'phrase' | 'raw';

/**
 * One condition `<op>.<column>=<value>` (or `<op>.<column>.<value>` inside `or=(…)`), not yet
 * checked against the schema. `column` is the client's text: a column name, or a JSON path
 * into one (`meta->>kind`, `tags->0`) that the plan stage resolves. `negate` is `not.`.
 */
export type Filter = CoreFilter | ExtendedFilter;

/** The filters of the core grammar (FILTER_OPERATORS and `fts`): what parseCoreQuery returns. */
export type CoreFilter = (
  | { op: CoreScalarOperator; column: string; value: string }
  | { op: 'in'; column: string; value: string[] }
  | { op: 'is'; column: string; value: IsValue }
  | { op: 'fts'; column: string; value: string; config: string | null; mode?: undefined }
) & { negate?: boolean };

/** The REST API's other filters (EXTRA_OPERATORS, `plfts`/`phfts`/`wfts`, `any`/`all`), which only the planner reads. */
export type ExtendedFilter = (
  | { op: (typeof EXTRA_OPERATORS)[number]; column: string; value: string }
  | { op: 'fts'; column: string; value: string; config: string | null; mode: TextQueryMode }
  /** `eq(any).{1,2}`: the comparison holds for any (all) of the values. */
  | { op: 'any' | 'all'; compare: QuantifiableOperator; column: string; value: string[] }
) & { negate?: boolean };

export type IsValue = 'null' | 'true' | 'false' | 'unknown';

/** `or=(…)` / `and=(…)` (and `not.or=(…)`): conditions and groups, nested. */
export interface LogicGroup<F = Filter> {
  op: LogicOperator;
  negate: boolean;
  items: Condition<F>[];
}

export type Condition<F = Filter> = F | LogicGroup<F>;

export interface OrderTerm {
  column: string;
  desc: boolean;
  /** `null` keeps PostgreSQL's default (nulls last for asc, first for desc). */
  nulls: 'first' | 'last' | null;
}

/** One entry of `select=`. `alias` is the `alias:` prefix, the output key. */
export type SelectItem =
  | { kind: 'star' }
  /** A column, or a JSON path into one (`meta->>kind`): `column` is the client's text. */
  | { kind: 'column'; alias: string | null; column: string; cast?: string }
  /** `count()`, `sum(amount)`…: the other columns of the same list group. */
  | { kind: 'aggregate'; alias: string | null; fn: AggregateFunction; column: string | null; cast?: string }
  /**
   * `author(name)`, `writer:author!posts_author_id_fkey(name)`, `comments!inner(body)`: a
   * relation by foreign key. `select` null is `*`; an empty list embeds nothing (the relation
   * then only filters, with `!inner`).
   */
  | {
      kind: 'embed';
      alias: string | null;
      relation: string;
      hint: string | null;
      inner: boolean;
      select: SelectItem[] | null;
      /**
       * `...author(name)`: a spread. A to-one relation's keys go into the parent's object; a
       * to-many relation's keys too, each an array of that key's values (PostgREST 13).
       */
      spread?: boolean;
    };

/** What applies to one embedded relation: `comments.eq.approved=true`, `comments.order=…`, `comments.limit=3`. */
export interface EmbeddedParams<F = Filter> {
  filters: Condition<F>[];
  order: OrderTerm[];
  limit: number | null;
  offset: number | null;
}

/** The query string of a REST request as an AST: names are still the client's strings. */
export interface QueryAst<F = Filter> {
  /** Conditions on the rows, ANDed: filters and `or`/`and` groups, in the order given. */
  filters: Condition<F>[];
  /** `select=`: null means every column. */
  select: SelectItem[] | null;
  order: OrderTerm[];
  /** null when the client sent no `limit`; otherwise already clamped to the maximum. */
  limit: number | null;
  offset: number | null;
  /** `columns=` (create only): the payload keys to insert. */
  columns: string[] | null;
  /** `on_conflict=` (upsert only): the unique key a conflict is looked for on. */
  onConflict: string[] | null;
  /**
   * Parameters of embedded relations, by the relation's path of output keys (`comments`,
   * `comments.user`), in the order first given.
   */
  embedded: Map<string, EmbeddedParams<F>>;
  /**
   * Parameters without a dot that are no reserved name, in order (`/rpc/{fn}` GET: the
   * function's arguments). Null when parsed for a table: such a parameter is then refused.
   */
  args: Array<[string, string]> | null;
}

/**
 * A query that asks for nothing yet: every grammar's parser starts from it.
 * @example emptyQueryAst(false) // { filters: [], select: null, …, args: null }
 */
export function emptyQueryAst<F = Filter>(args: boolean): QueryAst<F> {
  return {
    filters: [],
    select: null,
    order: [],
    limit: null,
    offset: null,
    columns: null,
    onConflict: null,
    embedded: new Map(),
    args: args ? [] : null,
  };
}

/** What the `Prefer` header asks for. */
export interface Preferences {
  count: boolean;
  minimal: boolean;
  /** `resolution=merge-duplicates` / `ignore-duplicates`: a create is an upsert. */
  resolution?: 'merge' | 'ignore';
  /** PostgREST's `missing=default`: an object of a create that lacks a target column gives it the column's default, not null. */
  missingDefault?: boolean;
}
