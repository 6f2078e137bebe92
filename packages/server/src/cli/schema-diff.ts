/**
 * The schema of a project's own schemas (public and the ones `/rest/v1` exposes) read from the
 * catalog, and the SQL that turns one such schema into another: what `plinth db diff` writes as a
 * migration (changes made in the console or the SQL runner, compared with a shadow database built
 * from the migrations). Covered: enum types, tables and their columns, constraints, indexes,
 * row-level security, policies, views, functions, triggers, and the API roles' privileges on
 * tables and functions. Anything else (sequences of their own, domains, extensions, comments) is
 * not compared; the file's header says so.
 */
import type { Queryable } from '../db/index.js';
import { quoteIdent } from '../rest/index.js';

export interface ColumnShape {
  name: string;
  type: string;
  notnull: boolean;
  default: string | null;
  /** pg_attribute.attidentity: '' (none), 'a' (always), 'd' (by default). */
  identity: string;
  /** pg_attribute.attgenerated: '' or 's' (stored; `default` is then its expression). */
  generated: string;
}

export interface TableShape {
  schema: string;
  name: string;
  rls: boolean;
  force: boolean;
  columns: ColumnShape[];
  constraints: Array<{ name: string; type: string; def: string }>;
  /** Per API role that exists: the table privileges it holds (SELECT, INSERT, UPDATE, DELETE). */
  privileges: Record<string, string[]>;
}

export interface SchemaShape {
  tables: TableShape[];
  indexes: Array<{ schema: string; table: string; name: string; def: string }>;
  views: Array<{ schema: string; name: string; materialized: boolean; def: string }>;
  policies: Array<{ schema: string; table: string; name: string; def: string }>;
  functions: Array<{ signature: string; def: string; execute: Record<string, boolean> }>;
  triggers: Array<{ schema: string; table: string; name: string; def: string }>;
  enums: Array<{ schema: string; name: string; labels: string[] }>;
}

const ROLES = "array['anon', 'authenticated', 'service']";
const NOT_EXTENSION = (cls: string, oid: string) =>
  `not exists (select 1 from pg_depend x where x.classid = '${cls}'::regclass and x.objid = ${oid} and x.deptype = 'e')`;

/** One JSON text: the same on both drivers. `$1` is the schemas compared. */
const SHAPE_SQL = `
select json_build_object(
  'tables', (select coalesce(json_agg(json_build_object(
      'schema', n.nspname, 'name', c.relname, 'rls', c.relrowsecurity, 'force', c.relforcerowsecurity,
      'columns', (select coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                    'notnull', a.attnotnull, 'default', pg_get_expr(d.adbin, d.adrelid), 'identity', a.attidentity::text,
                    'generated', a.attgenerated::text) order by a.attnum), '[]')
                  from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
                  where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped),
      'constraints', (select coalesce(json_agg(json_build_object('name', k.conname, 'type', k.contype::text, 'def', pg_get_constraintdef(k.oid))
                        order by k.conname), '[]')
                      from pg_constraint k where k.conrelid = c.oid and k.contype in ('p', 'u', 'f', 'c', 'x')),
      'privileges', (select coalesce(json_object_agg(r, (select coalesce(json_agg(p order by p), '[]')
                        from unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p where has_table_privilege(r, c.oid, p))), '{}')
                     from unnest(${ROLES}) r where exists (select 1 from pg_roles where rolname = r)))
    order by n.nspname, c.relname), '[]')
   from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname = any($1) and c.relkind in ('r', 'p') and not c.relispartition and ${NOT_EXTENSION('pg_class', 'c.oid')}),
  'indexes', (select coalesce(json_agg(json_build_object('schema', n.nspname, 'table', t.relname, 'name', ic.relname,
                'def', pg_get_indexdef(i.indexrelid)) order by n.nspname, ic.relname), '[]')
   from pg_index i join pg_class ic on ic.oid = i.indexrelid join pg_class t on t.oid = i.indrelid join pg_namespace n on n.oid = t.relnamespace
   where n.nspname = any($1) and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
     and ${NOT_EXTENSION('pg_class', 't.oid')}),
  'views', (select coalesce(json_agg(json_build_object('schema', n.nspname, 'name', c.relname, 'materialized', c.relkind = 'm',
              'def', pg_get_viewdef(c.oid, true)) order by n.nspname, c.relname), '[]')
   from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname = any($1) and c.relkind in ('v', 'm') and ${NOT_EXTENSION('pg_class', 'c.oid')}),
  'policies', (select coalesce(json_agg(json_build_object('schema', p.schemaname, 'table', p.tablename, 'name', p.policyname,
                 'def', concat_ws(' ', 'as', lower(p.permissive), 'for', lower(p.cmd), 'to', (select string_agg(quote_ident(r), ', ') from unnest(p.roles) r),
                        'using (' || p.qual || ')', 'with check (' || p.with_check || ')'))
                 order by p.schemaname, p.tablename, p.policyname), '[]')
   from pg_policies p where p.schemaname = any($1)),
  'functions', (select coalesce(json_agg(json_build_object('signature', p.oid::regprocedure::text, 'def', pg_get_functiondef(p.oid),
                  'execute', (select coalesce(json_object_agg(r, has_function_privilege(r, p.oid, 'EXECUTE')), '{}')
                              from unnest(${ROLES}) r where exists (select 1 from pg_roles where rolname = r)))
                  order by p.oid::regprocedure::text), '[]')
   from pg_proc p join pg_namespace n on n.oid = p.pronamespace
   where n.nspname = any($1) and p.prokind in ('f', 'p') and ${NOT_EXTENSION('pg_proc', 'p.oid')}),
  'triggers', (select coalesce(json_agg(json_build_object('schema', n.nspname, 'table', c.relname, 'name', t.tgname,
                 'def', pg_get_triggerdef(t.oid)) order by n.nspname, c.relname, t.tgname), '[]')
   from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
   where n.nspname = any($1) and not t.tgisinternal and ${NOT_EXTENSION('pg_class', 'c.oid')}
     -- Plinth's own (realtime's capture, webhooks'): made by the server, not by a migration.
     and (select pn.nspname from pg_proc pf join pg_namespace pn on pn.oid = pf.pronamespace where pf.oid = t.tgfoid)
         not in ('plinth', 'realtime', 'storage', 'auth')),
  'enums', (select coalesce(json_agg(json_build_object('schema', n.nspname, 'name', t.typname,
              'labels', (select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid))
              order by n.nspname, t.typname), '[]')
   from pg_type t join pg_namespace n on n.oid = t.typnamespace
   where n.nspname = any($1) and t.typtype = 'e' and ${NOT_EXTENSION('pg_type', 't.oid')})
)::text as shape`;

/**
 * The shape of `schemas` in the database `db` reaches.
 * @example const shape = await readShape(db, ['public'])
 */
export async function readShape(db: Queryable, schemas: string[]): Promise<SchemaShape> {
  const { rows } = await db.query<{ shape: string }>(SHAPE_SQL, [schemas]);
  return JSON.parse(rows[0].shape) as SchemaShape;
}

const q = quoteIdent;
const rel = (schema: string, name: string) => `${q(schema)}.${q(name)}`;
const SERIAL: Record<string, string> = { integer: 'serial', bigint: 'bigserial', smallint: 'smallserial' };

/** A column as `create table` and `add column` write it; a sequence default of its own is `serial`. */
function columnDef(c: ColumnShape): string {
  const parts = [q(c.name)];
  const serial = c.default !== null && /^nextval\('[^']+'::regclass\)$/.test(c.default) ? SERIAL[c.type] : undefined;
  parts.push(serial ?? c.type);
  if (c.generated === 's' && c.default !== null) parts.push(`generated always as (${c.default}) stored`);
  else if (c.identity === 'a') parts.push('generated always as identity');
  else if (c.identity === 'd') parts.push('generated by default as identity');
  else if (c.default !== null && !serial) parts.push(`default ${c.default}`);
  if (c.notnull && c.identity === '' && !serial) parts.push('not null');
  return parts.join(' ');
}

const key = (...parts: string[]) => parts.join('\u0000');
const byKey = <T>(items: T[], k: (t: T) => string) => new Map(items.map((i) => [k(i), i]));

/**
 * The statements that make `from` (the migrations' schema) into `to` (the database's), in an
 * order that applies: drops of what depends first, tables before their constraints, functions
 * before the views, triggers and policies that may call them.
 * @example diffShapes(await readShape(shadow, ['public']), await readShape(db, ['public'])) // ['create table "public"."notes" (…);', …]
 */
export function diffShapes(from: SchemaShape, to: SchemaShape): string[] {
  const drops: string[] = [];
  const out: string[] = [];
  const later: string[] = [];
  // Foreign keys after every key they may reference.
  const foreign: string[] = [];

  // Enums: new types, new labels (PostgreSQL cannot drop a label: said in a comment).
  const fromEnums = byKey(from.enums, (e) => key(e.schema, e.name));
  for (const e of to.enums) {
    const before = fromEnums.get(key(e.schema, e.name));
    const labels = e.labels.map((l) => `'${l.replaceAll("'", "''")}'`);
    if (!before) out.push(`create type ${rel(e.schema, e.name)} as enum (${labels.join(', ')});`);
    else
      for (const [i, l] of e.labels.entries())
        if (!before.labels.includes(l)) out.push(`alter type ${rel(e.schema, e.name)} add value if not exists ${labels[i]};`);
  }

  const fromTables = byKey(from.tables, (t) => key(t.schema, t.name));
  const toTables = byKey(to.tables, (t) => key(t.schema, t.name));
  // Dependents first: policies, triggers, views and functions that go or change are dropped before tables.
  const dependents = <T>(a: T[], b: T[], k: (t: T) => string, same: (x: T, y: T) => boolean, drop: (t: T) => string) => {
    const next = byKey(b, k);
    for (const x of a) {
      const y = next.get(k(x));
      if (!y || !same(x, y)) drops.push(drop(x));
    }
  };
  dependents(
    from.policies,
    to.policies,
    (p) => key(p.schema, p.table, p.name),
    (x, y) => x.def === y.def,
    (p) => `drop policy if exists ${q(p.name)} on ${rel(p.schema, p.table)};`,
  );
  dependents(
    from.triggers,
    to.triggers,
    (t) => key(t.schema, t.table, t.name),
    (x, y) => x.def === y.def,
    (t) => `drop trigger if exists ${q(t.name)} on ${rel(t.schema, t.table)};`,
  );
  dependents(
    from.views,
    to.views,
    (v) => key(v.schema, v.name),
    (x, y) => x.def === y.def && x.materialized === y.materialized,
    (v) => `drop ${v.materialized ? 'materialized view' : 'view'} if exists ${rel(v.schema, v.name)};`,
  );
  const toFunctions = byKey(to.functions, (f) => f.signature);
  for (const f of from.functions) if (!toFunctions.has(f.signature)) drops.push(`drop function if exists ${f.signature};`);
  const fromIndexes = byKey(from.indexes, (i) => key(i.schema, i.name));
  const toIndexes = byKey(to.indexes, (i) => key(i.schema, i.name));
  for (const i of from.indexes) {
    const now = toIndexes.get(key(i.schema, i.name));
    if (!now || now.def !== i.def) drops.push(`drop index if exists ${rel(i.schema, i.name)};`);
  }

  for (const t of to.tables) {
    const before = fromTables.get(key(t.schema, t.name));
    const name = rel(t.schema, t.name);
    if (!before) {
      out.push(`create table ${name} (\n  ${t.columns.map(columnDef).join(',\n  ')}\n);`);
      for (const k of t.constraints) (k.type === 'f' ? foreign : later).push(`alter table ${name} add constraint ${q(k.name)} ${k.def};`);
    } else {
      const cols = byKey(before.columns, (c) => c.name);
      const now = byKey(t.columns, (c) => c.name);
      const oldConstraints = byKey(before.constraints, (k) => k.name);
      const newConstraints = byKey(t.constraints, (k) => k.name);
      for (const k of before.constraints) {
        const n = newConstraints.get(k.name);
        if (!n || n.def !== k.def) drops.push(`alter table ${name} drop constraint if exists ${q(k.name)};`);
      }
      for (const c of before.columns) if (!now.has(c.name)) out.push(`alter table ${name} drop column ${q(c.name)};`);
      for (const c of t.columns) {
        const o = cols.get(c.name);
        if (!o) {
          out.push(`alter table ${name} add column ${columnDef(c)};`);
          continue;
        }
        const col = `alter table ${name} alter column ${q(c.name)}`;
        if (o.type !== c.type) out.push(`${col} type ${c.type} using ${q(c.name)}::${c.type};`);
        if (o.default !== c.default && o.generated === '' && c.generated === '' && o.identity === c.identity)
          out.push(c.default === null ? `${col} drop default;` : `${col} set default ${c.default};`);
        if (o.notnull !== c.notnull && c.identity === '') out.push(`${col} ${c.notnull ? 'set' : 'drop'} not null;`);
        if (o.identity !== c.identity || o.generated !== c.generated)
          out.push(`-- ${name}.${q(c.name)}: its identity or generation changed; write this change by hand`);
      }
      for (const k of t.constraints) {
        const o = oldConstraints.get(k.name);
        if (!o || o.def !== k.def) (k.type === 'f' ? foreign : later).push(`alter table ${name} add constraint ${q(k.name)} ${k.def};`);
      }
      if (before.rls !== t.rls) later.push(`alter table ${name} ${t.rls ? 'enable' : 'disable'} row level security;`);
      if (before.force !== t.force) later.push(`alter table ${name} ${t.force ? 'force' : 'no force'} row level security;`);
    }
    if (!before && t.rls) later.push(`alter table ${name} enable row level security;`);
    if (!before && t.force) later.push(`alter table ${name} force row level security;`);
    for (const [role, privileges] of Object.entries(t.privileges)) {
      const had = before?.privileges[role] ?? [];
      const grant = privileges.filter((p) => !had.includes(p));
      const revoke = had.filter((p) => !privileges.includes(p));
      if (grant.length) later.push(`grant ${grant.join(', ').toLowerCase()} on ${name} to ${q(role)};`);
      if (revoke.length) later.push(`revoke ${revoke.join(', ').toLowerCase()} on ${name} from ${q(role)};`);
    }
  }
  for (const t of from.tables) if (!toTables.has(key(t.schema, t.name))) out.push(`drop table if exists ${rel(t.schema, t.name)} cascade;`);

  later.push(...foreign);
  for (const i of to.indexes) {
    const before = fromIndexes.get(key(i.schema, i.name));
    if (!before || before.def !== i.def) later.push(`${i.def};`);
  }
  const fromFunctions = byKey(from.functions, (f) => f.signature);
  for (const f of to.functions) {
    const before = fromFunctions.get(f.signature);
    if (!before || before.def !== f.def) later.push(`${f.def.trim()};`);
    for (const [role, may] of Object.entries(f.execute)) {
      const had = before?.execute[role] ?? false;
      if (may && !had) later.push(`grant execute on function ${f.signature} to ${q(role)};`);
      if (!may && (had || !before)) later.push(`revoke execute on function ${f.signature} from ${q(role)};`);
    }
  }
  const fromViews = byKey(from.views, (v) => key(v.schema, v.name));
  for (const v of to.views) {
    const before = fromViews.get(key(v.schema, v.name));
    if (!before || before.def !== v.def || before.materialized !== v.materialized)
      later.push(`create ${v.materialized ? 'materialized view' : 'view'} ${rel(v.schema, v.name)} as\n${v.def.trim().replace(/;$/, '')};`);
  }
  const fromTriggers = byKey(from.triggers, (t) => key(t.schema, t.table, t.name));
  for (const t of to.triggers) {
    const before = fromTriggers.get(key(t.schema, t.table, t.name));
    if (!before || before.def !== t.def) later.push(`${t.def};`);
  }
  const fromPolicies = byKey(from.policies, (p) => key(p.schema, p.table, p.name));
  for (const p of to.policies) {
    const before = fromPolicies.get(key(p.schema, p.table, p.name));
    if (!before || before.def !== p.def) later.push(`create policy ${q(p.name)} on ${rel(p.schema, p.table)} ${p.def};`);
  }
  return [...drops, ...out, ...later];
}
