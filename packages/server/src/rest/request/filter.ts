/** One filter condition from its parts, for parameters and for the items of `or=(…)` groups. */
import { FILTER_OPERATORS, TEXT_SEARCH_OPERATOR } from '@plinth/shared';
import { ApiError } from '../../http/index.js';
import { splitList } from './list.js';
import { EXTRA_OPERATORS, type Filter, type IsValue, QUANTIFIABLE, type QuantifiableOperator, type TextQueryMode } from './types.js';

const OPERATORS = new Set<string>([...FILTER_OPERATORS, ...EXTRA_OPERATORS, TEXT_SEARCH_OPERATOR]);
const IS_VALUES = new Set<string>(['null', 'true', 'false', 'unknown']);
/**
 * `fts`, `plfts`, `phfts`, `wfts`, each with an optional `(<config>)`: the configuration is a
 * value (bound), any text without parentheses.
 */
const FTS = /^(fts|plfts|phfts|wfts)(?:\(([^()]*)\))?$/;
const FTS_MODES: Record<string, TextQueryMode | undefined> = { fts: undefined, plfts: 'plain', phfts: 'phrase', wfts: 'websearch' };
/** `eq(any)`, `like(all)`…: the operator applied to each value of a `{a,b}` list. */
const QUANTIFIED = new RegExp(`^(${QUANTIFIABLE.join('|')})\\((any|all)\\)$`);
export const ALL_OPERATORS = `${[...FILTER_OPERATORS, ...EXTRA_OPERATORS].join(', ')}, fts, plfts, phfts, wfts, <op>(any|all)`;

/** An operator token: one of FILTER_OPERATORS and EXTRA_OPERATORS, a text search (`fts(<config>)`), or a quantified one (`eq(any)`). */
export const isOperator = (t: string): boolean => OPERATORS.has(t) || FTS.test(t) || QUANTIFIED.test(t);

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
    const config = fts[2] ?? null;
    if (config === '')
      throw invalidParameter(param, `"${param}": ${fts[1]}() names no configuration; write ${fts[1]}(english) or ${fts[1]}.`);
    const mode = FTS_MODES[fts[1]];
    return { op: 'fts', column, value, config, ...(mode ? { mode } : {}), ...not };
  }
  const quantified = QUANTIFIED.exec(op);
  if (quantified) {
    const compare = quantified[1] as QuantifiableOperator;
    const inner = list ?? braces(param, value);
    const values = compare === 'like' || compare === 'ilike' ? inner.map((v) => v.replaceAll('*', '%')) : inner;
    return { op: quantified[2] as 'any' | 'all', compare, column, value: values, ...not };
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

/** `{a,"b,c"}` (or `(a,b)`): the list a quantified operator applies to. */
function braces(param: string, value: string): string[] {
  const open = value[0];
  const close = open === '{' ? '}' : open === '(' ? ')' : null;
  if (close === null || value[value.length - 1] !== close) {
    throw new ApiError('invalid_value', `"${param}": a value of any/all is a list in braces, e.g. {1,2}.`, { parameter: param });
  }
  return splitList(value.slice(1, -1), param);
}
