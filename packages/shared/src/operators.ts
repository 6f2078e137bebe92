/** Filter operators of `/api/v1/db/{table}` (docs/api.md §2): `<op>.<column>=<value>`. */
export const FILTER_OPERATORS = ['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike', 'in', 'is'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/**
 * Full-text search (`fts.<column>=<query>`, `fts(<config>).<column>=<query>`): websearch_to_tsquery
 * syntax. Apart from FILTER_OPERATORS because it takes a configuration and applies to text only.
 */
export const TEXT_SEARCH_OPERATOR = 'fts';

/** Groups of conditions: `or=(…)`, `and=(…)`, `not.or=(…)` (docs/api.md, "Logic"). */
export const LOGIC_OPERATORS = ['or', 'and'] as const;
export type LogicOperator = (typeof LOGIC_OPERATORS)[number];

/** Aggregates of `select=` (`count()`, `sum(col)`…); the other selected columns group. */
export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

/** Query parameters with a fixed meaning; every other parameter must be a filter. */
export const RESERVED_PARAMS = ['select', 'order', 'limit', 'offset', 'columns', 'on_conflict', 'or', 'and'] as const;

/** The parameters an embedded relation takes after its name: `comments.order=`, `comments.limit=`, `comments.offset=`. */
export const EMBEDDED_PARAMS = ['order', 'limit', 'offset'] as const;
