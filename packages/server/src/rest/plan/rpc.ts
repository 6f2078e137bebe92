/** `/api/v1/rpc/{function}` against the schema: which overload, argument values, and the result's shape. */
import { ApiError } from '../../http/index.js';
import type { FunctionArg, FunctionInfo, SchemaSnapshot, TableInfo } from '../schema-cache/index.js';
import { aggregateKeys } from './select.js';
import { planOrder } from './fields.js';
import { DEFAULT_LIMIT, planRows } from './rows.js';
import type { RpcPlan, RpcRequest } from './types.js';

export interface RpcPlanOptions {
  maxRows: number;
}

const JSON_TYPES = new Set(['json', 'jsonb']);

/**
 * The overload whose argument names are the ones given (arguments with a default may be left
 * out). Unknown name or names: 404 `function_not_found` with the known signatures.
 * @example pickOverload(schema, 'add', ['a', 'b']) // the add(a integer, b integer)
 */
export function pickOverload(schema: SchemaSnapshot, name: string, given: string[]): FunctionInfo {
  const overloads = schema.functions.get(name) ?? [];
  const signatures = overloads.map((f) => f.signature);
  const fits = overloads.filter(
    (f) => given.every((n) => f.args.some((a) => a.name === n)) && f.args.every((a) => a.hasDefault || given.includes(a.name)),
  );
  if (fits.length === 0) {
    const message =
      overloads.length === 0
        ? `No function "${name}" in the public schema that the API can call (every argument needs a name).`
        : `No function "${name}" takes the arguments ${given.length ? given.join(', ') : '(none)'}; its signatures: ${signatures.join('; ')}.`;
    throw new ApiError('function_not_found', message, { function: name, arguments: given, signatures });
  }
  // f(a) and f(a, b default 1) both take {a}: the one without arguments left to defaults wins.
  const exact = fits.filter((f) => f.args.length === given.length);
  const chosen = exact.length > 0 ? exact : fits;
  if (chosen.length > 1) {
    throw new ApiError(
      'ambiguous_function',
      `Several functions "${name}" take the arguments ${given.join(', ') || '(none)'}: ${chosen.map((f) => f.signature).join('; ')}. ` +
        'Rename an argument, or drop an overload.',
      { function: name, signatures: chosen.map((f) => f.signature) },
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
  const fn = pickOverload(schema, req.function, Object.keys(req.args));
  if (req.method === 'GET' && fn.volatility === 'volatile') {
    throw new ApiError(
      'method_not_allowed',
      `The function "${fn.name}" is volatile (it may change data): call it with POST. GET calls stable and immutable functions.`,
      { function: fn.name },
    );
  }
  const args = fn.args
    .filter((arg) => Object.hasOwn(req.args, arg.name))
    .map((arg) => ({ arg, value: argumentText(fn, arg, req.args[arg.name]) }));
  const q = req.query;
  const r = fn.returns;
  const set = r.kind !== 'void' && r.set;
  const aliasColumns = r.kind !== 'row' || schema.tables.get(r.table.name) !== r.table;
  const base = { kind: 'rpc' as const, fn, args, aliasColumns, single: !set, count: false, order: [], limit: 0, offset: 0 };
  if (!set) {
    const extra = q.select !== null || q.filters.length > 0 || q.order.length > 0 || q.limit !== null || q.offset !== null;
    if (extra || q.embedded.size > 0) {
      throw new ApiError(
        'invalid_parameter',
        `The function "${fn.name}" returns ${r.kind === 'void' ? 'nothing' : 'one value'}: select, filters, order, limit and offset apply to functions that return a set.`,
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
