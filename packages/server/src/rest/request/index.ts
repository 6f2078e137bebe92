/** Request stage: query string and headers → AST. Pure, no I/O, throws only ApiError. */
export { parseCoreQuery, parseFilter, parseQuery, parseOrder, splitList, type ParseOptions } from './parse.js';
export { parseGroup } from './logic.js';
export { parseSelect } from './select.js';
export { parsePrefer } from './prefer.js';
export { EXTRA_OPERATORS, QUANTIFIABLE, emptyQueryAst } from './types.js';
export { leaf, isOperator } from './filter.js';
export type {
  Condition,
  CoreFilter,
  EmbeddedParams,
  ExtendedFilter,
  Filter,
  IsValue,
  LogicGroup,
  OrderTerm,
  Preferences,
  QuantifiableOperator,
  QueryAst,
  TextQueryMode,
  ScalarOperator,
  SelectItem,
} from './types.js';
