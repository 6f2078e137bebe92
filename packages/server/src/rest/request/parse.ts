import { EMBEDDED_PARAMS, FILTER_OPERATORS, LOGIC_OPERATORS, RESERVED_PARAMS } from '@plinth/shared';
import { ApiError } from '../../http/index.js';
import { ALL_OPERATORS, invalidParameter, isOperator, leaf } from './filter.js';
import { parseGroup } from './logic.js';
import { splitList } from './list.js';
import { parseSelect } from './select.js';
import {
  type Condition,
  type CoreFilter,
  type EmbeddedParams,
  type Filter,
  type LogicGroup,
  type OrderTerm,
  type QueryAst,
  emptyQueryAst,
} from './types.js';

export { splitList } from './list.js';

const RESERVED = new Set<string>(RESERVED_PARAMS);
const LOGIC = new Set<string>(LOGIC_OPERATORS);
const EMBEDDED = new Set<string>(EMBEDDED_PARAMS);
const DIGITS = /^[0-9]+$/;

export interface ParseOptions {
  /** Largest `limit`; larger values are clamped to it (docs/api.md §2). */
  maxRows: number;
  /**
   * `/rpc/{fn}` GET: a parameter without a dot that is no reserved name is an argument of the
   * function (QueryAst.args) rather than an error.
   */
  args?: boolean;
}

/**
 * Parses the raw query string (what follows `?`) of a REST request. No I/O, no schema:
 * names stay strings until the plan stage resolves them. Throws only ApiError.
 * @example parseQuery('eq.owner=42&order=created_at.desc&limit=10', { maxRows: 1000 })
 *   // { filters: [{ op: 'eq', column: 'owner', value: '42' }], order: [...], limit: 10, ... }
 */
export function parseQuery(qs: string, options: ParseOptions): QueryAst {
  const ast: QueryAst = emptyQueryAst(options.args === true);
  if (qs === '') return ast;
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(qs)) {
    if (value.includes('\0')) throw new ApiError('invalid_value', `The value of "${name}" contains a NUL character.`, { parameter: name });
    if (name.includes('\0')) throw invalidParameter(name, 'A parameter name contains a NUL character.');
    if (!name.includes('.')) {
      if (LOGIC.has(name)) {
        ast.filters.push(parseGroup(name, name as LogicGroup['op'], false, value));
        continue;
      }
      if (!RESERVED.has(name)) {
        if (ast.args) {
          if (ast.args.some(([n]) => n === name)) throw invalidParameter(name, `The argument "${name}" is given more than once.`);
          ast.args.push([name, value]);
          continue;
        }
        throw invalidParameter(name, `Unknown query parameter "${name}": filters are written <operator>.<column>=<value>.`);
      }
      // A repeated select or limit is ambiguous: refuse rather than guess which one wins.
      if (seen.has(name)) throw invalidParameter(name, `The parameter "${name}" is given more than once.`);
      seen.add(name);
      reserved(ast, name, value, options);
      continue;
    }
    keyed(ast, name, value, options, seen);
  }
  return ast;
}

/**
 * parseQuery for the areas that evaluate filters themselves (realtime, webhooks): the core
 * grammar only (FILTER_OPERATORS and `fts`); the planner's other operators are 400
 * `invalid_parameter` here. Throws only ApiError.
 * @example parseCoreQuery('eq.status=paid', { maxRows: 1 }).filters // [{ op: 'eq', column: 'status', value: 'paid' }]
 */
export function parseCoreQuery(qs: string, options: ParseOptions): QueryAst<CoreFilter> {
  const ast = parseQuery(qs, options);
  const check = (c: Condition): void => {
    if ('items' in c) {
      c.items.forEach(check);
      return;
    }
    if (isExtended(c)) {
      const name = c.op === 'fts' ? `fts mode ${c.mode}` : c.op === 'any' || c.op === 'all' ? `${c.compare}(${c.op})` : c.op;
      throw invalidParameter(name, `The operator "${name}" is not available here; use one of ${CORE_OPERATORS}.`);
    }
  };
  ast.filters.forEach(check);
  for (const e of ast.embedded.values()) e.filters.forEach(check);
  return ast as QueryAst<CoreFilter>;
}

const CORE_OPERATORS = `${FILTER_OPERATORS.join(', ')}, fts`;
const CORE = new Set<string>([...FILTER_OPERATORS, 'fts']);
const isExtended = (f: Filter): boolean => !CORE.has(f.op) || (f.op === 'fts' && f.mode !== undefined);

/**
 * Parses one filter parameter (`eq.status=open`, `not.in.id=1,2`, `fts(simple).body=cat`) into a
 * Filter; embedded paths and groups are not filters. Throws only ApiError.
 * @example parseFilter('not.eq.status', 'done') // { op: 'eq', column: 'status', value: 'done', negate: true }
 */
export function parseFilter(name: string, value: string): Filter {
  const parts = name.split('.');
  let i = 0;
  const negate = parts[0] === 'not';
  if (negate) i++;
  const op = parts[i];
  if (op === undefined || !isOperator(op)) {
    throw invalidParameter(name, `Unknown operator "${op ?? ''}" in "${name}"; use one of ${ALL_OPERATORS}.`);
  }
  return leaf(name, op, parts.slice(i + 1).join('.'), value, negate);
}

/**
 * A parameter with a dot: `[<relation>.]…[not.]<op>.<column>`, `[<relation>.]…[not.](or|and)`,
 * or `<relation>.(order|limit|offset)`. The first token that is an operator ends the relation
 * path, so a column may contain dots (`eq.a.b` is column `a.b`) and a relation may not.
 */
function keyed(ast: QueryAst, name: string, value: string, options: ParseOptions, seen: Set<string>): void {
  const parts = tokens(name);
  const path: string[] = [];
  let i = 0;
  for (; i < parts.length; i++) {
    const t = parts[i];
    const last = i === parts.length - 1;
    if (isOperator(t) || (t === 'not' && !last) || (LOGIC.has(t) && last)) break;
    if (path.length > 0 && last && EMBEDDED.has(t)) {
      embeddedParam(ast, path, name, t, value, options, seen);
      return;
    }
    if (t === '') throw invalidParameter(name, `"${name}" has an empty name between dots.`);
    path.push(t);
  }
  if (i === parts.length) {
    throw invalidParameter(
      name,
      `"${name}" is not a filter: write <operator>.<column>=<value> (operators: ${ALL_OPERATORS}), ` +
        'or <relation>.<operator>.<column>=<value> for an embedded relation.',
    );
  }
  let negate = false;
  if (parts[i] === 'not') {
    negate = true;
    i++;
  }
  const t = parts[i];
  let condition: Condition;
  if (LOGIC.has(t) && i === parts.length - 1) {
    condition = parseGroup(name, t as LogicGroup['op'], negate, value);
  } else if (isOperator(t)) {
    condition = leaf(name, t, parts.slice(i + 1).join('.'), value, negate);
  } else {
    throw invalidParameter(name, `Unknown operator "${t}" in "${name}"; use one of ${ALL_OPERATORS}, or or/and.`);
  }
  if (path.length === 0) ast.filters.push(condition);
  else embeddedOf(ast, path).filters.push(condition);
}

/** Splits a parameter name on dots outside parentheses (`fts(pg_catalog.english).body`). */
function tokens(name: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (c === '.' && depth === 0) {
      out.push(name.slice(start, i));
      start = i + 1;
    }
  }
  out.push(name.slice(start));
  return out;
}

function embeddedOf(ast: QueryAst, path: string[]): EmbeddedParams {
  const key = path.join('.');
  let e = ast.embedded.get(key);
  if (!e) {
    e = { filters: [], order: [], limit: null, offset: null };
    ast.embedded.set(key, e);
  }
  return e;
}

function embeddedParam(
  ast: QueryAst,
  path: string[],
  name: string,
  param: string,
  value: string,
  options: ParseOptions,
  seen: Set<string>,
) {
  if (seen.has(name)) throw invalidParameter(name, `The parameter "${name}" is given more than once.`);
  seen.add(name);
  const e = embeddedOf(ast, path);
  if (param === 'order') e.order = order(value, name);
  else if (param === 'limit') e.limit = Math.min(integer(name, value), options.maxRows);
  else e.offset = integer(name, value);
}

function reserved(ast: QueryAst, name: string, value: string, options: ParseOptions): void {
  switch (name) {
    case 'select':
      ast.select = parseSelect(value);
      return;
    case 'columns':
      ast.columns = names(name, value) ?? [];
      return;
    case 'on_conflict': {
      const cols = names(name, value);
      if (cols === null) throw invalidParameter(name, '"on_conflict" names the columns of a unique key, e.g. on_conflict=email.');
      ast.onConflict = cols;
      return;
    }
    case 'order':
      ast.order = order(value, 'order');
      return;
    case 'limit':
      ast.limit = Math.min(integer(name, value), options.maxRows);
      return;
    case 'offset':
      ast.offset = integer(name, value);
      return;
  }
}

function integer(name: string, value: string): number {
  if (!DIGITS.test(value)) throw invalidParameter(name, `"${name}" must be a non-negative integer.`);
  const n = Number(value);
  // A limit this large is clamped anyway; an offset this large cannot be exact.
  if (!Number.isSafeInteger(n)) {
    if (name === 'limit' || name.endsWith('.limit')) return Number.MAX_SAFE_INTEGER;
    throw invalidParameter(name, `"${name}" is too large.`);
  }
  return n;
}

/** `columns=a,b` and `on_conflict=a,b`: names, trimmed; `*` (or nothing) means every column. */
function names(param: string, value: string): string[] | null {
  const items = splitList(value, param).map((s) => s.trim());
  if (items.length === 0 || items.includes('*')) return null;
  if (items.includes('')) throw invalidParameter(param, `"${param}" has an empty column name.`);
  return items;
}

const DIRECTIONS = new Set(['asc', 'desc']);
const NULLS = new Set(['nullsfirst', 'nullslast']);

/**
 * `order=a.asc,b.desc.nullslast`: modifiers are read from the right so a column may contain dots.
 * @example parseOrder('id.desc', 'order') // [{ column: 'id', desc: true, nulls: null }]
 */
export function parseOrder(value: string, param: string): OrderTerm[] {
  return order(value, param);
}

function order(value: string, param: string): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const raw of splitList(value, param)) {
    const parts = raw.trim().split('.');
    let nulls: OrderTerm['nulls'] = null;
    let desc = false;
    if (parts.length > 1 && NULLS.has(parts[parts.length - 1])) nulls = parts.pop() === 'nullsfirst' ? 'first' : 'last';
    if (parts.length > 1 && DIRECTIONS.has(parts[parts.length - 1])) desc = parts.pop() === 'desc';
    const column = parts.join('.');
    if (column === '') throw invalidParameter(param, `"${param}" has an empty term in "${value}".`);
    terms.push({ column, desc, nulls });
  }
  return terms;
}
