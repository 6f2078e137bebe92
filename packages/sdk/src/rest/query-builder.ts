import { FilterBuilder, type RestContext, RestRequest } from './builder.js';
import { formatSelect, initialState } from './query.js';
import type { CheckSelect, GenericTable, SelectRow, WriteOptions } from './types.js';

/**
 * `client.from(table)`: starts a read or a write on one table of the `public` schema
 * (docs/api.md §2, `/api/v1/db/{table}`).
 */
export class QueryBuilder<Table extends GenericTable> {
  constructor(
    private readonly ctx: RestContext,
    private readonly table: string,
  ) {}

  /**
   * Reads rows (GET). `columns` is a comma-separated list checked against the table's columns;
   * `{count: 'exact'}` also returns the total number of matching rows in `count`.
   * @example const { data, count } = await client.from('todos').select('id,title', { count: 'exact' }).range(0, 9);
   */
  select<Q extends string = '*'>(
    columns?: CheckSelect<Table['Row'], Q>,
    options: { count?: 'exact' } = {},
  ): FilterBuilder<Table['Row'], SelectRow<Table['Row'], Q>[]> {
    const state = initialState('GET', this.table);
    state.select = formatSelect(columns);
    state.count = options.count === 'exact';
    return new FilterBuilder(this.ctx, state);
  }

  /**
   * Creates one row (resolves to the row) or many (an array of rows, at most 1000).
   * @example const { data, error } = await client.from('todos').insert({ title: 'Buy milk' });
   */
  insert(values: Table['Insert'][], options: WriteOptions & { returning: 'minimal' }): RestRequest<null>;
  insert(values: Table['Insert'], options: WriteOptions & { returning: 'minimal' }): RestRequest<null>;
  insert(values: Table['Insert'][], options?: WriteOptions): RestRequest<Table['Row'][]>;
  insert(values: Table['Insert'], options?: WriteOptions): RestRequest<Table['Row']>;
  insert(values: Table['Insert'] | Table['Insert'][], options: WriteOptions = {}): RestRequest<unknown> {
    return new RestRequest(this.ctx, this.write('POST', values, options));
  }

  /**
   * Changes every row that matches the filters that follow; resolves to the changed rows. The
   * server refuses an update without a filter (`filter_required`).
   * @example const { data } = await client.from('todos').update({ done: true }).eq('id', 1);
   */
  update(values: Table['Update'], options: WriteOptions & { returning: 'minimal' }): FilterBuilder<Table['Row'], null>;
  update(values: Table['Update'], options?: WriteOptions): FilterBuilder<Table['Row'], Table['Row'][]>;
  update(values: Table['Update'], options: WriteOptions = {}): FilterBuilder<Table['Row'], unknown> {
    return new FilterBuilder(this.ctx, this.write('PATCH', values, options));
  }

  /**
   * Deletes every row that matches the filters that follow; resolves to the deleted rows.
   * @example const { data } = await client.from('todos').delete().eq('id', 1);
   */
  delete(options: WriteOptions & { returning: 'minimal' }): FilterBuilder<Table['Row'], null>;
  delete(options?: WriteOptions): FilterBuilder<Table['Row'], Table['Row'][]>;
  delete(options: WriteOptions = {}): FilterBuilder<Table['Row'], unknown> {
    return new FilterBuilder(this.ctx, this.write('DELETE', undefined, options));
  }

  private write(method: 'POST' | 'PATCH' | 'DELETE', body: unknown, options: WriteOptions) {
    const state = initialState(method, this.table);
    state.body = body;
    state.count = options.count === 'exact';
    state.minimal = options.returning === 'minimal';
    return state;
  }
}
