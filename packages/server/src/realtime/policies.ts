/**
 * Who may see a table's rows, read from the catalog once per table and schema change: for each
 * API role, the columns it may select and the row-level security policies that apply to it
 * (docs/realtime.md "Which policies are fast").
 *
 * A policy's USING expression is classified:
 * - `true`: every row;
 * - `owner = auth.uid()` (either side; a uuid column, or a text one compared with
 *   `auth.uid()::text`): rows whose column holds the subscriber's user id;
 * - anything else: decided by PostgreSQL (authorize.ts), as the subscriber's role with its
 *   claims, evaluating the same expression on the row as it was written.
 * The first two are decided in memory: no query per subscriber and none per change.
 */
import type { Db } from '../db/index.js';
import { quoteIdent } from '../rest/index.js';

export type ApiRole = 'anon' | 'authenticated' | 'service';
export const API_ROLES: readonly ApiRole[] = ['anon', 'authenticated', 'service'];

export type Predicate = { kind: 'true' } | { kind: 'owner'; column: string } | { kind: 'sql' };

export interface RoleAccess {
  /** The columns this role may select (none: it cannot subscribe). */
  columns: ReadonlySet<string>;
  /** Every column of the table: rows go out as PostgreSQL wrote them. */
  allColumns: boolean;
  /** Row-level security applies (on for the table, and the role does not bypass it). */
  rls: boolean;
  permissive: Predicate[];
  restrictive: Predicate[];
  /** Every policy is decided in memory. */
  fast: boolean;
  /**
   * The policies as one SQL condition over the row (alias: the table's name), for PostgreSQL
   * to decide; `true` when RLS does not apply.
   */
  sql: string;
}

export interface TableAccess {
  table: string;
  /** The primary key's columns: what `old` carries. */
  pk: string[];
  roles: Record<ApiRole, RoleAccess>;
}

const COLUMN = '("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)';
const UID = String.raw`auth\.uid\(\)`;
const UID_TEXT = String.raw`\(auth\.uid\(\)\)::text`;
const OWNER_SHAPES = [
  new RegExp(`^\\(${COLUMN} = ${UID}\\)$`),
  new RegExp(`^\\(${UID} = ${COLUMN}\\)$`),
  new RegExp(`^\\(${COLUMN} = ${UID_TEXT}\\)$`),
  new RegExp(`^\\(${UID_TEXT} = ${COLUMN}\\)$`),
];

const unquote = (name: string) => (name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name);

/**
 * Classifies a USING expression as deparsed by `pg_get_expr` (search_path pg_catalog).
 * @example classify('(user_id = auth.uid())', new Map([['user_id', 'uuid']])) // { kind: 'owner', column: 'user_id' }
 */
export function classify(expr: string | null, columnTypes: ReadonlyMap<string, string>): Predicate {
  if (expr === null) return { kind: 'true' };
  const e = expr.trim();
  if (e === 'true') return { kind: 'true' };
  for (const [i, shape] of OWNER_SHAPES.entries()) {
    const m = shape.exec(e);
    if (!m) continue;
    const column = unquote(m[1]);
    // A uuid column holds the canonical lower-case text; a text one equals auth.uid()::text only so.
    const want = i < 2 ? 'uuid' : 'text';
    if (columnTypes.get(column) === want) return { kind: 'owner', column };
  }
  return { kind: 'sql' };
}

interface RoleRow {
  role: ApiRole;
  rls: boolean;
  columns: string[] | string;
}
interface PolicyRow {
  role: ApiRole;
  permissive: boolean;
  qual: string | null;
}
interface ColumnRow {
  name: string;
  udt: string;
  is_pk: boolean;
}

const asList = (v: string[] | string): string[] =>
  Array.isArray(v)
    ? v
    : v
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean)
        .map((s) => s.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1'));

/**
 * Reads a table's access rules for the three API roles; null when it is no plain table of public.
 * @example const access = await loadAccess(db, 'todos'); access?.roles.authenticated.fast
 */
export async function loadAccess(db: Db, table: string): Promise<TableAccess | null> {
  return db.transaction(async (tx) => {
    // Deparsed with nothing but pg_catalog on the path, every other name comes out qualified, so
    // the expression means the same wherever it is evaluated.
    await tx.query('set local search_path to pg_catalog, pg_temp');
    const rel = await tx.query<{ oid: number }>(
      `select c.oid::int8 as oid from pg_class c where c.relnamespace = 'public'::regnamespace and c.relname = $1 and c.relkind = 'r'`,
      [table],
    );
    const oid = rel.rows[0]?.oid;
    if (oid === undefined) return null;
    const cols = await tx.query<ColumnRow>(
      `select a.attname::text as name, t.typname::text as udt,
              exists (select 1 from pg_constraint k where k.conrelid = a.attrelid and k.contype = 'p' and a.attnum = any(k.conkey)) as is_pk
       from pg_attribute a join pg_type t on t.oid = a.atttypid
       where a.attrelid = $1::oid and a.attnum > 0 and not a.attisdropped order by a.attnum`,
      [oid],
    );
    const roles = await tx.query<RoleRow>(
      `select r.rolname::text as role,
              (c.relrowsecurity and not r.rolbypassrls) as rls,
              array(select a.attname::text from pg_attribute a
                    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                      and has_column_privilege(r.oid, c.oid, a.attnum, 'SELECT') order by a.attnum) as columns
       from pg_class c cross join pg_roles r
       where c.oid = $1::oid and r.rolname in ('anon', 'authenticated', 'service')`,
      [oid],
    );
    const policies = await tx.query<PolicyRow>(
      `select r.rolname::text as role, p.polpermissive as permissive, pg_get_expr(p.polqual, p.polrelid) as qual
       from pg_policy p cross join pg_roles r
       where p.polrelid = $1::oid and p.polcmd in ('r', '*') and r.rolname in ('anon', 'authenticated', 'service')
         and exists (select 1 from unnest(p.polroles) pr where pr = 0 or pg_has_role(r.oid, pr, 'USAGE'))
       order by p.polname`,
      [oid],
    );
    const types = new Map(cols.rows.map((c) => [c.name, c.udt]));
    const all = cols.rows.map((c) => c.name);
    const alias = quoteIdent(table);
    const access = {} as Record<ApiRole, RoleAccess>;
    for (const role of API_ROLES) {
      const r = roles.rows.find((x) => x.role === role);
      const columns = new Set(r ? asList(r.columns) : []);
      const mine = policies.rows.filter((p) => p.role === role);
      const permissive = mine.filter((p) => p.permissive);
      const restrictive = mine.filter((p) => !p.permissive);
      const rls = r?.rls ?? true;
      // The qual of a policy whose expression refers to the table by name resolves to the
      // populated row of the same name (authorize.ts).
      const qual = (p: PolicyRow) => `(${p.qual ?? 'true'})`;
      const sql = !rls
        ? 'true'
        : permissive.length === 0
          ? 'false'
          : [`(${permissive.map(qual).join(' or ')})`, ...restrictive.map(qual)].join(' and ');
      const p = permissive.map((x) => classify(x.qual, types));
      const q = restrictive.map((x) => classify(x.qual, types));
      access[role] = {
        columns,
        allColumns: columns.size === all.length,
        rls,
        permissive: p,
        restrictive: q,
        fast: !rls || [...p, ...q].every((x) => x.kind !== 'sql'),
        sql,
      };
      void alias;
    }
    return { table, pk: cols.rows.filter((c) => c.is_pk).map((c) => c.name), roles: access };
  });
}
