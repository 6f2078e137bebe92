/**
 * `select=`: columns, JSON paths, aggregates and embedded relations, as a tree.
 *   select=id,title,writer:author!posts_author_id_fkey(name),comments!inner(body,user(name)),count()
 * Pure; throws only ApiError.
 */
import { AGGREGATE_FUNCTIONS, type AggregateFunction } from '@plinth/shared';
import { invalidParameter } from './filter.js';
import { quoted } from './list.js';
import type { SelectItem } from './types.js';

const AGGREGATES = new Set<string>(AGGREGATE_FUNCTIONS);
/** Embeddings nest at most this deep. */
export const MAX_EMBED_DEPTH = 16;

/**
 * Parses the value of `select=`. `*` alone (or nothing) is null: every column.
 * @example parseSelect('id,author(name)') // [{ kind: 'column', alias: null, column: 'id' }, { kind: 'embed', relation: 'author', … }]
 */
export function parseSelect(value: string): SelectItem[] | null {
  if (value === '') return null;
  if (value.trim() === '') fail('"select" has an empty column name.');
  const items = list(value, 1);
  if (items.length === 0 || (items.length === 1 && items[0].kind === 'star')) return null;
  return items;
}

function fail(message: string): never {
  throw invalidParameter('select', message);
}

/** Splits on commas outside quotes and parentheses, and parses each part. */
function list(s: string, depth: number): SelectItem[] {
  if (depth > MAX_EMBED_DEPTH) fail(`"select" nests embedded relations deeper than ${MAX_EMBED_DEPTH} levels.`);
  if (s.trim() === '') return [];
  const out: SelectItem[] = [];
  let level = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') {
      i = quoted(s, i, 'select')[1] - 1;
    } else if (c === '(') {
      level++;
    } else if (c === ')') {
      if (--level < 0) fail(`"select" has an unmatched ")" in "${s}".`);
    } else if (c === ',' && level === 0) {
      out.push(item(s.slice(start, i), depth));
      start = i + 1;
    }
  }
  if (level !== 0) fail(`"select" has an unclosed "(" in "${s}".`);
  out.push(item(s.slice(start), depth));
  return out;
}

/** The index of the first `c` outside quotes and parentheses, or -1. */
function indexOutside(s: string, c: string): number {
  let level = 0;
  for (let i = 0; i < s.length; i++) {
    const x = s[i];
    if (x === c && level === 0) return i;
    if (x === '"') i = quoted(s, i, 'select')[1] - 1;
    else if (x === '(') level++;
    else if (x === ')') level--;
  }
  return -1;
}

/** The `:` of `alias:column` (the first outside quotes and parentheses that is not part of a `::` cast), or -1. */
function aliasColon(s: string): number {
  let level = 0;
  for (let i = 0; i < s.length; i++) {
    const x = s[i];
    if (x === '"') i = quoted(s, i, 'select')[1] - 1;
    else if (x === '(') level++;
    else if (x === ')') level--;
    else if (x === ':' && level === 0) {
      if (s[i + 1] === ':') return -1;
      return i;
    }
  }
  return -1;
}

/** A name as written: `"a,b"` unquoted, anything else trimmed. */
function name(raw: string): string {
  const t = raw.trim();
  if (t.startsWith('"')) {
    const [unquoted, end] = quoted(t, 0, 'select');
    if (end !== t.length) fail(`"select" has text after the quoted name ${t}.`);
    return unquoted;
  }
  return t;
}

function item(raw: string, depth: number): SelectItem {
  let body = raw.trim();
  if (body === '') fail('"select" has an empty column name.');
  if (body === '*') return { kind: 'star' };
  // `...author(name)`: a spread of an embedded relation's keys into this level.
  if (body.startsWith('...')) {
    const spread = item(body.slice(3), depth);
    if (spread.kind !== 'embed' || spread.alias !== null) {
      fail(`"select": "${body}" spreads no relation; write ...relation(columns) without an alias.`);
    }
    return { ...spread, spread: true };
  }
  let alias: string | null = null;
  const colon = aliasColon(body);
  const paren = indexOutside(body, '(');
  if (colon > 0 && (paren === -1 || colon < paren)) {
    alias = name(body.slice(0, colon));
    body = body.slice(colon + 1).trim();
    if (alias === '' || body === '') fail(`"select" has an empty alias or column in "${raw.trim()}".`);
  }
  const open = indexOutside(body, '(');
  // PostgREST's aggregate form: `amount.sum()`, `id.count()`.
  // `id.count()::text`: the aggregate's value cast (the type is checked by the plan stage).
  const agg = /^([^()]+)\.(count|sum|avg|min|max)\(\)(?:::(.+))?$/.exec(body);
  if (agg) {
    const cast = agg[3]?.trim();
    if (cast === '') fail(`"select" casts "${body}" to no type.`);
    return { kind: 'aggregate', alias, fn: agg[2] as AggregateFunction, column: name(agg[1]), ...(cast ? { cast } : {}) };
  }
  if (open === -1) {
    if (body === '*') fail('"select": `*` takes no alias.');
    // `col::text`: a cast of the value (the type is checked by the plan stage).
    const cast = body.startsWith('"') ? -1 : body.lastIndexOf('::');
    if (cast > 0) {
      const type = body.slice(cast + 2).trim();
      if (type === '') fail(`"select" casts "${body}" to no type.`);
      return { kind: 'column', alias, column: name(body.slice(0, cast)), cast: type };
    }
    return { kind: 'column', alias, column: name(body) };
  }
  if (!body.endsWith(')')) fail(`"select" has text after ")" in "${body}".`);
  const head = body.slice(0, open);
  const inner = body.slice(open + 1, -1);
  const [relation, ...mods] = head.split('!');
  const rel = name(relation);
  if (rel === '') fail(`"select" names no relation or function before "(" in "${body}".`);
  if (mods.length === 0 && AGGREGATES.has(rel)) {
    const arg = inner.trim() === '' || inner.trim() === '*' ? null : name(inner);
    if (arg === null && rel !== 'count') fail(`"select": ${rel}() needs a column, e.g. ${rel}(amount).`);
    return { kind: 'aggregate', alias, fn: rel as AggregateFunction, column: arg };
  }
  let hint: string | null = null;
  let inner_ = false;
  for (const m of mods.map((x) => x.trim())) {
    if (m === 'inner') inner_ = true;
    else if (m === 'left') inner_ = false;
    else if (m === '' || hint !== null) fail(`"select": "${head}" takes at most one !<foreign key or column> and !inner or !left.`);
    else hint = m;
  }
  const select = inner.trim() === '*' ? null : list(inner, depth + 1);
  return { kind: 'embed', alias, relation: rel, hint, inner: inner_, select };
}
