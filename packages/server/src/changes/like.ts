/**
 * SQL's LIKE in linear time, for filters decided in memory on every change (realtime
 * subscriptions, webhook filters): no RegExp, so no backtracking. A RegExp built from a pattern
 * such as `%%%%%%%%%%%%!` backtracks about C(n+k, k) times on a value of n characters that does
 * not match, and ran on the event loop (security review round 3, R1 and R2).
 *
 * The pattern is split on `%` into segments (`_` is one character, `\` escapes the next one, as
 * PostgreSQL's default escape). The first segment must match at the start, the last at the end,
 * and each segment between them is found leftmost after the one before: taking the leftmost
 * place never loses a match, since whatever follows may start anywhere after it. So a value of n
 * characters costs at most n·m character comparisons for a pattern of m characters, whatever
 * the number of `%` (likeSteps counts them, for the test that bounds it).
 */

/** Most `%` a filter's pattern may hold (a pattern is refused past it, at subscribe or save). */
export const MAX_LIKE_WILDCARDS = 32;

/**
 * Character comparisons a realtime filter may spend in memory on one field of one change
 * (value length × pattern width); past it the filter is sent to PostgreSQL with the policy.
 */
export const LIKE_MEMORY_BUDGET = 1_000_000;

/**
 * Why a pattern is refused (too many `%`), or null.
 * @example likeWildcardProblem('%'.repeat(40)) // 'a LIKE pattern takes at most 32 % wildcards (it has 40).'
 */
export function likeWildcardProblem(pattern: string): string | null {
  let n = 0;
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '%') n++;
  }
  return n > MAX_LIKE_WILDCARDS ? `a LIKE pattern takes at most ${MAX_LIKE_WILDCARDS} % wildcards (it has ${n}).` : null;
}

/** One character of a segment: a literal code point, or `_` (any one character). */
type Item = string | null;

export interface LikePattern {
  /** The segments between `%`s, each as code points (null: `_`). */
  segments: Item[][];
  /** The pattern's characters other than `%` (the m of the n·m bound). */
  width: number;
  wildcards: number;
}

/**
 * Parses a LIKE pattern (backslash escapes; a trailing lone backslash is a literal one).
 * @example parseLike('a%b_c').segments // [['a'], ['b', null, 'c']]
 */
export function parseLike(pattern: string): LikePattern {
  const chars = Array.from(pattern);
  const segments: Item[][] = [[]];
  let wildcards = 0;
  let width = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    const seg = segments[segments.length - 1];
    if (c === '\\' && i + 1 < chars.length) {
      seg.push(chars[++i]);
      width++;
    } else if (c === '%') {
      wildcards++;
      // `%%` is one `%`: an empty segment between two adds nothing.
      if (seg.length > 0 || segments.length === 1) segments.push([]);
    } else {
      seg.push(c === '_' ? null : c);
      width++;
    }
  }
  return {
    segments,
    width,
    wildcards,
  };
}

/** Counts character comparisons (tests bound the worst case in steps, not milliseconds). */
export interface StepCounter {
  steps: number;
}

/** The segment matches the value at `at` (the caller checked it fits). */
function matchesAt(seg: Item[], value: string[], at: number, counter?: StepCounter): boolean {
  for (let k = 0; k < seg.length; k++) {
    if (counter) counter.steps++;
    const p = seg[k];
    if (p !== null && p !== value[at + k]) return false;
  }
  return true;
}

/** The leftmost place in [from, to] where the segment matches, or -1. */
function find(seg: Item[], value: string[], from: number, to: number, counter?: StepCounter): number {
  for (let at = from; at <= to; at++) if (matchesAt(seg, value, at, counter)) return at;
  return -1;
}

/**
 * Whether `value` matches the parsed pattern, in at most value.length × pattern.width steps.
 * @example likeMatch(parseLike('%urgent%invoice%'), 'an urgent unpaid invoice') // true
 */
export function likeMatch(p: LikePattern, value: string, counter?: StepCounter): boolean {
  return likeMatchChars(p, Array.from(value), counter);
}

/** likeMatch on a value already split into code points (a field matched by many filters is split once). */
export function likeMatchChars(p: LikePattern, v: string[], counter?: StepCounter): boolean {
  const segs = p.segments;
  if (segs.length === 1) {
    // No `%`: the whole value, character for character.
    return v.length === segs[0].length && matchesAt(segs[0], v, 0, counter);
  }
  const first = segs[0];
  const last = segs[segs.length - 1];
  if (first.length + last.length > v.length) return false;
  if (!matchesAt(first, v, 0, counter)) return false;
  const lastAt = v.length - last.length;
  if (!matchesAt(last, v, lastAt, counter)) return false;
  let pos = first.length;
  for (let s = 1; s < segs.length - 1; s++) {
    const seg = segs[s];
    const at = find(seg, v, pos, lastAt - seg.length, counter);
    if (at < 0) return false;
    pos = at + seg.length;
  }
  return pos <= lastAt;
}
