/**
 * Compile-time description of a project's tables, in supabase-js's shape, so
 * `createClient<Database>()` checks table names, column names and row types. `plinth gen types`
 * writes one (see `@plinth/sdk/gen`). Generics stay one level deep on purpose: errors read as
 * "'titel' is not assignable to 'id' | 'title'", not as a page of inference.
 *
 * @example
 * type Database = {
 *   public: {
 *     Tables: {
 *       todos: {
 *         Row: { id: number; title: string; done: boolean | null };
 *         Insert: { id?: number; title: string; done?: boolean | null };
 *         Update: { id?: number; title?: string; done?: boolean | null };
 *       };
 *     };
 *   };
 * };
 */
import type { PlinthError } from '../types.js';

export interface GenericTable {
  Row: object;
  Insert: object;
  Update: object;
}

export interface GenericView {
  Row: object;
}

export interface GenericSchema {
  Tables: { [table: string]: GenericTable };
  Views?: { [view: string]: GenericView };
}

export interface GenericDatabase {
  public: GenericSchema;
}

// biome-ignore lint/suspicious/noExplicitAny: rows of a client created without a Database type are loose on purpose, as in supabase-js
type AnyRow = Record<string, any>;

/** The database type of `createClient(url, key)` without a type argument: any table, any column. */
export interface UntypedDatabase {
  public: { Tables: { [table: string]: { Row: AnyRow; Insert: AnyRow; Update: AnyRow } } };
}

type Schema<DB extends GenericDatabase> = DB['public'];
type ViewsOf<DB extends GenericDatabase> = NonNullable<Schema<DB>['Views']>;

/** Names `from()` accepts: tables and views of the `public` schema. */
export type TableName<DB extends GenericDatabase> = (keyof Schema<DB>['Tables'] | keyof ViewsOf<DB>) & string;

/** A table's Row/Insert/Update; a view is read-only (Insert and Update are `never`). */
export type TableDef<DB extends GenericDatabase, T extends string> = T extends keyof Schema<DB>['Tables']
  ? Schema<DB>['Tables'][T]
  : T extends keyof ViewsOf<DB>
    ? { Row: ViewsOf<DB>[T]['Row']; Insert: never; Update: never }
    : never;

/** Column names of a row type. */
export type ColumnName<Row> = keyof Row & string;

type Trim<S extends string> = S extends ` ${infer R}` ? Trim<R> : S extends `${infer R} ` ? Trim<R> : S;

/** `'id, title'` → `'id' | 'title'`. */
export type SelectedColumns<Q extends string> = Q extends `${infer Head},${infer Tail}` ? Trim<Head> | SelectedColumns<Tail> : Trim<Q>;

/** The row type a `select(Q)` returns. */
export type SelectRow<Row, Q extends string> = '*' extends SelectedColumns<Q> ? Row : { [K in SelectedColumns<Q> & keyof Row]: Row[K] };

/**
 * `Q` itself when every name in it is a column (or `*`), otherwise a message type that no
 * string literal matches, so `select('id,titel')` fails to compile and names the culprit.
 */
export type CheckSelect<Row, Q extends string> = string extends Q
  ? Q
  : [Exclude<SelectedColumns<Q>, ColumnName<Row> | '*'>] extends [never]
    ? Q
    : `unknown column: ${Exclude<SelectedColumns<Q>, ColumnName<Row> | '*'>}`;

/** What a database call resolves to. `count` is set when `{count: 'exact'}` was asked for. */
export type RestResult<T> =
  | { data: T; error: null; count: number | null; status: number }
  | { data: null; error: PlinthError; count: null; status: number };

/** Options of `order()`. */
export interface OrderOptions {
  ascending?: boolean;
  /** Omitted: the database default (nulls last ascending, first descending). */
  nullsFirst?: boolean;
}

/** Options of writes. `returning: 'minimal'` sends `Prefer: return=minimal` and resolves `data` to null. */
export interface WriteOptions {
  count?: 'exact';
  returning?: 'representation' | 'minimal';
}
