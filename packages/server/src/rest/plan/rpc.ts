/** `/api/v1/rpc/{function}` against the schema: which overload, argument values, and the result's shape. */
import { ApiError } from '../../http/index.js';
import type { FunctionArg, FunctionInfo, SchemaSnapshot, TableInfo } from '../schema-cache/index.js';
import { aggregateKeys } from './select.js';
import { planOrder } from './fields.js';
import { DEFAULT_LIMIT, planRows } from './rows.js';
import type { RpcBodyMedia, RpcPlan, RpcRequest } from './types.js';

export interface RpcPlanOptions {
  maxRows: number;
}

const JSON_TYPES = new Set(['json', 'jsonb']);

/** Which unnamed argument type each body media type fits (PostgREST's single unnamed parameter). */
const UNNAMED_FITS: Record<RpcBodyMedia, Set<string>> = {
  json: new Set(['json', 'jsonb']),
  text: new Set(['text']),
  xml: new Set(['xml']),
  bytea: new Set(['bytea']),
};

/** The argument lists of overloads as `[name, type]` pairs, in PostgREST's order (by parameters). */
function parameterLists(fns: FunctionInfo[]): Array<Array<[string, string]>> {
  const lists = fns.map((f) => f.args.map((a): [string, string] => [a.name, a.type]));
  const key = (l: Array<[string, string]>) => l.map(([n, t]) => `${n}\u0001${t}`).join('\u0002');
  return lists.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
}

export interface OverloadOptions {
  /** The POST body's media type, when a function with one unnamed argument could take it whole. */
  media?: RpcBodyMedia;
  /** `postgrest`: several fitting overloads are ambiguous even when one fits exactly. */
  overloads?: 'prefer-exact' | 'postgrest';
}

/**
 * The overload whose argument names are the ones given (arguments with a default may be left
 * out); failing that, the one whose only argument has no name and whose type fits the POST body
 * (json/jsonb for JSON, text, xml, bytea: PostgREST's rule). None: 404 `function_not_found` with
 * the known signatures; several: 300 `ambiguous_function`.
 * @example pickOverload(schema, 'add', ['a', 'b']) // the add(a integer, b integer)
 */
export function pickOverload(schema: SchemaSnapshot, name: string, given: string[], options: OverloadOptions = {}): FunctionInfo {
  const overloads = schema.functions.get(name) ?? [];
  const signatures = overloads.map((f) => f.signature);
  const rawBody = options.media !== undefined && options.media !== 'json';
  const fitsNames = (f: FunctionInfo) =>
    f.args.length === 0
      ? given.length === 0 && !rawBody
      : given.every((n) => f.args.some((a) => a.name === n)) && f.args.every((a) => a.hasDefault || given.includes(a.name));
  const takesBody = (f: FunctionInfo) =>
    options.media !== undefined && f.args.length === 1 && f.args[0].name === '' && UNNAMED_FITS[options.media].has(f.args[0].udt);
  const named = overloads.filter(fitsNames);
  const fits = named.length > 0 ? named : overloads.filter(takesBody);
  if (fits.length === 0) {
    const message =
      overloads.length === 0
        ? `No function "${name}" in the ${schema.schema} schema that the API can call (every argument needs a name, or its one argument is json, jsonb, text, xml or bytea).`
        : `No function "${name}" takes the arguments ${given.length ? given.join(', ') : '(none)'}; its signatures: ${signatures.join('; ')}.`;
    throw new ApiError('function_not_found', message, {
      function: name,
      arguments: given,
      signatures,
      parameters: overloads.map((f) => f.args.map((a) => a.name)),
    });
  }
  // f(a) and f(a, b default 1) both take {a}: the one without arguments left to defaults wins (not in PostgREST's rule).
  const exact = options.overloads === 'postgrest' ? [] : fits.filter((f) => f.args.length === given.length);
  const chosen = exact.length > 0 ? exact : fits;
  if (chosen.length > 1) {
    throw new ApiError(
      'ambiguous_function',
      `Several functions "${name}" take the arguments ${given.join(', ') || '(none)'}: ${chosen.map((f) => f.signature).join('; ')}. ` +
        'Rename an argument, or drop an overload.',
      { function: name, signatures: chosen.map((f) => f.signature), parameters: parameterLists(chosen) },
    );
  }
  return chosen[0];
}

/** A PostgreSQL array literal of a JSON array (nested arrays nest), every item quoted. */
function arrayLiteral(items: unknown[]): string {
  const item = (v: unknown): string => {
    if (v === null) return 'NULL';
    if (Array.isArray(v)) return arrayLiteral(v);
    const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return `"${s.replace(/[\\"]/g, '\\$&')}"`;
  };
  return `{${items.map(item).join(',')}}`;
}

/** The text an argument's JSON value is given to PostgreSQL as (cast to the argument's type in SQL); null is NULL. */
function argumentText(fn: FunctionInfo, arg: FunctionArg, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (JSON_TYPES.has(arg.udt) || arg.composite) return JSON.stringify(value);
  if (Array.isArray(value) && arg.category === 'A') return arrayLiteral(value);
  throw new ApiError(
    'invalid_value',
    `The argument "${arg.name}" of ${fn.name} is ${arg.type}; a JSON ${Array.isArray(value) ? 'array' : 'object'} does not fit it.`,
    { argument: arg.name },
  );
}

/**
 * Plans a function call. GET calls only `stable` and `immutable` functions (405 otherwise); a
 * set result takes select, filters, order, limit, offset and counts like a table.
 * @example planRpc({ function: 'add', method: 'POST', query, prefer, args: { a: 1, b: 2 } }, schema, { maxRows: 1000 })
 */
export function planRpc(req: RpcRequest, schema: SchemaSnapshot, options: RpcPlanOptions): RpcPlan {
  const fn = pickOverload(schema, req.function, Object.keys(req.args), {
    ...(req.method === 'POST' ? { media: req.body?.media ?? 'json' } : {}),
    overloads: req.overloads ?? 'prefer-exact',
  });
  if (req.method === 'GET' && fn.volatility === 'volatile') {
    throw new ApiError(
      'method_not_allowed',
      `The function "${fn.name}" is volatile (it may change data): call it with POST. GET calls stable and immutable functions.`,
      { function: fn.name },
    );
  }
  // One argument without a name: it is given the whole body (PostgREST's rule), as sent.
  const unnamed = fn.args.length === 1 && fn.args[0].name === '';
  const args = unnamed
    ? [{ arg: fn.args[0], value: req.body?.text ?? JSON.stringify(req.args) }]
    : fn.args.filter((arg) => Object.hasOwn(req.args, arg.name)).map((arg) => ({ arg, value: argumentText(fn, arg, req.args[arg.name]) }));
  const q = req.query;
  const r = fn.returns;
  const set = r.kind !== 'void' && r.set;
  const aliasColumns = r.kind !== 'row' || schema.tables.get(r.table.name) !== r.table;
  const base = {
    kind: 'rpc' as const,
    schema: schema.schema,
    fn,
    args,
    aliasColumns,
    single: !set,
    count: false,
    order: [],
    limit: 0,
    offset: 0,
  };
  if (
    !set &&
    r.kind === 'row' &&
    (q.select !== null || q.filters.length > 0) &&
    q.order.length === 0 &&
    q.limit === null &&
    q.offset === null
  ) {
    // One row: select (with embeddings) and filters apply as to a table of one row; the answer is it, or null.
    const rows = planRows(schema, r.table, q, true);
    return { ...base, table: r.table, filters: [...rows.filters, ...rows.inner], returning: rows.returning ?? [], result: 'row' };
  }
  if (!set) {
    const extra = q.select !== null || q.filters.length > 0 || q.order.length > 0 || q.limit !== null || q.offset !== null;
    if (extra || q.embedded.size > 0) {
      throw new ApiError(
        'invalid_parameter',
        r.kind === 'row'
          ? `The function "${fn.name}" returns one row: select and filters apply to it, order, limit and offset to functions that return a set.`
          : `The function "${fn.name}" returns ${r.kind === 'void' ? 'nothing' : 'one value'}: select, filters, order, limit and offset apply to functions that return a set.`,
        { function: fn.name },
      );
    }
    const table = r.kind === 'row' ? r.table : scalarTable(fn);
    return { ...base, table, filters: [], returning: [], result: r.kind === 'row' ? 'row' : 'value' };
  }
  if (q.columns !== null || q.onConflict !== null) {
    throw new ApiError('invalid_parameter', '"columns" and "on_conflict" apply to creating rows, not to functions.', { function: fn.name });
  }
  const table = r.kind === 'row' ? r.table : scalarTable(fn);
  const rows = planRows(schema, table, q, true);
  const returning = rows.returning ?? [];
  return {
    ...base,
    table,
    filters: [...rows.filters, ...rows.inner],
    returning,
    result: r.kind === 'row' ? 'rows' : 'values',
    order: planOrder(table, q.order, aggregateKeys(returning)),
    limit: q.limit ?? Math.min(DEFAULT_LIMIT, options.maxRows),
    offset: q.offset ?? 0,
    count: req.prefer.count,
  };
}

/** A scalar result as a one-column table named after the function, so filters and order can name it. */
function scalarTable(fn: FunctionInfo): TableInfo {
  const column = fn.returns.kind === 'scalar' ? fn.returns.column : null;
  const columns = column ? [column] : [];
  return { name: fn.name, kind: 'view', columns: new Map(columns.map((c) => [c.name, c])), columnList: columns, pk: [], comment: null };
}
