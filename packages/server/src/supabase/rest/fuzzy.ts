/**
 * PostgREST's "Perhaps you meant …" search (its `Data.FuzzySet`, a port of fuzzyset.js): names
 * are compared by the cosine of their character 3-grams (2-grams when no 3-gram is shared), the
 * 50 best re-scored by Levenshtein distance (1 − distance / longer length); the best at or above
 * `minScore` wins. PostgREST asks 0.75 for a function's name and 0.33 for its parameters. Pure.
 */

const GRAM_SIZES = [3, 2];
const CANDIDATES = 50;

/** Lower case, without what is neither a letter, a digit, a comma nor a space, padded with `-`. */
function grams(value: string, size: number): Map<string, number> {
  let s = `-${value.toLowerCase().replace(/[^a-z0-9\u00C0-\u017F, ]+/g, '')}-`;
  while (s.length < size) s += '-';
  const out = new Map<string, number>();
  for (let i = 0; i + size <= s.length; i++) {
    const g = s.slice(i, i + size);
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

const norm = (v: Map<string, number>) => Math.sqrt([...v.values()].reduce((sum, n) => sum + n * n, 0));

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * The closest of `items` to `value`, or null when none scores `minScore`.
 * @example fuzzyBest(['get_status', 'get_messages'], 'get_statuss', 0.75) // 'get_status'
 */
export function fuzzyBest(items: string[], value: string, minScore: number): string | null {
  const unique = [...new Set(items)];
  for (const size of GRAM_SIZES) {
    const target = grams(value, size);
    const targetNorm = norm(target);
    const scored: Array<[number, string]> = [];
    for (const item of unique) {
      const g = grams(item, size);
      let dot = 0;
      for (const [k, n] of g) dot += n * (target.get(k) ?? 0);
      if (dot > 0) scored.push([dot / (targetNorm * norm(g)), item]);
    }
    if (scored.length === 0) continue;
    scored.sort((x, y) => y[0] - x[0]);
    const v = value.toLowerCase();
    const rescored = scored.slice(0, CANDIDATES).map(([, item]): [number, string] => {
      const i = item.toLowerCase();
      return [1 - levenshtein(v, i) / Math.max(v.length, i.length), item];
    });
    rescored.sort((x, y) => y[0] - x[0]);
    const best = rescored.find(([score]) => score >= minScore);
    if (best) return best[1];
  }
  return null;
}
