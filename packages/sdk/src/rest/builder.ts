import { clientError } from '../errors.js';
import { type HttpConfig, send } from '../fetch.js';
import { buildQuery, filterName, formatList, formatOrder, formatValue, parseCount, preferHeader, type RequestState } from './query.js';
import type { ColumnName, OrderOptions, RestResult } from './types.js';

/** The operators `not()` and `filter()` take (docs/api.md, "Filters"). */
export type FilterOperator = 'eq' | 'neq' | 'gt' | 'lt' | 'gte' | 'lte' | 'like' | 'ilike' | 'in' | 'is' | 'fts' | `fts(${string})`;

/** Applies to an embedded relation instead of the rows: `{ referencedTable: 'comments' }` (supabase-js's name). */
export interface ReferencedTable {
  referencedTable?: string;
}

/** How database requests get their bearer token (from the auth session, refreshed when due). */
export interface RestContext {
  http: HttpConfig;
  accessToken(): Promise<string | null>;
  /** Forces a refresh; resolves to the new access token or null. */
  refresh(): Promise<string | null>;
}

type Element<R> = R extends ReadonlyArray<infer E> ? E : R;

/**
 * One database request, sent when awaited (each `await` sends it again). Resolves to
 * `{data, error, count, status}` and never rejects.
 */
export class RestRequest<R> implements PromiseLike<RestResult<R>> {
  constructor(
    protected readonly ctx: RestContext,
    protected readonly state: RequestState,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: the builder is awaitable by design, like supabase-js's
  then<A = RestResult<R>, B = never>(
    onfulfilled?: ((value: RestResult<R>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.execute().then(onfulfilled, onrejected);
  }

  /**
   * Sends the request. A `token_expired` answer (the server's clock ahead of ours) triggers one
   * refresh and one retry; the server checks the token before touching data, so this is safe for writes.
   * @example const { data, error } = await client.from('todos').select().execute();
   */
  async execute(): Promise<RestResult<R>> {
    // `.single()` on a write of several rows: refused before the write, not after it committed.
    if (this.state.expect !== 'as-is' && Array.isArray(this.state.body) && this.state.body.length > 1) {
      const error = clientError(
        'too_many_rows',
        `Expected one row from "${this.state.table}", but ${this.state.body.length} are written.`,
        400,
      );
      return { data: null, error, count: null, status: 400 };
    }
    let token = await this.ctx.accessToken();
    let res = await this.sendOnce(token);
    if (res.error?.code === 'token_expired' && token) {
      token = await this.ctx.refresh();
      if (token) res = await this.sendOnce(token);
    }
    if (res.error) return { data: null, error: res.error, count: null, status: res.status };
    const count = parseCount(res.headers.get('content-range'));
    return this.shape(this.state.minimal ? null : res.data, count, res.status);
  }

  private sendOnce(token: string | null) {
    const prefer = preferHeader(this.state);
    return send<unknown>(this.ctx.http, {
      method: this.state.method,
      path: this.state.path,
      query: buildQuery(this.state),
      body: this.state.body,
      token,
      headers: prefer ? { prefer } : undefined,
    });
  }

  /** `single()` / `maybeSingle()` are decided here, on the rows the server sent. */
  private shape(data: unknown, count: number | null, status: number): RestResult<R> {
    const { expect } = this.state;
    if (expect === 'one' && data === null && this.state.method !== 'GET') {
      // A single upsert that skipped its row (ignoreDuplicates) has none to give.
      const error = clientError('not_found', `Expected one row from "${this.state.table}", got none.`, 404);
      return { data: null, error, count: null, status };
    }
    if (expect === 'as-is' || !Array.isArray(data)) return { data: data as R, error: null, count, status };
    if (data.length > 1) {
      const error = clientError('too_many_rows', `Expected one row from "${this.state.table}", got several.`, 400);
      return { data: null, error, count: null, status };
    }
    if (data.length === 0 && expect === 'one') {
      const error = clientError('not_found', `Expected one row from "${this.state.table}", got none.`, 404);
      return { data: null, error, count: null, status };
    }
    return { data: (data[0] ?? null) as R, error: null, count, status };
  }
}

/**
 * A request that still takes filters and modifiers: `select()`, `update()`, `delete()`, `rpc()`.
 * Filter columns are checked against `Cols`: the table's columns and, after `select()`,
 * `<relation>.<column>` of the relations it may embed. Values are checked against the column's type.
 */
export class FilterBuilder<Cols, R> extends RestRequest<R> {
  /** @example client.from('todos').select().eq('id', 1) // ?eq.id=1; .eq('comments.approved', true) // ?comments.eq.approved=true */
  eq<K extends ColumnName<Cols>>(column: K, value: NonNullable<Cols[K]>): this {
    return this.filter(column, 'eq', formatValue(value));
  }

  /** @example .neq('status', 'done') // ?neq.status=done */
  neq<K extends ColumnName<Cols>>(column: K, value: NonNullable<Cols[K]>): this {
    return this.filter(column, 'neq', formatValue(value));
  }

  /** @example .gt('priority', 2) // ?gt.priority=2 */
  gt<K extends ColumnName<Cols>>(column: K, value: NonNullable<Cols[K]>): this {
    return this.filter(column, 'gt', formatValue(value));
  }

  /** @example .gte('priority', 2) // ?gte.priority=2 */
  gte<K extends ColumnName<Cols>>(column: K, value: NonNullable<Cols[K]>): this {
    return this.filter(column, 'gte', formatValue(value));
  }

  /** @example .lt('created_at', '2024-01-01') // ?lt.created_at=2024-01-01 */
  lt<K extends ColumnName<Cols>>(column: K, value: NonNullable<Cols[K]>): this {
    return this.filter(column, 'lt', formatValue(value));
  }

  /** @example .lte('priority', 5) // ?lte.priority=5 */
  lte<K extends ColumnName<Cols>>(column: K, value: NonNullable<Cols[K]>): this {
    return this.filter(column, 'lte', formatValue(value));
  }

  /** SQL LIKE; `%` and `_` are wildcards (`*` also means `%`). @example .like('title', '%milk%') */
  like(column: ColumnName<Cols>, pattern: string): this {
    return this.filter(column, 'like', pattern);
  }

  /** Case-insensitive LIKE. @example .ilike('title', '%MILK%') */
  ilike(column: ColumnName<Cols>, pattern: string): this {
    return this.filter(column, 'ilike', pattern);
  }

  /** @example .in('status', ['open', 'blocked']) // ?in.status=open,blocked */
  in<K extends ColumnName<Cols>>(column: K, values: ReadonlyArray<NonNullable<Cols[K]>>): this {
    return this.filter(column, 'in', formatList(values));
  }

  /** `IS NULL`, `IS TRUE`, `IS FALSE`. @example .is('deleted_at', null) // ?is.deleted_at=null */
  is(column: ColumnName<Cols>, value: null | boolean): this {
    return this.filter(column, 'is', String(value));
  }

  /**
   * The negation of any filter. `in` takes an array.
   * @example .not('status', 'in', ['done', 'archived']) // ?not.in.status=done,archived
   * @example .not('deleted_at', 'is', null) // ?not.is.deleted_at=null
   */
  not(column: ColumnName<Cols>, operator: FilterOperator, value: unknown): this {
    const v = operator === 'in' && Array.isArray(value) ? formatList(value) : formatValue(value);
    return this.filter(column, `not.${operator}`, v);
  }

  /**
   * Rows matching at least one condition, written `<op>.<column>.<value>` (operator first, as
   * everywhere in this API), nestable with `and(…)`; double-quote a value holding `,` `.` `(` `)`.
   * @example .or('eq.status.open,and(gt.priority.3,is.owner.null)') // ?or=(eq.status.open,and(…))
   * @example .or('eq.approved.true,eq.author_id.7', { referencedTable: 'comments' }) // ?comments.or=(…)
   */
  or(conditions: string, options: ReferencedTable = {}): this {
    const name = options.referencedTable ? `${options.referencedTable}.or` : 'or';
    this.state.filters.push([name, `(${conditions})`]);
    return this;
  }

  /**
   * Full-text search with websearch_to_tsquery syntax (`"a phrase" or word -excluded`), on a
   * text or tsvector column; `config` picks a text search configuration.
   * @example .textSearch('body', 'cats -dogs', { config: 'english' }) // ?fts(english).body=cats%20-dogs
   */
  textSearch(column: ColumnName<Cols>, query: string, options: { config?: string } = {}): this {
    return this.filter(column, options.config ? `fts(${options.config})` : 'fts', query);
  }

  /** Any operator, the value as the server reads it. @example .filter('tags', 'in', 'a,b') // ?in.tags=a,b */
  filter(column: string, operator: FilterOperator | `not.${FilterOperator}`, value: string): this {
    this.state.filters.push([filterName(operator, column), value]);
    return this;
  }

  /**
   * Adds a sort key; call again for the next key. With `referencedTable`, sorts that embedded
   * relation's array instead.
   * @example .order('done').order('created_at', { ascending: false })
   * @example .order('created_at', { referencedTable: 'comments', ascending: false }) // ?comments.order=created_at.desc
   */
  order(column: ColumnName<Cols>, options?: OrderOptions): this;
  order(column: string, options: OrderOptions & { referencedTable: string }): this;
  order(column: string, options: OrderOptions & ReferencedTable = {}): this {
    const term = formatOrder(column, options);
    if (!options.referencedTable) {
      this.state.order.push(term);
      return this;
    }
    const key = `${options.referencedTable}.order`;
    const terms = this.state.embedded.get(key);
    this.state.embedded.set(key, Array.isArray(terms) ? [...terms, term] : [term]);
    return this;
  }

  /** @example .limit(10); .limit(3, { referencedTable: 'comments' }) // ?comments.limit=3 */
  limit(count: number, options: ReferencedTable = {}): this {
    if (options.referencedTable) this.state.embedded.set(`${options.referencedTable}.limit`, count);
    else this.state.limit = count;
    return this;
  }

  /** @example .offset(20) */
  offset(count: number, options: ReferencedTable = {}): this {
    if (options.referencedTable) this.state.embedded.set(`${options.referencedTable}.offset`, count);
    else this.state.offset = count;
    return this;
  }

  /** Rows `from` to `to`, both inclusive and 0-based. @example .range(0, 9) // ?limit=10&offset=0 */
  range(from: number, to: number, options: ReferencedTable = {}): this {
    this.offset(from, options);
    return this.limit(Math.max(0, to - from + 1), options);
  }

  /**
   * Resolves to one row instead of an array; zero rows is `not_found`, several `too_many_rows`.
   * Decided client-side: a read asks for at most 2 rows (unless you set a limit), so no primary
   * key needs to be known.
   * @example const { data } = await client.from('todos').select().eq('id', 1).single();
   */
  single(): RestRequest<Element<R>> {
    return this.expectOne('one') as unknown as RestRequest<Element<R>>;
  }

  /** Like `single()`, but zero rows resolves to `data: null` without an error. @example .maybeSingle() */
  maybeSingle(): RestRequest<Element<R> | null> {
    return this.expectOne('maybe-one') as unknown as RestRequest<Element<R> | null>;
  }

  private expectOne(expect: 'one' | 'maybe-one'): this {
    this.state.expect = expect;
    if (this.state.method === 'GET' && this.state.limit === null) this.state.limit = 2;
    return this;
  }
}
