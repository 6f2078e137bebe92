import { clientError } from '../errors.js';
import { type HttpConfig, send } from '../fetch.js';
import { buildQuery, formatList, formatOrder, formatValue, parseCount, preferHeader, type RequestState } from './query.js';
import type { ColumnName, OrderOptions, RestResult } from './types.js';

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
      path: `/api/v1/db/${encodeURIComponent(this.state.table)}`,
      query: buildQuery(this.state),
      body: this.state.body,
      token,
      headers: prefer ? { prefer } : undefined,
    });
  }

  /** `single()` / `maybeSingle()` are decided here, on the rows the server sent. */
  private shape(data: unknown, count: number | null, status: number): RestResult<R> {
    const { expect } = this.state;
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
 * A request that still takes filters and modifiers: `select()`, `update()`, `delete()`.
 * Filter columns are checked against the table's Row type; values against the column's type.
 */
export class FilterBuilder<Row, R> extends RestRequest<R> {
  /** @example client.from('todos').select().eq('id', 1) // ?eq.id=1 */
  eq<K extends ColumnName<Row>>(column: K, value: NonNullable<Row[K]>): this {
    return this.filter('eq', column, formatValue(value));
  }

  /** @example .neq('status', 'done') // ?neq.status=done */
  neq<K extends ColumnName<Row>>(column: K, value: NonNullable<Row[K]>): this {
    return this.filter('neq', column, formatValue(value));
  }

  /** @example .gt('priority', 2) // ?gt.priority=2 */
  gt<K extends ColumnName<Row>>(column: K, value: NonNullable<Row[K]>): this {
    return this.filter('gt', column, formatValue(value));
  }

  /** @example .gte('priority', 2) // ?gte.priority=2 */
  gte<K extends ColumnName<Row>>(column: K, value: NonNullable<Row[K]>): this {
    return this.filter('gte', column, formatValue(value));
  }

  /** @example .lt('created_at', '2024-01-01') // ?lt.created_at=2024-01-01 */
  lt<K extends ColumnName<Row>>(column: K, value: NonNullable<Row[K]>): this {
    return this.filter('lt', column, formatValue(value));
  }

  /** @example .lte('priority', 5) // ?lte.priority=5 */
  lte<K extends ColumnName<Row>>(column: K, value: NonNullable<Row[K]>): this {
    return this.filter('lte', column, formatValue(value));
  }

  /** SQL LIKE; `%` and `_` are wildcards (`*` also means `%`). @example .like('title', '%milk%') */
  like(column: ColumnName<Row>, pattern: string): this {
    return this.filter('like', column, pattern);
  }

  /** Case-insensitive LIKE. @example .ilike('title', '%MILK%') */
  ilike(column: ColumnName<Row>, pattern: string): this {
    return this.filter('ilike', column, pattern);
  }

  /** @example .in('status', ['open', 'blocked']) // ?in.status=open,blocked */
  in<K extends ColumnName<Row>>(column: K, values: ReadonlyArray<NonNullable<Row[K]>>): this {
    return this.filter('in', column, formatList(values));
  }

  /** `IS NULL`, `IS TRUE`, `IS FALSE`. @example .is('deleted_at', null) // ?is.deleted_at=null */
  is(column: ColumnName<Row>, value: null | boolean): this {
    return this.filter('is', column, String(value));
  }

  /** Adds a sort key; call again for the next key. @example .order('done').order('created_at', { ascending: false }) */
  order(column: ColumnName<Row>, options: OrderOptions = {}): this {
    this.state.order.push(formatOrder(column, options));
    return this;
  }

  /** @example .limit(10) */
  limit(count: number): this {
    this.state.limit = count;
    return this;
  }

  /** @example .offset(20) */
  offset(count: number): this {
    this.state.offset = count;
    return this;
  }

  /** Rows `from` to `to`, both inclusive and 0-based. @example .range(0, 9) // ?limit=10&offset=0 */
  range(from: number, to: number): this {
    this.state.offset = from;
    this.state.limit = Math.max(0, to - from + 1);
    return this;
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

  private filter(op: string, column: string, value: string): this {
    this.state.filters.push([`${op}.${column}`, value]);
    return this;
  }
}
