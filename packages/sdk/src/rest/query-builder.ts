import { FilterBuilder, type RestContext, RestRequest } from './builder.js';
import { formatSelect, initialState } from './query.js';
import type { CheckSelectOf, FilterColumns, SelectResult } from './select.js';
import type { GenericSchema, GenericTable, TableDefOf, WriteOptions } from './types.js';

/** Options of `upsert()` (supabase-js's names). */
export interface UpsertOptions extends WriteOptions {
  /** The unique key a duplicate is found on, comma-separated columns (default the primary key). */
  onConflict?: string;
  /** Skip rows whose key exists instead of updating them. */
  ignoreDuplicates?: boolean;
}

/**
 * `client.from(table)`: starts a read or a write on one table of the `public` schema
 * (docs/api.md §2, `/api/v1/db/{table}`).
 */
export class QueryBuilder<Schema extends GenericSchema, Name extends string, Table extends GenericTable = TableDefOf<Schema, Name>> {
  constructor(
    private readonly ctx: RestContext,
    private readonly table: string,
  ) {}

  /**
   * Reads rows (GET). `columns` is the select grammar — columns, `alias:column`, JSON paths
   * (`meta->>kind`), aggregates (`count()`), related tables by foreign key (`author(name)`,
   * `comments!inner(body)`) — checked against the table's columns and relations, and typed;
   * `{count: 'exact'}` also returns the total number of matching rows in `count`.
   * @example const { data } = await client.from('posts').select('id, title, author(name), comments(body)').limit(20);
   */
  select<Q extends string = '*'>(
    columns?: CheckSelectOf<Schema, Name, Q>,
    options: { count?: 'exact' } = {},
  ): FilterBuilder<FilterColumns<Schema, Name>, SelectResult<Schema, Name, Q>[]> {
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
  insert(values: Table['Insert'][], options?: WriteOptions): WriteRequest<Schema, Name, Table['Row'][], true>;
  insert(values: Table['Insert'], options?: WriteOptions): WriteRequest<Schema, Name, Table['Row'], false>;
  insert(values: Table['Insert'] | Table['Insert'][], options: WriteOptions = {}): RestRequest<unknown> {
    return new WriteRequest(this.ctx, this.write('POST', values, options));
  }

  /**
   * Creates rows, or updates those whose key exists (`ignoreDuplicates`: leaves them). Row-level
   * security applies to both: a row of another user is refused (`rls_violation`), never changed.
   * A skipped single row resolves to `data: null`.
   * @example await client.from('profiles').upsert({ id: userId, name: 'Ada' });
   * @example await client.from('tags').upsert([{ name: 'pg' }], { onConflict: 'name', ignoreDuplicates: true });
   */
  upsert(values: Table['Insert'] | Table['Insert'][], options: UpsertOptions & { returning: 'minimal' }): RestRequest<null>;
  upsert(values: Table['Insert'][], options?: UpsertOptions): WriteRequest<Schema, Name, Table['Row'][], true>;
  upsert(values: Table['Insert'], options?: UpsertOptions): WriteRequest<Schema, Name, Table['Row'] | null, false>;
  upsert(values: Table['Insert'] | Table['Insert'][], options: UpsertOptions = {}): RestRequest<unknown> {
    const state = this.write('POST', values, options);
    state.resolution = options.ignoreDuplicates ? 'ignore' : 'merge';
    state.onConflict = options.onConflict?.replace(/\s+/g, '') ?? null;
    return new WriteRequest(this.ctx, state);
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

/**
 * An insert or upsert: awaitable as it is (the written row, or rows), or with supabase-js's
 * chain: `.select(columns)` picks the columns written back (typed as a `select()` is), and
 * `.single()` / `.maybeSingle()` resolve to one row. An array of several rows with `.single()` is
 * refused before anything is sent (`too_many_rows`), so an error never follows a committed write.
 * @example const { data } = await client.from('todos').insert({ title: 'milk' }).select('id, title').single();
 */
export class WriteRequest<Schema extends GenericSchema, Name extends string, R, Many extends boolean> extends RestRequest<R> {
  select<Q extends string = '*'>(
    columns?: CheckSelectOf<Schema, Name, Q>,
  ): WriteRequest<Schema, Name, Many extends true ? SelectResult<Schema, Name, Q>[] : SelectResult<Schema, Name, Q>, Many> {
    this.state.select = formatSelect(columns);
    return this as unknown as WriteRequest<
      Schema,
      Name,
      Many extends true ? SelectResult<Schema, Name, Q>[] : SelectResult<Schema, Name, Q>,
      Many
    >;
  }

  /** One row: an array of one is unwrapped; zero rows (an upsert that skipped) is `not_found`. */
  single(): RestRequest<WrittenRow<R>> {
    this.state.expect = 'one';
    return this as unknown as RestRequest<WrittenRow<R>>;
  }

  /** Like `single()`, but zero rows resolves to `data: null`. */
  maybeSingle(): RestRequest<WrittenRow<R> | null> {
    this.state.expect = 'maybe-one';
    return this as unknown as RestRequest<WrittenRow<R> | null>;
  }
}

type WrittenRow<R> = R extends ReadonlyArray<infer E> ? E : Exclude<R, null>;
