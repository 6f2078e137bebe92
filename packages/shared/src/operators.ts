/** Filter operators of `/api/v1/db/{table}` (docs/api.md §2): `<op>.<column>=<value>`. */
export const FILTER_OPERATORS = ['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike', 'in', 'is'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Query parameters with a fixed meaning; every other parameter must be a filter. */
export const RESERVED_PARAMS = ['select', 'order', 'limit', 'offset', 'columns'] as const;
