/**
 * PostgREST's query grammar (`column=op.value`, `or=(column.op.value,…)`, `rel.column=op.value`)
 * parsed into the AST of rest/'s own grammar (`op.column=value`), which the one planner reads.
 * A second parser, not a second engine: everything after this file is rest/'s. Pure; throws
 * only ApiError.
 */
import { ApiError } from '../../http/index.js';
import {
  emptyQueryAst,
  parseOrder,
  parseSelect,
  type RestCondition,
  type RestFilter,
  type RestLogicGroup,
  type RestQueryAst,
  isRestOperator,
  restLeaf,
  splitList,
} from '../../rest/index.js';

/** Groups nest at most this deep (rest/'s own limit). */
const MAX_DEPTH = 16;
const DIGITS = /^[0-9]+$/;
const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'columns', 'on_conflict', 'or', 'and']);
const EMBEDDED = new Set(['order', 'limit', 'offset']);

export interface PostgrestQueryOptions {
  maxRows: number;
  /** `/rpc/{fn}` by GET: these parameter names are the function's arguments, not filters. */
  argNames?: Set<string>;
}

/** What a parameter of the query string was: the AST, and a GET call's arguments. */
export interface PostgrestQuery {
  ast: RestQueryAst;
  args: Record<string, string>;
}

const parseError = (message: string, details: string | null = null) =>
  new ApiError('invalid_parameter', message, details === null ? undefined : { parameter: details });

/**
 * Parses a PostgREST query string (what follows `?`).
 * @example parsePostgrestQuery('select=id,name&age=gte.18&or=(a.eq.1,b.is.null)', { maxRows: 1000 })
 */
export function parsePostgrestQuery(qs: string, options: PostgrestQueryOptions): PostgrestQuery {
  const ast: RestQueryAst = emptyQueryAst(false);
  const args: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(qs)) {
    if (value.includes('\0') || name.includes('\0')) throw parseError(`"${name}" contains a NUL character.`, name);
    if (options.argNames?.has(name)) {
      args[name] = value;
      continue;
    }
    const parts = name.split('.');
    const last = parts[parts.length - 1];
    if (parts.length === 1 && RESERVED.has(name)) {
      reserved(ast, name, value, options);
      continue;
    }
    if (parts.length > 1 && EMBEDDED.has(last)) {
      const e = embeddedOf(ast, parts.slice(0, -1));
      if (last === 'order') e.order = parseOrder(value, name);
      else if (last === 'limit') e.limit = Math.min(integer(name, value), options.maxRows);
      else e.offset = integer(name, value);
      continue;
    }
    // `or`, `not.or`, `rel.or`, `rel.not.and`
    if (last === 'or' || last === 'and') {
      const negate = parts.length > 1 && parts[parts.length - 2] === 'not';
      const path = parts.slice(0, negate ? -2 : -1);
      const group = parseLogic(name, last, negate, value);
      if (path.length === 0) ast.filters.push(group);
      else embeddedOf(ast, path).filters.push(group);
      continue;
    }
    if (options.argNames && parts.length === 1 && !isFilterValue(value)) {
      throw new ApiError('function_not_found', `The function has no argument "${name}".`, { argument: name });
    }
    // `column=op.value` or `rel.column=op.value` (a JSON path's keys may not hold dots).
    const column = parts.length > 1 && !name.includes('->') ? last : name;
    const path = column === name ? [] : parts.slice(0, -1);
    const condition = filter(name, column, value);
    if (path.length === 0) ast.filters.push(condition);
    else embeddedOf(ast, path).filters.push(condition);
  }
  return { ast, args };
}

function reserved(ast: RestQueryAst, name: string, value: string, options: PostgrestQueryOptions): void {
  switch (name) {
    case 'select':
      ast.select = parseSelect(value);
      return;
    case 'order':
      ast.order = parseOrder(value, name);
      return;
    case 'limit':
      ast.limit = Math.min(integer(name, value), options.maxRows);
      return;
    case 'offset':
      ast.offset = integer(name, value);
      return;
    case 'columns':
      ast.columns = names(name, value);
      return;
    case 'on_conflict':
      ast.onConflict = names(name, value);
      return;
    case 'or':
    case 'and':
      ast.filters.push(parseLogic(name, name, false, value));
      return;
  }
}

function embeddedOf(ast: RestQueryAst, path: string[]) {
  const key = path.join('.');
  let e = ast.embedded.get(key);
  if (!e) {
    e = { filters: [], order: [], limit: null, offset: null };
    ast.embedded.set(key, e);
  }
  return e;
}

function integer(name: string, value: string): number {
  if (!DIGITS.test(value)) throw parseError(`"${name}" must be a non-negative integer.`, name);
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}

/** `columns=a,"b c"`: names, trimmed, without quotes. */
function names(param: string, value: string): string[] {
  const items = splitList(value, param).map((s) => s.trim());
  if (items.length === 0 || items.includes('')) throw parseError(`"${param}" has an empty column name.`, param);
  return items;
}

/** `[not.]op[(mod)].operand`: the operator token ends at the first `.` outside parentheses. */
function splitOperator(value: string): { negate: boolean; op: string; operand: string } | null {
  let v = value;
  let negate = false;
  if (v.startsWith('not.')) {
    negate = true;
    v = v.slice(4);
  }
  let depth = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '.' && depth === 0) return { negate, op: v.slice(0, i), operand: v.slice(i + 1) };
  }
  return null;
}

/** Whether a GET parameter's value reads as a PostgREST filter (`eq.1`), not an argument. */
function isFilterValue(value: string): boolean {
  const s = splitOperator(value);
  return s !== null && /^[a-z]+(\(.*\))?$/.test(s.op);
}

/** One `column=op.value` condition, through rest/'s `leaf` (its operators, its checks). */
function filter(param: string, column: string, value: string): RestFilter {
  const s = splitOperator(value);
  if (s === null) {
    throw parseError(`"${param}=${value}" is not a filter: write ${param}=<operator>.<value>, e.g. ${param}=eq.1.`, param);
  }
  return condition(param, column, s.op, s.operand, s.negate);
}

function condition(param: string, column: string, op: string, operand: string, negate: boolean): RestFilter {
  if (column === '') throw parseError(`The filter "${param}" names no column.`, param);
  let f: RestFilter;
  if (op === 'in') {
    if (!operand.startsWith('(') || !operand.endsWith(')'))
      throw parseError(`"${param}": in takes a list in parentheses, e.g. in.(1,2).`, param);
    f = restLeaf(param, 'in', column, '', negate, splitList(operand.slice(1, -1), param));
  } else {
    if (!isRestOperator(op) || op === 'in') throw parseError(`"${param}": unknown operator "${op}".`, param);
    f = restLeaf(param, op, column, unquote(operand), negate);
  }
  // PostgREST's `fts` is to_tsquery (rest/'s own `fts` is websearch_to_tsquery).
  if (f.op === 'fts' && f.mode === undefined) return { ...f, mode: 'raw' };
  return f;
}

/** A value wholly in double quotes loses them (`\` escapes inside), as PostgREST reads it. */
function unquote(v: string): string {
  if (v.length < 2 || v[0] !== '"' || v[v.length - 1] !== '"') return v;
  let out = '';
  for (let i = 1; i < v.length - 1; i++) {
    if (v[i] === '\\' && i + 1 < v.length - 1) i++;
    out += v[i];
  }
  return out;
}

/** `or=(a.eq.1,not.and(b.gt.2,c.is.null))`: PostgREST's logic tree, column first. */
function parseLogic(param: string, op: 'or' | 'and', negate: boolean, value: string): RestLogicGroup {
  const p = new LogicParser(param, value);
  const g = p.group(op, negate, 1);
  if (p.i !== value.length) p.fail('unexpected text after the closing parenthesis');
  return g;
}

class LogicParser {
  i = 0;
  constructor(
    readonly param: string,
    readonly s: string,
  ) {}

  fail(what: string): never {
    throw parseError(
      `"${this.param}": ${what} at character ${this.i + 1}. Write (<column>.<op>.<value>,…), nesting or(…) and and(…).`,
      this.param,
    );
  }

  group(op: 'or' | 'and', negate: boolean, depth: number): RestLogicGroup {
    if (depth > MAX_DEPTH) this.fail(`groups nest deeper than ${MAX_DEPTH} levels`);
    if (this.s[this.i] !== '(') this.fail('expected "("');
    this.i++;
    const items: RestCondition[] = [];
    for (;;) {
      items.push(this.item(depth));
      if (this.s[this.i] === ',') {
        this.i++;
        continue;
      }
      if (this.s[this.i] !== ')') this.fail('expected "," or ")"');
      this.i++;
      return { op, negate, items };
    }
  }

  /** Text up to `,` or `)` at depth 0, outside quotes; parentheses and braces nest. */
  chunk(): string {
    const start = this.i;
    let depth = 0;
    while (this.i < this.s.length) {
      const c = this.s[this.i];
      if (c === '"') {
        this.i++;
        while (this.i < this.s.length && this.s[this.i] !== '"') {
          if (this.s[this.i] === '\\') this.i++;
          this.i++;
        }
        if (this.i >= this.s.length) this.fail('unterminated quote');
      } else if (c === '(' || c === '{' || c === '[') depth++;
      else if ((c === ')' || c === '}' || c === ']') && depth > 0) depth--;
      else if ((c === ',' || c === ')') && depth === 0) break;
      this.i++;
    }
    return this.s.slice(start, this.i);
  }

  item(depth: number): RestCondition {
    const rest = this.s.slice(this.i);
    const logic = /^(not\.)?(or|and)\(/.exec(rest);
    if (logic) {
      this.i += logic[0].length - 1;
      return this.group(logic[2] as 'or' | 'and', logic[1] !== undefined, depth + 1);
    }
    const text = this.chunk();
    if (text === '') this.fail('expected a condition');
    // column: quoted, or up to the first dot
    let column: string;
    let tail: string;
    if (text.startsWith('"')) {
      const end = text.indexOf('"', 1);
      column = text.slice(1, end);
      tail = text.slice(end + 2);
    } else {
      const dot = text.indexOf('.');
      if (dot === -1) this.fail(`"${text}" is not <column>.<op>.<value>`);
      column = text.slice(0, dot);
      tail = text.slice(dot + 1);
    }
    const s = splitOperator(tail);
    if (s === null) this.fail(`"${text}" is not <column>.<op>.<value>`);
    return condition(this.param, column, s.op, s.operand, s.negate);
  }
}
