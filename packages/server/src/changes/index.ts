/**
 * What realtime and database webhooks share, so neither imports the other: the linear LIKE
 * matcher (like.ts) and the one evaluator of a filter on a row image (filter.ts) their filters
 * decide in memory on every change, the one splitter of a
 * change's row image (row.ts), the change log with its numbering, cursors, trim and reads
 * (log.ts), and capture on and off (capture.ts).
 */
export {
  LIKE_MEMORY_BUDGET,
  MAX_LIKE_WILDCARDS,
  likeMatch,
  likeMatchChars,
  likeWildcardProblem,
  parseLike,
  type LikePattern,
  type StepCounter,
} from './like.js';
export {
  compileEvaluator,
  decidedInMemory,
  EVALUATED_OPERATORS,
  type EvaluatedOperator,
  isEvaluated,
  EVERY_ROW,
  type EvaluatorOptions,
  type Family,
  familyOf,
  FilterProblem,
  leavesOf,
  memoryOperators,
  type RowEvaluator,
  type Verdict,
} from './filter.js';
export { type RawRow, rowText, splitFields, splitRow } from './row.js';
export { CaptureError, captureFor, releaseFor } from './capture.js';
export { type Change, type ChangeLog, changesOfTablesSql, type LogOptions, moveCursorSql, openChangeLog } from './log.js';
