import type { ColumnInfo, TableInfo } from '../schema-cache/index.js';
import type { IsValue, Preferences, QueryAst, ScalarOperator } from '../request/index.js';

/** What the client asked for, after parsing and before the schema is consulted. */
export interface RestRequest {
  action: 'read' | 'create' | 'update' | 'delete';
  table: string;
  /** The `/{pk}` path segment, or null for the collection. */
  pk: string | null;
  query: QueryAst;
  prefer: Preferences;
  body?: unknown;
}

/** A filter whose column was found in the schema cache. */
export type PlannedFilter =
  | { op: ScalarOperator; column: ColumnInfo; value: string }
  | { op: 'in'; column: ColumnInfo; value: string[] }
  | { op: 'is'; column: ColumnInfo; value: IsValue };

export interface PlannedOrder {
  column: ColumnInfo;
  desc: boolean;
  nulls: 'first' | 'last' | null;
}

interface PlanBase {
  table: TableInfo;
  /** `/{pk}` (and a create with an object body): the answer is one object, 404 when absent. */
  single: boolean;
  filters: PlannedFilter[];
  /** Columns sent back; null for `Prefer: return=minimal`. */
  returning: ColumnInfo[] | null;
}

export interface ReadPlan extends PlanBase {
  kind: 'read';
  returning: ColumnInfo[];
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

export type Plan = ReadPlan | InsertPlan | UpdatePlan | DeletePlan;
