/**
 * The SQL runner's history, kept in this browser's localStorage (queries only: never a key or
 * a result). The newest first, 50 at most, a query run again moves to the top.
 */
const KEY = 'plinth.console.sql-history';
const MAX = 50;

export interface HistoryEntry {
  query: string;
  at: number;
}

export function readHistory(): HistoryEntry[] {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? '[]') as unknown;
    return Array.isArray(v)
      ? v.filter((e): e is HistoryEntry => typeof e?.query === 'string' && typeof e?.at === 'number').slice(0, MAX)
      : [];
  } catch {
    return [];
  }
}

export function addToHistory(query: string): HistoryEntry[] {
  const next = [{ query, at: Date.now() }, ...readHistory().filter((e) => e.query !== query)].slice(0, MAX);
  try {
    localStorage.setItem(KEY, JSON.stringify(next));
  } catch {
    // storage full or disabled: the history lives for this page only
  }
  return next;
}
