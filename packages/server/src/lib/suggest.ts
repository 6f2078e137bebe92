/**
 * "Did you mean": the closest known name to a mistyped one. A name that differs only in case
 * wins outright (`Todos` → `todos`); otherwise the smallest edit distance (insert, delete,
 * replace, or swap two neighbours), up to a third of the name's length, so a short name is not
 * "corrected" into an unrelated one.
 */

/**
 * Optimal string alignment distance between two strings, or `limit + 1` once it exceeds `limit`.
 * @example editDistance('todso', 'todos') // 1
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The candidate `name` most likely meant, or null when none is close.
 * @example closest('todo', ['todos', 'users']) // 'todos'
 * @example closest('Users', ['users']) // 'users'
 * @example closest('x', ['todos']) // null
 */
export function closest(name: string, candidates: Iterable<string>): string | null {
  const lower = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    if (c === name) continue;
    if (c.toLowerCase() === lower) return c;
    const d = editDistance(lower, c.toLowerCase(), limit);
    if (d < bestDistance || (d === bestDistance && best !== null && c < best)) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : null;
}
