/**
 * What realtime and database webhooks share, so neither imports the other: for now the linear
 * LIKE matcher their filters decide in memory on every change (like.ts). Depends on lib only.
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
