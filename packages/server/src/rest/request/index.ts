/** Request stage: query string and headers → AST. Pure, no I/O, throws only ApiError. */
export { parseQuery, splitList, type ParseOptions } from './parse.js';
export { parsePrefer } from './prefer.js';
export type { Filter, IsValue, OrderTerm, Preferences, QueryAst, ScalarOperator } from './types.js';
