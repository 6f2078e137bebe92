/** One filter condition from its parts, for parameters and for the items of `or=(…)` groups. */
import { FILTER_OPERATORS, TEXT_SEARCH_OPERATOR } from '@plinth/shared';
import { ApiError } from '../../http/index.js';
import { splitList } from './list.js';
import type { Filter, IsValue } from './types.js';

const OPERATORS = new Set<string>([...FILTER_OPERATORS, TEXT_SEARCH_OPERATOR]);
const IS_VALUES = new Set<string>(['null', 'true', 'false', 'unknown']);
/** `fts` or `fts(<config>)`: the configuration is a value (bound), any text without parentheses. */
const FTS = /^fts(?:\(([^()]*)\))?$/;
export const ALL_OPERATORS = `${FILTER_OPERATORS.join(', ')}, ${TEXT_SEARCH_OPERATOR}`;

/** An operator token: one of FILTER_OPERATORS, `fts` or `fts(<config>)`. */
export const isOperator = (t: string): boolean => OPERATORS.has(t) || FTS.test(t);

export function invalidParameter(parameter: string, message: string): ApiError {
  return new ApiError('invalid_parameter', message, { parameter });
}

/**
 * One condition from its parts: shared by `<op>.<column>=<value>` parameters and the items of
 * `or=(…)` groups. `op` is an operator (checked by the caller), `fts(<config>)` included.
 */
export function leaf(param: string, op: string, column: string, value: string, negate: boolean, list?: string[]): Filter {
  if (column === '') throw invalidParameter(param, `The filter "${param}" names no column.`);
  const not = negate ? { negate: true } : {};
  const fts = FTS.exec(op);
  if (fts) {
    const config = fts[1] ?? null;
    if (config === '') throw invalidParameter(param, `"${param}": fts() names no configuration; write fts(english) or fts.`);
    return { op: 'fts', column, value, config, ...not };
  }
  switch (op) {
    case 'in':
      return { op: 'in', column, value: list ?? splitList(value, param), ...not };
    case 'is': {
      const v = value.toLowerCase();
      if (!IS_VALUES.has(v)) {
        throw new ApiError('invalid_value', `"${param}" must be null, true, false or unknown.`, { parameter: param });
      }
      return { op: 'is', column, value: v as IsValue, ...not };
    }
    case 'like':
    case 'ilike':
      // `*` stands for `%` so patterns need no percent-encoding in a URL.
      return { op, column, value: value.replaceAll('*', '%'), ...not };
    default:
      return { op: op as 'eq', column, value, ...not };
  }
}
