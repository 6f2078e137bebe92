/** Request stage: query string and headers → AST. Pure, no I/O, throws only ApiError. */
export { parseFilter, parseQuery, splitList, type ParseOptions } from './parse.js';
export { parseGroup } from './logic.js';
export { parseSelect } from './select.js';
export { parsePrefer } from './prefer.js';
export type {
  Condition,
  EmbeddedParams,
  Filter,
  IsValue,
  LogicGroup,
  OrderTerm,
  Preferences,
  QueryAst,
  ScalarOperator,
  SelectItem,
} from './types.js';
