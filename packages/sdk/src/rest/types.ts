/**
 * Compile-time description of a project's tables and functions, in supabase-js's shape, so
 * `createClient<Database>()` checks table names, column names, row types, embedded relations and
 * function arguments. `plinth gen types` writes one (see `@plinth/sdk/gen`). Generics stay
 * shallow on purpose: errors read as "'titel' is not assignable to 'unknown column: titel'", not
 * as a page of inference.
 *
 * @example
 * type Database = {
 *   public: {
 *     Tables: {
 *       todos: {
 *         Row: { id: number; title: string; done: boolean | null; list_id: number };
 *         Insert: { id?: number; title: string; done?: boolean | null; list_id: number };
 *         Update: { id?: number; title?: string; done?: boolean | null; list_id?: number };
 *         Relationships: { list: { table: 'lists'; cardinality: 'one' } };
 *       };
 *     };
 *     Functions: { count_open: { Args: { list: number }; Returns: number; SetOf: false } };
 *   };
 * };
 */
import type { PlinthError } from '../types.js';

/** How `select()` may embed a related table, by the name it uses (`author`, `authors!posts_editor_id_fkey`). */
export interface GenericRelationship {
  table: string;
  /** An object (or null) for `one`, an array for `many`. */
  cardinality: 'one' | 'many';
}

export interface GenericTable {
  Row: object;
  Insert: object;
  Update: object;
  Relationships?: { [name: string]: GenericRelationship };
}

/** A function of `public` (`/api/v1/rpc/{name}`); overloads are a union of these. */
export interface GenericFunction {
  Args: object;
  /** The value, row, or (with `SetOf`) each row of the set it returns. */
  Returns: unknown;
  SetOf?: boolean;
}

export interface GenericView {
  Row: object;
}

export interface GenericSchema {
  Tables: { [table: string]: GenericTable };
  Views?: { [view: string]: GenericView };
  Functions?: { [name: string]: GenericFunction };
}

export interface GenericDatabase {
  public: GenericSchema;
}

// biome-ignore lint/suspicious/noExplicitAny: rows of a client created without a Database type are loose on purpose, as in supabase-js
type AnyRow = Record<string, any>;

/** The database type of `createClient(url, key)` without a type argument: any table, any column, any function. */
export interface UntypedDatabase {
  public: {
    Tables: { [table: string]: { Row: AnyRow; Insert: AnyRow; Update: AnyRow } };
    // biome-ignore lint/suspicious/noExplicitAny: as loose as the rows
    Functions: { [name: string]: { Args: AnyRow; Returns: any; SetOf: boolean } };
  };
}

type Schema<DB extends GenericDatabase> = DB['public'];

/** Names `rpc()` accepts. */
export type FunctionName<DB extends GenericDatabase> = keyof NonNullable<Schema<DB>['Functions']> & string;

/** The overloads of a function. */
export type FunctionDef<DB extends GenericDatabase, F extends string> = NonNullable<Schema<DB>['Functions']>[F];

/** What a call with `A` returns: the `Returns` of the overloads whose `Args` take `A`. */
export type FunctionResult<Fn, A> = Fn extends { Args: infer X; Returns: infer R }
  ? A extends X
    ? { returns: R; set: Fn extends { SetOf: infer S } ? S : false }
    : never
  : never;

type ViewsOf<DB extends GenericDatabase> = NonNullable<Schema<DB>['Views']>;

/** Names `from()` accepts: tables and views of the `public` schema. */
export type TableName<DB extends GenericDatabase> = (keyof Schema<DB>['Tables'] | keyof ViewsOf<DB>) & string;

/** A table's Row/Insert/Update in a schema; a view is read-only (Insert and Update are `never`). */
export type TableDefOf<S extends GenericSchema, T extends string> = T extends keyof S['Tables']
  ? S['Tables'][T]
  : T extends keyof NonNullable<S['Views']>
    ? { Row: NonNullable<S['Views']>[T]['Row']; Insert: never; Update: never }
    : never;

/** A table's Row/Insert/Update; a view is read-only (Insert and Update are `never`). */
export type TableDef<DB extends GenericDatabase, T extends string> = TableDefOf<Schema<DB>, T>;

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
