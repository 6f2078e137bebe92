/**
 * What realtime and database webhooks share, so neither imports the other: the linear LIKE
 * matcher their filters decide in memory on every change (like.ts), the one splitter of a
 * change's row image (row.ts), the change log with its numbering, cursors, trim and reads
 * (log.ts), and capture on and off (capture.ts).
 */
export {
  LIKE_MEMORY_BUDGET,
  MAX_LIKE_WILDCARDS,
  likeMatch,
  likeWildcardProblem,
  parseLike,
  type LikePattern,
  type StepCounter,
} from './like.js';
export { type RawRow, rowText, splitFields, splitRow } from './row.js';
export { CaptureError, captureFor, releaseFor } from './capture.js';
export { type Change, type ChangeLog, changesOfTablesSql, type LogOptions, moveCursorSql, openChangeLog } from './log.js';
