/**
 * What an API role may do with each relation of public, read from PostgreSQL's privileges, so
 * the document shown to the public key or a user lists only what that caller can use (the
 * secret key sees everything; row-level security still decides which rows).
 */
import type { Db } from '../../db/index.js';
import type { ColumnAccess } from './schema.js';

export interface RelationAccess extends ColumnAccess {
  delete: boolean;
}

const ACCESS_SQL = `
select c.relname::text as name, has_table_privilege($1, c.oid, 'DELETE') as can_delete,
       coalesce(array_agg(a.attname::text order by a.attnum) filter (where has_column_privilege($1, c.oid, a.attnum, 'SELECT')), '{}') as sel,
       coalesce(array_agg(a.attname::text order by a.attnum) filter (where has_column_privilege($1, c.oid, a.attnum, 'INSERT')), '{}') as ins,
       coalesce(array_agg(a.attname::text order by a.attnum) filter (where has_column_privilege($1, c.oid, a.attnum, 'UPDATE')), '{}') as upd
from pg_class c
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where c.relnamespace = to_regnamespace($2)::oid and c.relkind in ('r', 'p', 'v', 'm', 'f')
group by c.oid, c.relname`;

interface Row {
  name: string;
  can_delete: boolean;
  sel: string[] | string;
  ins: string[] | string;
  upd: string[] | string;
}

/** PGlite may hand back arrays in their text form `{a,"b c"}`. */
function list(v: string[] | string): string[] {
  if (Array.isArray(v)) return v;
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|([^,{}]+)/g;
  for (let m = re.exec(v); m; m = re.exec(v)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]);
  return out;
}

/**
 * Per relation name of `schema` (public by default), the columns `role` may read, insert and
 * update, and whether it may delete.
 * @example (await relationAccess(db, 'anon')).get('todos')?.select.has('title')
 */
export async function relationAccess(db: Db, role: 'anon' | 'authenticated', schema = 'public'): Promise<Map<string, RelationAccess>> {
  const { rows } = await db.query<Row>(ACCESS_SQL, [role, schema]);
  return new Map(
    rows.map((r) => [
      r.name,
      { select: new Set(list(r.sel)), insert: new Set(list(r.ins)), update: new Set(list(r.upd)), delete: r.can_delete === true },
    ]),
  );
}

const FUNCTIONS_SQL = `
select coalesce(array_agg(p.oid::int8), '{}') as oids from pg_proc p
where p.pronamespace = 'public'::regnamespace and has_function_privilege($1, p.oid, 'EXECUTE')`;

/**
 * The functions of public `role` may execute, by oid.
 * @example (await functionAccess(db, 'anon')).has(fn.oid)
 */
export async function functionAccess(db: Db, role: 'anon' | 'authenticated'): Promise<Set<number>> {
  const { rows } = await db.query<{ oids: Array<string | number> | string }>(FUNCTIONS_SQL, [role]);
  return new Set(list(rows[0]?.oids as string[] | string).map(Number));
}
