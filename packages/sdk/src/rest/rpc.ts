import { FilterBuilder, type RestContext } from './builder.js';
import { formatSelect, formatValue, initialState } from './query.js';
import type { SelectRow } from './types.js';

/** Options of `rpc()`. */
export interface RpcOptions {
  /**
   * Call with GET (the function must be `stable` or `immutable`): arguments go in the query
   * string as text, so arrays and objects are better sent with the default POST.
   */
  get?: boolean;
  /** Fill `count` with the number of rows a set-returning function gave (before limit). */
  count?: 'exact';
}

/**
 * A function call (`/api/v1/rpc/{function}`). A function returning a set takes `select()`,
 * filters, `order()`, `limit()`, `range()` like a table; any other answers its value.
 */
export class RpcBuilder<Row, R> extends FilterBuilder<Row, R> {
  /**
   * The keys of each returned row (the select grammar; embedding works when the function
   * returns rows of a table).
   * @example await client.rpc('posts_by', { author: 1 }).select('id, title').order('id');
   */
  select<Q extends string>(
    columns: Q,
    // biome-ignore lint/suspicious/noExplicitAny: embedded relations of a function's rows are not typed here
  ): RpcBuilder<Row, (Q extends `${string}(${string}` ? Record<string, any> : SelectRow<Row, Q>)[]> {
    this.state.select = formatSelect(columns);
    return this as never;
  }
}

/**
 * The builder of one call: POST with the arguments as the body, or GET with them as text.
 * @example rpcBuilder(ctx, 'add', { a: 1, b: 2 }, {})
 */
export function rpcBuilder<Row, R>(ctx: RestContext, fn: string, args: object, options: RpcOptions): RpcBuilder<Row, R> {
  const state = initialState(options.get ? 'GET' : 'POST', fn, `/api/v1/rpc/${encodeURIComponent(fn)}`);
  if (options.get) for (const [name, value] of Object.entries(args)) state.filters.push([name, formatValue(value)]);
  else state.body = args;
  state.count = options.count === 'exact';
  return new RpcBuilder<Row, R>(ctx, state);
}
