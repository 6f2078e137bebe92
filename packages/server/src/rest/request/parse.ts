import { FILTER_OPERATORS, type FilterOperator, RESERVED_PARAMS } from '@plinth/shared';
import { ApiError } from '../../http/index.js';
import type { Filter, IsValue, OrderTerm, QueryAst } from './types.js';

const OPERATORS = new Set<string>(FILTER_OPERATORS);
const RESERVED = new Set<string>(RESERVED_PARAMS);
const IS_VALUES = new Set<string>(['null', 'true', 'false', 'unknown']);
const DIGITS = /^[0-9]+$/;

export interface ParseOptions {
  /** Largest `limit`; larger values are clamped to it (docs/api.md §2). */
  maxRows: number;
}

function invalidParameter(parameter: string, message: string): ApiError {
  return new ApiError('invalid_parameter', message, { parameter });
}

/**
 * Parses the raw query string (what follows `?`) of a REST request. No I/O, no schema:
 * names stay strings until the plan stage resolves them. Throws only ApiError.
 * @example parseQuery('eq.owner=42&order=created_at.desc&limit=10', { maxRows: 1000 })
 *   // { filters: [{ op: 'eq', column: 'owner', value: '42' }], order: [...], limit: 10, ... }
 */
export function parseQuery(qs: string, options: ParseOptions): QueryAst {
  const ast: QueryAst = { filters: [], select: null, order: [], limit: null, offset: null, columns: null };
  if (qs === '') return ast;
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(qs)) {
    if (value.includes('\0')) throw new ApiError('invalid_value', `The value of "${name}" contains a NUL character.`, { parameter: name });
    const dot = name.indexOf('.');
    if (dot === -1) {
      if (!RESERVED.has(name)) {
        throw invalidParameter(name, `Unknown query parameter "${name}": filters are written <operator>.<column>=<value>.`);
      }
      // A repeated select or limit is ambiguous: refuse rather than guess which one wins.
      if (seen.has(name)) throw invalidParameter(name, `The parameter "${name}" is given more than once.`);
      seen.add(name);
      reserved(ast, name, value, options);
      continue;
    }
    ast.filters.push(filter(name, name.slice(0, dot), name.slice(dot + 1), value));
  }
  return ast;
}

function reserved(ast: QueryAst, name: string, value: string, options: ParseOptions): void {
  switch (name) {
    case 'select':
      ast.select = names(name, value);
      return;
    case 'columns':
      ast.columns = names(name, value) ?? [];
      return;
    case 'order':
      ast.order = order(value);
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
    if (name === 'limit') return Number.MAX_SAFE_INTEGER;
    throw invalidParameter(name, `"${name}" is too large.`);
  }
  return n;
}

function filter(param: string, op: string, column: string, value: string): Filter {
  if (!OPERATORS.has(op)) {
    throw invalidParameter(param, `Unknown operator "${op}" in "${param}"; use one of ${FILTER_OPERATORS.join(', ')}.`);
  }
  if (column === '') throw invalidParameter(param, `The filter "${param}" names no column.`);
  switch (op as FilterOperator) {
    case 'in':
      return { op: 'in', column, value: splitList(value, param) };
    case 'is': {
      const v = value.toLowerCase();
      if (!IS_VALUES.has(v)) {
        throw new ApiError('invalid_value', `"${param}" must be null, true, false or unknown.`, { parameter: param });
      }
      return { op: 'is', column, value: v as IsValue };
    }
    case 'like':
    case 'ilike':
      // `*` stands for `%` so patterns need no percent-encoding in a URL.
      return { op: op as 'like', column, value: value.replaceAll('*', '%') };
    default:
      return { op: op as 'eq', column, value };
  }
}

/** `select=a,b` and `columns=a,b`: names, trimmed; `*` (or nothing) means every column. */
function names(param: string, value: string): string[] | null {
  const items = splitList(value, param).map((s) => s.trim());
  if (items.length === 0 || items.includes('*')) return null;
  if (items.includes('')) throw invalidParameter(param, `"${param}" has an empty column name.`);
  return items;
}

const DIRECTIONS = new Set(['asc', 'desc']);
const NULLS = new Set(['nullsfirst', 'nullslast']);

/** `order=a.asc,b.desc.nullslast`: modifiers are read from the right so a column may contain dots. */
function order(value: string): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const raw of splitList(value, 'order')) {
    const parts = raw.trim().split('.');
    let nulls: OrderTerm['nulls'] = null;
    let desc = false;
    if (parts.length > 1 && NULLS.has(parts[parts.length - 1])) nulls = parts.pop() === 'nullsfirst' ? 'first' : 'last';
    if (parts.length > 1 && DIRECTIONS.has(parts[parts.length - 1])) desc = parts.pop() === 'desc';
    const column = parts.join('.');
    if (column === '') throw invalidParameter('order', `"order" has an empty term in "${value}".`);
    terms.push({ column, desc, nulls });
  }
  return terms;
}

/**
 * Splits a comma-separated list; an item in double quotes may hold commas, and `\` escapes
 * the next character inside quotes (PostgREST's syntax).
 * @example splitList('a,"b,c",d', 'in.x') // ['a', 'b,c', 'd']
 */
export function splitList(s: string, param: string): string[] {
  const items: string[] = [];
  if (s === '') return items;
  let i = 0;
  const n = s.length;
  for (;;) {
    if (s[i] === '"') {
      let buf = '';
      let j = i + 1;
      while (j < n && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < n) j++;
        buf += s[j++];
      }
      if (j >= n) throw new ApiError('invalid_value', `"${param}" has an unterminated quoted item.`, { parameter: param });
      j++;
      if (j < n && s[j] !== ',') {
        throw new ApiError('invalid_value', `"${param}" has text after a quoted item; separate items with commas.`, { parameter: param });
      }
      items.push(buf);
      i = j;
    } else {
      const comma = s.indexOf(',', i);
      const end = comma === -1 ? n : comma;
      items.push(s.slice(i, end));
      i = end;
    }
    if (i >= n) return items;
    i++; // past the comma
    if (i === n) {
      items.push('');
      return items;
    }
  }
}
