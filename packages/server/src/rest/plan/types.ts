import type { AggregateFunction } from '@plinth/shared';
import type { IsValue, Preferences, QuantifiableOperator, QueryAst, ScalarOperator, TextQueryMode } from '../request/index.js';
import type { ColumnInfo, ComputedRelation, FunctionArg, FunctionInfo, Relation, TableInfo } from '../schema-cache/index.js';

/** What the client asked for, after parsing and before the schema is consulted. */
export interface RestRequest {
  action: 'read' | 'create' | 'update' | 'delete';
  table: string;
  /** The `/{pk}` path segment, or null for the collection. */
  pk: string | null;
  query: QueryAst;
  prefer: Preferences;
  body?: unknown;
  /** The schema (a profile the project exposes, `Accept-Profile`); `public` when absent. */
  schema?: string;
}

/** `/api/v1/rpc/{function}`: the arguments come from the body (POST) or the query (GET). */
export interface RpcRequest {
  function: string;
  /** The schema (a profile the project exposes, `Content-Profile`); `public` when absent. */
  schema?: string;
  method: 'GET' | 'POST';
  query: QueryAst;
  prefer: Preferences;
  /** The named arguments: the JSON body (POST) or the query's arguments as strings (GET). */
  args: Record<string, unknown>;
  /**
   * A POST's body as sent and its media type: what a function whose one argument has no name
   * (`f(json)`, `f(text)`…) is given whole, PostgREST's rule. Without it such a function gets
   * the JSON of `args`.
   */
  body?: { media: RpcBodyMedia; text: string };
  /**
   * How overloads that all fit are told apart: `prefer-exact` (the default, /api/v1) takes the
   * one whose arguments are exactly the given names; `postgrest` refuses them as ambiguous.
   */
  overloads?: 'prefer-exact' | 'postgrest';
}

/** The media types of a body a function with one unnamed argument may be given (json also fits jsonb). */
export type RpcBodyMedia = 'json' | 'text' | 'xml' | 'bytea';

/** One step of a JSON path: `->key` (json) or `->>key` (text); a key of digits is an array index. */
export interface JsonStep {
  key: string;
  text: boolean;
}

/** A filter whose column was found in the schema cache; `path` is a JSON path into it. */
export type PlannedFilter = (
  | { op: ScalarOperator; column: ColumnInfo; value: string }
  | { op: 'in'; column: ColumnInfo; value: string[] }
  | { op: 'is'; column: ColumnInfo; value: IsValue }
  | { op: 'fts'; column: ColumnInfo; value: string; config: string | null; mode?: TextQueryMode }
  | { op: 'any' | 'all'; compare: QuantifiableOperator; column: ColumnInfo; value: string[] }
) & { path?: JsonStep[]; negate?: boolean };

/** Filters, `or`/`and` groups, and the `exists` an `!inner` embedding adds to its parent. */
export type PlannedCondition =
  | PlannedFilter
  | { op: 'and' | 'or'; negate: boolean; items: PlannedCondition[] }
  | { op: 'exists'; embed: EmbedPlan };

export interface PlannedOrder {
  /** The column (and JSON path) sorted by; null when sorting by an aggregate's output key. */
  column: ColumnInfo | null;
  path?: JsonStep[];
  /** An aggregate's output key (`order=count.desc` after `select=status,count()`). */
  output?: string;
  desc: boolean;
  nulls: 'first' | 'last' | null;
}

/** One key of each returned object. */
export type OutputItem =
  /** `cast`: a type name checked by the plan stage (`select=id::text`). */
  | { kind: 'column'; key: string; column: ColumnInfo; path: JsonStep[]; cast?: string }
  | { kind: 'aggregate'; key: string; fn: AggregateFunction; column: ColumnInfo | null; cast?: string }
  | { kind: 'embed'; key: string; embed: EmbedPlan }
  /**
   * One key of a spread relation (`...author(name)`): `item` is planned against the relation's
   * table; the value is that item of the one related row (null when none), or for a to-many
   * relation the array of its values over the related rows.
   */
  | { kind: 'spread'; key: string; embed: EmbedPlan; item: OutputItem };

/** An embedded relation: its rows under its own filters and paging, joined to the parent's row. */
export interface EmbedPlan {
  /** By foreign key (or join table), or a computed relationship: a function of the parent's row. */
  relation: Relation | ComputedRelation;
  table: TableInfo;
  /** Keys of each embedded object; empty for a relation that only filters (`author!inner()`). */
  output: OutputItem[];
  filters: PlannedCondition[];
  order: PlannedOrder[];
  limit: number | null;
  offset: number | null;
  /** `!inner`: parents without a matching row are left out. */
  inner: boolean;
}

interface PlanBase {
  table: TableInfo;
  /** `/{pk}` (and a create with an object body): the answer is one object, 404 when absent. */
  single: boolean;
  filters: PlannedCondition[];
  /** Keys sent back; null for `Prefer: return=minimal`. */
  returning: OutputItem[] | null;
}

export interface ReadPlan extends PlanBase {
  kind: 'read';
  returning: OutputItem[];
  order: PlannedOrder[];
  limit: number;
  offset: number;
  count: boolean;
}

export interface InsertPlan extends PlanBase {
  kind: 'insert';
  /** Target columns: the union of the payload's keys (or `columns=`); empty → default values. */
  target: ColumnInfo[];
  /** The rows as JSON text of an array, bound as one parameter. */
  payload: string;
  rows: number;
  /**
   * `missing=default`: each object's JSON and keys, so a target column an object lacks takes its
   * default (`DEFAULT` in that row of a VALUES list) rather than null.
   */
  perRow?: Array<{ json: string; keys: string[] }>;
  /** An upsert (`Prefer: resolution=…`): on which key, and what a conflict does. No columns: any key (ignore only). */
  conflict: { columns: ColumnInfo[]; action: 'merge' | 'ignore' } | null;
}

export interface UpdatePlan extends PlanBase {
  kind: 'update';
  target: ColumnInfo[];
  /** The object as JSON text, bound as one parameter. */
  payload: string;
}

export interface DeletePlan extends PlanBase {
  kind: 'delete';
}

/** A function call: one argument value each (text, or null), cast to the argument's type in SQL. */
export interface RpcPlan extends PlanBase {
  /** The schema the function is in: its call is qualified by it. */
  schema: string;
  kind: 'rpc';
  fn: FunctionInfo;
  args: Array<{ arg: FunctionArg; value: string | null }>;
  /** How the answer is made: a JSON value, a row, or an array of either (set results take the table's parameters). */
  result: 'value' | 'row' | 'values' | 'rows';
  /**
   * The result's columns are named in SQL (`f(…) as _1("x", "y")`): a scalar's, and a row type
   * that is not a table of public (OUT parameters, `returns table (…)`, a composite type).
   */
  aliasColumns: boolean;
  returning: OutputItem[];
  order: PlannedOrder[];
  limit: number;
  offset: number;
  count: boolean;
}

export type Plan = ReadPlan | InsertPlan | UpdatePlan | DeletePlan | RpcPlan;
