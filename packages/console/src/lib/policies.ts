import { ident, literal } from './ddl';

/**
 * The policy editor's SQL and words: templates for the common cases, each a list of policies
 * written as SQL the admin sees before it runs (through the SQL runner), the catalog query
 * that lists a table's policies, and a sentence per policy. For `storage.objects` the target
 * carries the bucket, and every template's condition starts with `bucket_id = '<bucket>'`.
 * No DOM: unit-tested in Node.
 */

export const COMMANDS = ['all', 'select', 'insert', 'update', 'delete'] as const;
export type Command = (typeof COMMANDS)[number];
export const ROLES = ['anon', 'authenticated'] as const;
export type Role = (typeof ROLES)[number];

/** Where policies go: a table of `public`, or the objects of one storage bucket. */
export type Target = { kind: 'table'; table: string } | { kind: 'bucket'; bucket: string };

export interface PolicySpec {
  name: string;
  command: Command;
  roles: Role[];
  /** Which existing rows it lets through (SELECT, UPDATE, DELETE); '' for none. */
  using: string;
  /** Which new rows it accepts (INSERT, UPDATE); '' for none. */
  check: string;
}

/** A policy as the catalog lists it (pg_policies). */
export interface PolicyRow {
  name: string;
  command: string;
  roles: string[] | string;
  using: string | null;
  check: string | null;
  permissive: string;
}

export const TEMPLATES = ['owner_all', 'public_read', 'signed_in_read', 'owner_write_public_read', 'custom'] as const;
export type Template = (typeof TEMPLATES)[number];
export const TEMPLATE_LABELS: Record<Template, string> = {
  owner_all: 'Owner can do everything',
  public_read: 'Everyone can read',
  signed_in_read: 'Signed-in users can read',
  owner_write_public_read: 'Owner writes, everyone reads',
  custom: 'Custom',
};

const relation = (t: Target) => (t.kind === 'table' ? ident(t.table) : 'storage.objects');
const scope = (t: Target, condition: string) => (t.kind === 'bucket' ? `bucket_id = ${literal(t.bucket)} and (${condition})` : condition);
const stem = (t: Target) => (t.kind === 'table' ? t.table : t.bucket);

/**
 * The policies of a template. `owner` is the column holding the owner's id (`owner` on
 * storage.objects: the uploader).
 * @example templatePolicies('owner_all', { kind: 'table', table: 'notes' }, 'owner_id')[0].using // '"owner_id" = auth.uid()'
 */
export function templatePolicies(template: Exclude<Template, 'custom'>, target: Target, owner: string): PolicySpec[] {
  const mine = scope(target, `${ident(owner)} = auth.uid()`);
  const all = target.kind === 'bucket' ? `bucket_id = ${literal(target.bucket)}` : 'true';
  const name = (suffix: string) => `${stem(target)}_${suffix}`;
  switch (template) {
    case 'owner_all':
      return [{ name: name('owner_all'), command: 'all', roles: ['authenticated'], using: mine, check: mine }];
    case 'public_read':
      return [{ name: name('public_read'), command: 'select', roles: ['anon', 'authenticated'], using: all, check: '' }];
    case 'signed_in_read':
      return [{ name: name('signed_in_read'), command: 'select', roles: ['authenticated'], using: all, check: '' }];
    case 'owner_write_public_read':
      return [
        { name: name('public_read'), command: 'select', roles: ['anon', 'authenticated'], using: all, check: '' },
        { name: name('owner_insert'), command: 'insert', roles: ['authenticated'], using: '', check: mine },
        { name: name('owner_update'), command: 'update', roles: ['authenticated'], using: mine, check: mine },
        { name: name('owner_delete'), command: 'delete', roles: ['authenticated'], using: mine, check: '' },
      ];
  }
}

/** Which clauses a command takes: SELECT and DELETE have no WITH CHECK, INSERT no USING. */
export const clauses = (command: Command) => ({ using: command !== 'insert', check: command !== 'select' && command !== 'delete' });

/** What is wrong with a policy before SQL is written (null: nothing). */
export function policyProblem(p: PolicySpec): string | null {
  if (!p.name.trim()) return 'The policy needs a name.';
  if (p.roles.length === 0) return 'Choose who it applies to.';
  const c = clauses(p.command);
  if (c.using && !p.using.trim() && !(c.check && p.check.trim())) return 'Write which rows it lets through (using).';
  if (!c.using && !p.check.trim()) return 'Write which new rows it accepts (with check).';
  return null;
}

/**
 * A role in a policy's TO list: a plain lowercase name as it is (`public` is PostgreSQL's keyword
 * for every role: quoted, it would name a role called "public"), anything else quoted, so a role
 * name crafted in SQL never becomes SQL in the editor (review round 3, I8).
 */
export const roleSql = (role: string) => (/^[a-z_][a-z0-9_]*$/.test(role) ? role : ident(role));

/** CREATE POLICY for one policy. */
export function createPolicySql(target: Target, p: PolicySpec): string {
  const c = clauses(p.command);
  const parts = [`create policy ${ident(p.name)} on ${relation(target)} for ${p.command} to ${p.roles.map(roleSql).join(', ')}`];
  if (c.using && p.using.trim()) parts.push(`  using (${p.using.trim()})`);
  if (c.check && p.check.trim()) parts.push(`  with check (${p.check.trim()})`);
  return `${parts.join('\n')};`;
}

export const dropPolicySql = (target: Target, name: string) => `drop policy ${ident(name)} on ${relation(target)};`;

/**
 * An edit: ALTER POLICY when the command is unchanged (it keeps its place), else drop and create.
 * A renamed policy is renamed first.
 */
export function editPolicySql(target: Target, before: string, beforeCommand: string, p: PolicySpec): string {
  if (beforeCommand.toLowerCase() !== p.command) return `${dropPolicySql(target, before)}\n${createPolicySql(target, p)}`;
  const out: string[] = [];
  if (before !== p.name) out.push(`alter policy ${ident(before)} on ${relation(target)} rename to ${ident(p.name)};`);
  const c = clauses(p.command);
  const parts = [`alter policy ${ident(p.name)} on ${relation(target)} to ${p.roles.map(roleSql).join(', ')}`];
  if (c.using && p.using.trim()) parts.push(`  using (${p.using.trim()})`);
  if (c.check && p.check.trim()) parts.push(`  with check (${p.check.trim()})`);
  out.push(`${parts.join('\n')};`);
  return out.join('\n');
}

export const rlsSql = (table: string, on: boolean) => `alter table ${ident(table)} ${on ? 'enable' : 'disable'} row level security;`;

/** A table's row-level security switch and policies ($1: schema, $2: table). */
export const POLICIES_SQL = `select c.relrowsecurity as rls,
  coalesce((select json_agg(json_build_object('name', p.policyname, 'command', p.cmd, 'roles', p.roles, 'using', p.qual,
    'check', p.with_check, 'permissive', p.permissive) order by p.policyname)
    from pg_policies p where p.schemaname = n.nspname and p.tablename = c.relname), '[]'::json) as policies
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = $1 and c.relname = $2`;

/** The roles of a catalog row (PGlite may hand back `{a,b}`). */
export function rolesOf(roles: string[] | string): string[] {
  if (Array.isArray(roles)) return roles;
  return roles
    .replace(/^\{|\}$/g, '')
    .split(',')
    .map((r) => r.replace(/^"|"$/g, ''))
    .filter(Boolean);
}

/** Whether a storage.objects policy is about this bucket (its condition names it). */
export function aboutBucket(p: PolicyRow, bucket: string): boolean {
  const needle = `bucket_id = ${literal(bucket)}`;
  return [p.using, p.check].some((x) => x?.includes(needle) || x?.includes(`${needle}::text`));
}

/**
 * `owner_id = auth.uid()` as the catalog prints it: the SQL runner's search path holds `auth`,
 * so PostgreSQL prints the call as `uid()` there.
 */
const OWN_ROW = /^\(?"?(\w+)"? = (auth\.)?uid\(\)\)?$/;

const COMMAND_WORDS: Record<string, string> = {
  ALL: 'read, add, change and delete',
  SELECT: 'read',
  INSERT: 'add',
  UPDATE: 'change',
  DELETE: 'delete',
};

/**
 * A storage policy's condition without its bucket part: `((bucket_id = 'b'::text) AND (owner = uid()))`
 * → `(owner = uid())`, `(bucket_id = 'b'::text)` → `true`; unchanged when it does not start so.
 */
export function withoutBucket(expr: string | null, bucket: string): string | null {
  if (expr === null) return null;
  const escapeRe = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const esc = `bucket_id = ${escapeRe(literal(bucket))}(?:::text)?`;
  const only = new RegExp(`^\\(?${esc}\\)?$`);
  if (only.test(expr)) return 'true';
  const first = new RegExp(`^\\(\\(?${esc}\\)? AND (.*)\\)$`, 's');
  const m = first.exec(expr);
  return m ? m[1].replace(/^\((.*)\)$/s, '$1') : expr;
}

/**
 * A policy in words; with `bucket`, a storage.objects policy of that bucket (its files).
 * @example policyInWords({ name: 'p', command: 'SELECT', roles: ['anon'], using: 'true', check: null, permissive: 'PERMISSIVE' })
 * // 'Visitors without an account (anon) may read every row.'
 */
export function policyInWords(p: PolicyRow, bucket?: string): string {
  const roles = rolesOf(p.roles);
  const who = roles.includes('public')
    ? 'Everyone'
    : roles
        .map((r) =>
          r === 'anon' ? 'visitors without an account (anon)' : r === 'authenticated' ? 'signed-in users (authenticated)' : `role ${r}`,
        )
        .join(' and ');
  const what = COMMAND_WORDS[p.command.toUpperCase()] ?? p.command.toLowerCase();
  const [every, these] = bucket ? [`every file of ${bucket}`, `the files of ${bucket}`] : ['every row', 'the rows'];
  const own = bucket ? 'uploaded by them' : null;
  const strip = (e: string | null) => (bucket ? withoutBucket(e, bucket) : e);
  const using = strip(p.using);
  const check = strip(p.check);
  const rows = (expr: string | null) =>
    !expr || expr === 'true'
      ? every
      : OWN_ROW.test(expr)
        ? own && /^\(?"?owner"? =/.test(expr)
          ? `${these} ${own}`
          : `${these} whose ${/^\(?"?(\w+)"?/.exec(expr)?.[1]} is their own id`
        : `${these} where ${expr}`;
  const restrictive = p.permissive === 'RESTRICTIVE' ? ' (restrictive: every other policy must allow it too)' : '';
  let text = `${who[0].toUpperCase()}${who.slice(1)} may ${what} ${rows(using ?? (p.command.toUpperCase() === 'INSERT' ? check : null))}`;
  if (check && check !== using && p.command.toUpperCase() !== 'INSERT') text += `; new ${bucket ? 'files' : 'rows'} must satisfy ${check}`;
  return `${text}${restrictive}.`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const READ_LIMIT = 50;

/**
 * The read a user makes, as SQL for the runner: the role and claims their token would give
 * (`set local`, for this script only), then the select. `who` is a user id, or 'anon'.
 * @example readAsSql({ kind: 'table', table: 'notes' }, 'anon') // 'set local role anon;\nselect * from "notes" limit 50;'
 */
export function readAsSql(target: Target, who: string): string {
  const read =
    target.kind === 'table'
      ? `select * from ${ident(target.table)} limit ${READ_LIMIT};`
      : `select name, owner, size, mime_type from storage.objects where bucket_id = ${literal(target.bucket)} order by name limit ${READ_LIMIT};`;
  if (who === 'anon') return `set local role anon;\n${read}`;
  if (!UUID.test(who)) throw new Error('not a user id');
  const claims = JSON.stringify({ sub: who, role: 'authenticated' });
  return `set local role authenticated;\nset local request.jwt.claims = ${literal(claims)};\nset local request.jwt.claim.sub = ${literal(who)};\n${read}`;
}
