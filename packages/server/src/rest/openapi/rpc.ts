/**
 * OpenAPI path items of the functions (`/api/v1/rpc/{function}`): the arguments as the request
 * body's schema (and as query parameters for GET), the result as the answer's schema, and every
 * overload with its own arguments and result under `x-plinth-overloads` (what `plinth gen types`
 * reads to type `rpc()`).
 */
import type { ColumnInfo, FunctionInfo, TableInfo } from '../schema-cache/index.js';
import { filters, logicParams, refTo, SELECT_GRAMMAR } from './paths.js';
import { columnSchema, type JsonSchema, tableSchemas } from './schema.js';

const error = { $ref: '#/components/responses/Error' };
const ERRORS = { '400': error, '401': error, '403': error, '404': error, '405': error, '409': error, '5XX': error };

/** An argument's schema: its type's JSON (arrays as arrays, json as any value). */
function argumentSchema(fn: FunctionInfo, i: number): JsonSchema {
  const a = fn.args[i];
  const col: ColumnInfo = {
    name: a.name,
    type: a.type,
    castType: a.type,
    udt: a.udt,
    category: a.category,
    notNull: true,
    hasDefault: a.hasDefault,
    isPk: false,
    generated: false,
    enumValues: null,
    comment: null,
  };
  return columnSchema(col);
}

function argumentsSchema(fn: FunctionInfo): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  fn.args.forEach((a, i) => {
    properties[a.name] = argumentSchema(fn, i);
  });
  const required = fn.args.filter((a) => !a.hasDefault).map((a) => a.name);
  return {
    type: 'object',
    title: fn.signature,
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}

/** The component key of a table's row, when the document has one (else the row is described inline). */
export type RowKey = (table: TableInfo) => string | null;

/** The JSON a call answers with. */
function resultSchema(fn: FunctionInfo, rowKey: RowKey): JsonSchema | null {
  const r = fn.returns;
  if (r.kind === 'void') return null;
  let one: JsonSchema;
  if (r.kind === 'scalar') {
    one = columnSchema({ ...r.column, notNull: false });
  } else {
    const key = rowKey(r.table);
    one = key ? refTo(key) : tableSchemas(r.table).row;
    if (!r.set) one = { anyOf: [one, { type: 'null' }] };
  }
  return r.set ? { type: 'array', items: one } : one;
}

const isSet = (fn: FunctionInfo) => fn.returns.kind !== 'void' && fn.returns.set;

/**
 * The path item of one function name (all its overloads).
 * @example rpcPath('add', [addInfo], () => null) // { post: { operationId: 'rpc_add', … }, get: { … } }
 */
export function rpcPath(name: string, overloads: FunctionInfo[], rowKey: RowKey): JsonSchema {
  const safe = name.replace(/[^A-Za-z0-9_]/g, '_');
  const bodies = overloads.map(argumentsSchema);
  const results = overloads.map((fn) => resultSchema(fn, rowKey));
  const set = overloads.some(isSet);
  const described = overloads.map((f) => f.comment).find((c) => c) ?? undefined;
  const shaping: JsonSchema[] = set
    ? [
        { name: 'select', in: 'query', required: false, schema: { type: 'string' }, description: SELECT_GRAMMAR },
        { name: 'order', in: 'query', required: false, schema: { type: 'string' }, description: 'e.g. `id.desc`.' },
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 100 } },
        { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } },
        {
          name: 'Prefer',
          in: 'header',
          required: false,
          schema: { type: 'string' },
          description: '`count=exact` fills the total of Content-Range.',
        },
        ...filtersOf(overloads),
      ]
    : [];
  const ok: JsonSchema = {};
  const values = results.filter((r): r is JsonSchema => r !== null);
  if (values.length) {
    ok['200'] = {
      description: set ? 'The rows (or values) the function returned.' : 'What the function returned.',
      content: { 'application/json': { schema: values.length === 1 ? values[0] : { anyOf: values } } },
    };
  }
  if (values.length < results.length) ok['204'] = { description: 'The function returns void.' };
  const signatures = overloads.map((f) => f.signature).join('; ');
  const item: JsonSchema = {
    post: {
      operationId: `rpc_${safe}`,
      tags: ['rpc'],
      summary: `Call ${signatures}`,
      ...(described ? { description: described } : {}),
      parameters: shaping,
      requestBody: {
        required: overloads.every((f) => f.args.some((a) => !a.hasDefault)),
        content: { 'application/json': { schema: bodies.length === 1 ? bodies[0] : { oneOf: bodies } } },
      },
      responses: { ...ok, ...ERRORS },
      'x-plinth-overloads': overloads.map((fn, i) => ({
        signature: fn.signature,
        args: bodies[i],
        returns: results[i],
        set: isSet(fn),
        volatility: fn.volatility,
      })),
    },
  };
  // GET: when every overload is stable or immutable (it cannot change data), with the arguments as text.
  if (overloads.every((f) => f.volatility !== 'volatile')) {
    const names = [...new Set(overloads.flatMap((f) => f.args.map((a) => a.name)))];
    const args = names.map((n) => {
      const inAll = overloads.every((f) => f.args.some((a) => a.name === n && !a.hasDefault));
      return {
        name: n,
        in: 'query',
        required: inAll,
        schema: { type: 'string' },
        description: `The argument ${n}, in the text form of its type (arrays as \`{a,b}\`, JSON as JSON).`,
      };
    });
    item.get = {
      operationId: `rpc_${safe}_get`,
      tags: ['rpc'],
      summary: `Call ${signatures} (stable or immutable: by GET too)`,
      parameters: [...args, ...shaping.filter((p) => !names.includes(String(p.name)))],
      responses: { ...ok, ...ERRORS },
    };
  }
  return item;
}

/** Filters on the columns of the rows a set-returning function gives (those of its first row-returning overload). */
function filtersOf(overloads: FunctionInfo[]): JsonSchema[] {
  for (const f of overloads) {
    if (f.returns.kind === 'row' && f.returns.set) return filters(f.returns.table.columnList);
    if (f.returns.kind === 'scalar' && f.returns.set) return filters([f.returns.column]);
  }
  return logicParams;
}
