import type { Logger } from 'pino';
import type { Db } from '../../db/index.js';
import { singleFlight } from '../../lib/index.js';
import {
  CATALOG_SQL,
  type CatalogRow,
  type ComputedRelation,
  type FunctionInfo,
  readFunctions,
  readKeys,
  viewForeignKeys,
} from './catalog.js';
import { type ForeignKey, type Relation, relationsOf } from './relations.js';

export type { ComputedRelation, FunctionArg, FunctionInfo, FunctionResult } from './catalog.js';
export { addressableRelations, candidates, describeRelation, spelling, type ForeignKey, type Relation } from './relations.js';

export interface ColumnInfo {
  name: string;
  /** `format_type` of the column: `integer`, `text`, `timestamp with time zone`, `text[]`… */
  type: string;
  /**
   * `format_type` without the modifier (`character varying`, `numeric`, `bpchar`): what a
   * bound text value is cast to, so a cast never truncates the way `varchar(3)` would.
   */
  castType: string;
  /** The base type name (`int4`, `text`, `_text` for arrays, the enum's name). */
  udt: string;
  /** pg_type.typcategory: N numeric, S string, B boolean, D date/time, U user, A array, E enum… */
  category: string;
  notNull: boolean;
  hasDefault: boolean;
  isPk: boolean;
  generated: boolean;
  enumValues: string[] | null;
  comment: string | null;
  /** A computed field: the value of `function(row)` for the row of `table`, read only (catalog.ts). */
  computed?: { function: string; table: string };
}

export interface TableInfo {
  name: string;
  /** The schema the table is in (`public` unless the project exposes another); the SQL qualifies by it. */
  schema?: string;
  /** Foreign and partitioned tables are tables; a materialized view is never writable. */
  kind: 'table' | 'view' | 'materialized_view';
  columns: Map<string, ColumnInfo>;
  columnList: ColumnInfo[];
  pk: string[];
  comment: string | null;
  /** An ordinary table (relkind r), whose rows have system columns (`xmax`): not a partitioned or foreign one. */
  ordinary?: boolean;
  /** Computed fields (`f(tbl)` returning a scalar), by name: selectable, filterable and sortable, not in `*`, not writable. */
  computed?: Map<string, ColumnInfo>;
}

export interface SchemaSnapshot {
  /** The schema this snapshot describes: `public`, or another the project exposes (`[api] schemas`). */
  schema: string;
  tables: Map<string, TableInfo>;
  /** Foreign keys between tables of public. */
  foreignKeys: ForeignKey[];
  /** Unique keys (primary key first, then unique constraints and indexes without predicate or expression), by table. */
  uniqueKeys: Map<string, string[][]>;
  /** Relations (by foreign key, and through join tables), by source table. */
  relations: Map<string, Relation[]>;
  /** Functions of public the API can call, by name (overloads in one list). */
  functions: Map<string, FunctionInfo[]>;
  /** Computed relationships (`f(tbl)` returning rows of another relation), by source table. */
  computedRelations: Map<string, ComputedRelation[]>;
  loadedAt: number;
  version: number;
}

const COLUMNS_SQL = `
select c.relname as table_name, c.relkind::text as relkind, obj_description(c.oid, 'pg_class') as table_comment,
       a.attname as column_name, format_type(a.atttypid, a.atttypmod) as data_type, format_type(a.atttypid, null) as cast_type, t.typname as udt,
       t.typcategory::text as category, a.attnotnull as not_null,
       (a.atthasdef or a.attidentity <> '' ) as has_default, (a.attgenerated <> '' or a.attidentity = 'a') as generated,
       coalesce(a.attnum = any(pk.conkey), false) as is_pk,
       col_description(c.oid, a.attnum) as column_comment,
       case when t.typtype = 'e' then (select array_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid) end as enum_values
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
join pg_type t on t.oid = a.atttypid
left join pg_constraint pk on pk.conrelid = c.oid and pk.contype = 'p'
where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f')
order by c.relname, a.attnum`;

const RELKIND: Record<string, TableInfo['kind']> = { r: 'table', p: 'table', f: 'table', v: 'view', m: 'materialized_view' };

interface Row {
  table_name: string;
  relkind: string;
  table_comment: string | null;
  column_name: string;
  data_type: string;
  cast_type: string;
  udt: string;
  category: string;
  not_null: boolean;
  has_default: boolean;
  generated: boolean;
  is_pk: boolean;
  column_comment: string | null;
  enum_values: string[] | null;
}

/** Reads the exposed tables and views of one schema (`public` by default), their keys and the functions from the catalog. */
export async function loadSchema(db: Db, version = 0, schema = 'public'): Promise<SchemaSnapshot> {
  const { rows } = await db.query<Row>(COLUMNS_SQL, [schema]);
  const catalog = (await db.query<CatalogRow>(CATALOG_SQL, [schema])).rows[0];
  const tables = new Map<string, TableInfo>();
  for (const r of rows) {
    let t = tables.get(r.table_name);
    if (!t) {
      t = {
        name: r.table_name,
        schema,
        kind: RELKIND[r.relkind] ?? 'table',
        ...(r.relkind === 'r' ? { ordinary: true } : {}),
        columns: new Map(),
        columnList: [],
        pk: [],
        comment: r.table_comment,
      };
      tables.set(r.table_name, t);
    }
    const col: ColumnInfo = {
      name: r.column_name,
      type: r.data_type,
      // `character` without a length means char(1): a cast to it would truncate.
      castType: r.cast_type.replace(/^character(\[\])?$/, 'bpchar$1'),
      udt: r.udt,
      category: r.category,
      notNull: r.not_null,
      hasDefault: r.has_default,
      isPk: r.is_pk,
      generated: r.generated,
      enumValues: r.enum_values,
      comment: r.column_comment,
    };
    t.columns.set(col.name, col);
    t.columnList.push(col);
    if (col.isPk) t.pk.push(col.name);
  }
  const { fks, uniqueKeys } = readKeys(catalog);
  const primaryKeys = new Map([...tables.values()].map((t) => [t.name, t.pk]));
  const { functions, computedFields, computedRelations } = readFunctions(catalog.functions, tables);
  for (const [name, fields] of computedFields) {
    const t = tables.get(name);
    // A column of the same name wins, as in PostgreSQL's `tbl.name`.
    if (t) t.computed = new Map([...fields].filter(([field]) => !t.columns.has(field)));
  }
  return {
    schema,
    tables,
    foreignKeys: fks,
    uniqueKeys,
    relations: relationsOf([...fks, ...viewForeignKeys(fks, catalog.view_columns)], uniqueKeys, primaryKeys),
    functions,
    computedRelations,
    loadedAt: Date.now(),
    version,
  };
}

export interface SchemaCache {
  /**
   * The current snapshot of `public`, or of another schema the project exposes (null for one it
   * does not); never awaits on the request path.
   */
  get(): SchemaSnapshot;
  get(schema: string): SchemaSnapshot | null;
  /** The schemas served, `public` first (the default profile). */
  readonly schemas: readonly string[];
  /** Reloads every schema now (after the SQL runner ran DDL, say); answers `public`'s snapshot. */
  reload(): Promise<SchemaSnapshot>;
  close(): Promise<void>;
}

/**
 * The schema cache, refreshed when the database notifies a DDL change (event trigger →
 * `NOTIFY plinth_schema`), so changes made anywhere are served within a second. `schemas` are the
 * schemas beside `public` the project exposes (`[api] schemas`); `public` is always read.
 * @example const cache = await createSchemaCache(db, log); cache.get().tables.get('todos')
 */
export async function createSchemaCache(db: Db, log: Logger, options: { schemas?: readonly string[] } = {}): Promise<SchemaCache> {
  const schemas = ['public', ...new Set((options.schemas ?? []).filter((s) => s !== 'public'))];
  let version = 1;
  const loadAll = async (v: number) => {
    const next = new Map<string, SchemaSnapshot>();
    for (const name of schemas) next.set(name, await loadSchema(db, v, name));
    return next;
  };
  let snapshots = await loadAll(version);
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const publicSnapshot = () => snapshots.get('public') as SchemaSnapshot;

  const reload = singleFlight(async () => {
    snapshots = await loadAll(++version);
    return publicSnapshot();
  });

  const onNotify = () => {
    if (closed || timer) return;
    // Coalesce a burst of DDL (a migration) into one reload.
    timer = setTimeout(() => {
      timer = null;
      reload().catch((err) => log.warn({ err }, 'schema cache reload failed'));
    }, 50);
  };
  const unlisten = await db.listen('plinth_schema', onNotify);

  function get(): SchemaSnapshot;
  function get(schema: string): SchemaSnapshot | null;
  function get(schema?: string): SchemaSnapshot | null {
    return schema === undefined ? publicSnapshot() : (snapshots.get(schema) ?? null);
  }
  return {
    get,
    schemas,
    reload,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await unlisten();
    },
  };
}
