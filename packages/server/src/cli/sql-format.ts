/**
 * `plinth sql` output: psql's aligned tables (`(2 rows)` under each result, a command tag for
 * the rest, DDL without a row count), or every result as JSON (`--json`) or CSV (`--csv`); and
 * an error with the line and column it points at, as psql shows it.
 */

/** One result of a script, as the SQL runner answers it (POST /api/v1/sql). */
export interface SqlResult {
  command: string;
  rowCount: number;
  columns: Array<{ name: string }>;
  rows: Array<Record<string, unknown>>;
  truncated?: boolean;
}

/** Commands whose tag carries a row count (psql prints `INSERT 0 3`, `UPDATE 2`…). */
const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY', 'FETCH', 'MOVE']);

/** A value as psql prints it: null empty, booleans t/f, objects and arrays as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const width = (s: string) => [...s].length;
const pad = (s: string, n: number, right: boolean) => (right ? ' '.repeat(n - width(s)) + s : s + ' '.repeat(n - width(s)));
const center = (s: string, n: number) => {
  const left = Math.floor((n - width(s)) / 2);
  return ' '.repeat(left) + s + ' '.repeat(n - width(s) - left);
};

/**
 * A result as psql prints it in its aligned format.
 * @example formatTable({ command: 'SELECT', rowCount: 1, columns: [{ name: 'n' }], rows: [{ n: 1 }] }) // ' n \n---\n 1\n(1 row)\n'
 */
export function formatTable(r: SqlResult): string {
  const names = r.columns.length ? r.columns.map((c) => c.name) : Object.keys(r.rows[0] ?? {});
  const cells = r.rows.map((row) => names.map((n) => cellText(row[n])));
  const numeric = names.map((_, i) => cells.length > 0 && cells.every((c) => c[i] === '' || /^-?\d+(\.\d+)?$/.test(c[i])));
  const widths = names.map((n, i) => Math.max(width(n), ...cells.map((c) => width(c[i].replace(/\n/g, '\\n')))));
  const lines = [
    ` ${names.map((n, i) => center(n, widths[i])).join(' | ')}`.trimEnd(),
    names.map((_, i) => '-'.repeat(widths[i] + 2)).join('+'),
    ...cells.map((c) => ` ${c.map((v, i) => pad(v.replace(/\n/g, '\\n'), widths[i], numeric[i])).join(' | ')}`.trimEnd()),
  ];
  const n = r.rows.length;
  const footer = `(${n} ${n === 1 ? 'row' : 'rows'})${r.truncated ? ` (the first ${n} of ${r.rowCount}: add a limit)` : ''}`;
  return `${lines.join('\n')}\n${footer}\n`;
}

/**
 * Every result of a script, psql-like: a table for what returns rows, else the command tag
 * (with the row count for INSERT, UPDATE, DELETE…; none for DDL), a blank line between results.
 * @example formatResults([{ command: 'CREATE TABLE', rowCount: 0, columns: [], rows: [] }]) // 'CREATE TABLE\n'
 */
export function formatResults(results: SqlResult[]): string {
  return results
    .map((r) => {
      if (r.columns.length || r.rows.length) return formatTable(r);
      if (r.command === 'INSERT') return `INSERT 0 ${r.rowCount}\n`;
      return COUNTED.has(r.command) ? `${r.command} ${r.rowCount}\n` : `${r.command}\n`;
    })
    .join('\n');
}

const csvCell = (v: unknown) => {
  const s = cellText(v);
  return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * The rows of the last result that has columns as CSV (RFC 4180, a header line; booleans t/f
 * as PostgreSQL's COPY writes them).
 * @example formatCsv([{ command: 'SELECT', rowCount: 1, columns: [{ name: 'a' }], rows: [{ a: 'x,y' }] }]) // 'a\r\n"x,y"\r\n'
 */
export function formatCsv(results: SqlResult[]): string {
  const last = [...results].reverse().find((r) => r.columns.length > 0);
  if (!last) return '';
  const names = last.columns.map((c) => c.name);
  return [names.map(csvCell).join(','), ...last.rows.map((row) => names.map((n) => csvCell(row[n])).join(','))]
    .map((l) => `${l}\r\n`)
    .join('');
}

/**
 * An error of PostgreSQL at a character position of the query (1-based, in characters), as
 * psql shows it: the message, then the line with a caret under the position.
 * @example sqlErrorLines('column "nme" does not exist', 'select 1;\nselect nme', 18) // ['line 2, column 8: column "nme" does not exist', 'LINE 2: select nme', '               ^']
 */
export function sqlErrorLines(message: string, query: string, position: number | null | undefined): string[] {
  if (!position || position < 1) return [message];
  const chars = [...query];
  const before = chars.slice(0, position - 1).join('');
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = [...before.slice(lineStart)].length + 1;
  const text = query.split('\n')[line - 1] ?? '';
  const prefix = `LINE ${line}: `;
  return [`line ${line}, column ${column}: ${message}`, `${prefix}${text}`, `${' '.repeat(prefix.length + column - 1)}^`];
}
