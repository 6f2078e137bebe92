/** SQL text as both drivers need it: a script split into statements, and each one's command tag. */

const SKIP = new Set([
  'or',
  'replace',
  'temp',
  'temporary',
  'unique',
  'unlogged',
  'global',
  'local',
  'trusted',
  'procedural',
  'recursive',
  'if',
  'exists',
  'not',
]);

/**
 * The command tag of a statement as PostgreSQL reports it (`SELECT`, `CREATE TABLE`…),
 * for PGlite, whose results carry none.
 */
export function commandOf(sql: string): string {
  const words = sql
    .replace(/--[^\n]*(\n|$)/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .trim()
    .split(/[\s(;]+/, 8)
    .map((w) => w.toLowerCase());
  const first = words[0] ?? '';
  if (first === 'with' || first === 'values' || first === 'table') return 'SELECT';
  if (first === 'create' || first === 'alter' || first === 'drop') {
    const rest = words.slice(1).filter((w) => !SKIP.has(w));
    const kind = rest[0] === 'materialized' || rest[0] === 'event' || rest[0] === 'foreign' ? `${rest[0]} ${rest[1] ?? ''}` : rest[0];
    return `${first} ${kind ?? ''}`.trim().toUpperCase();
  }
  return first.toUpperCase();
}

/**
 * Splits a SQL script into statements, respecting quotes, dollar quotes and comments.
 * @example splitStatements("select 1; select ';'") // ['select 1', "select ';'"]
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      i++;
      while (i < n && sql[i] !== c) i++;
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === '$') {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (m) {
        const end = sql.indexOf(m[0], i + m[0].length);
        i = end === -1 ? n : end + m[0].length;
      } else i++;
    } else if (c === ';') {
      const stmt = sql.slice(start, i).trim();
      if (stmt && !isOnlyComments(stmt)) out.push(stmt);
      start = ++i;
    } else i++;
  }
  const last = sql.slice(start).trim();
  if (last && !isOnlyComments(last)) out.push(last);
  return out;
}

function isOnlyComments(s: string): boolean {
  return (
    s
      .replace(/--[^\n]*(\n|$)/g, '')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .trim() === ''
  );
}
