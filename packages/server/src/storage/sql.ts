/**
 * The SQL of object operations. Each runs through `Db.runAs` as the caller (role and claims
 * set for its transaction), so the project's policies on storage.objects decide: INSERT for an
 * upload, SELECT for a download, listing or signing, INSERT … ON CONFLICT DO UPDATE for an
 * upsert, UPDATE for a move, DELETE for a delete. Values are `$1[n]` of one text array.
 */
import type { DbErrorContext } from '../db/index.js';
import { isoSql } from '../lib/index.js';

/** What a client sees of an object (the backend key stays inside), times as wire time. */
const PUBLIC_COLS = `id, bucket_id as bucket, name, owner, size, mime_type, etag, metadata,
  ${isoSql('created_at')} as created_at, ${isoSql('updated_at')} as updated_at`;

/** One object by bucket and name; the row also carries `version`, the key of its bytes. */
export const FIND = `select (select row_to_json(o)::text from (
    select ${PUBLIC_COLS}, version from storage.objects where bucket_id = $1[1] and name = $1[2]
  ) o) as body, 1::int8 as n, null::int8 as total`;

/**
 * An upload, or a copy's new object: values bucket, name, size, mime, etag, metadata, version.
 * No RETURNING: it would make SELECT policies apply too, and an upload-only bucket (an INSERT
 * policy alone) must work. The uploader (`auth.uid()`, null for anon and the secret key) is the owner.
 * `onlyVersion`: the upsert replaces only the upload `$1[9]` (`$1[8]` is the dry run's statement).
 */
export function insertSql(upsert: boolean, onlyVersion = false): string {
  const insert = `insert into storage.objects (bucket_id, name, owner, size, mime_type, etag, metadata, version)
    values ($1[1], $1[2], auth.uid(), $1[3]::int8, $1[4], $1[5], $1[6]::jsonb, $1[7]::uuid)`;
  if (!upsert) return insert;
  return `${insert} on conflict (bucket_id, name) do update set owner = excluded.owner, size = excluded.size,
    mime_type = excluded.mime_type, etag = excluded.etag, metadata = excluded.metadata, version = excluded.version,
    updated_at = now()${onlyVersion ? ' where storage.objects.version = $1[9]::uuid' : ''}`;
}

/** The write of `insertSql`, run and undone (migration 0020): what the policies say before the body is read. */
export const DRY_RUN = 'select body, n, total from storage.dry_run($1[8], $1)';

/** ORDER BY of a listing, from a closed map; folders (no times) come first, by name. */
const ORDERS = {
  name: { asc: 'i.name collate "C"', desc: 'i.name collate "C" desc' },
  created_at: { asc: 'i.created_at nulls first, i.name collate "C"', desc: 'i.created_at desc nulls first, i.name collate "C" desc' },
  updated_at: { asc: 'i.updated_at nulls first, i.name collate "C"', desc: 'i.updated_at desc nulls first, i.name collate "C" desc' },
} as const;

/**
 * Entries directly under a folder: files and sub-folders (as prefixes), bytewise by name unless
 * `sort` says otherwise.
 * @example listSql({ column: 'created_at', order: 'desc' })
 */
export function listSql(sort?: { column: keyof typeof ORDERS; order: 'asc' | 'desc' }): string {
  const order = (ORDERS[sort?.column ?? 'name'] ?? ORDERS.name)[sort?.order === 'desc' ? 'desc' : 'asc'];
  return `with o as (
    select substr(name, $1[3]::int + 1) as rest, id, owner, size, mime_type, etag, metadata,
      ${isoSql('created_at')} as created_at, ${isoSql('updated_at')} as updated_at
    from storage.objects where bucket_id = $1[1] and name like $1[2] escape '\\'
  ), e as (
    select split_part(rest, '/', 1) as entry, strpos(rest, '/') > 0 as folder, * from o
  ), items as (
    select entry as name, null::uuid as id, null::uuid as owner, null::int8 as size, null::text as mime_type,
      null::text as etag, null::jsonb as metadata, null::text as created_at, null::text as updated_at
    from e where folder group by entry
    union all
    select entry, id, owner, size, mime_type, etag, metadata, created_at, updated_at from e where not folder
  )
  select coalesce(json_agg(i order by ${order}), '[]')::text as body, count(*)::int8 as n, null::int8 as total from (
    select * from items i where $1[4] = '' or name ilike $1[4] escape '\\'
    order by ${order} limit $1[5]::int offset $1[6]::int
  ) i`;
}

/** Every object of one bucket (the ones the caller may delete), deleted. */
export const EMPTY = 'delete from storage.objects where bucket_id = $1[1]';

/** Deletes names (a JSON array) of one bucket; the deleted rows come back. */
export const DELETE = `with d as (
    delete from storage.objects where bucket_id = $1[1] and name in (select jsonb_array_elements_text($1[2]::jsonb))
    returning ${PUBLIC_COLS}
  ) select coalesce(json_agg(d), '[]')::text as body, count(*)::int8 as n, null::int8 as total from d`;

/** Renames one object within its bucket: from $1[2] to $1[3]. */
export const MOVE = `with m as (
    update storage.objects set name = $1[3], updated_at = now() where bucket_id = $1[1] and name = $1[2]
    returning ${PUBLIC_COLS}
  ) select (select row_to_json(m)::text from m) as body, (select count(*) from m)::int8 as n, null::int8 as total`;

/** `%` and `_` and `\` taken literally in a LIKE pattern. */
export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Where an object operation's database errors happen, for db/errors.ts's table: under the
 * project's policies on storage.objects (a policy's or trigger's refusal answers as on the
 * REST API), and what the table's own constraints mean: a taken name, a missing bucket.
 */
export const OBJECT_ERRORS: DbErrorContext = {
  relation: { name: 'storage.objects', kind: 'table' },
  constraints: {
    objects_bucket_id_name_key: ['object_exists', 'An object with this name already exists; send x-upsert: true to replace it.'],
    objects_bucket_id_fkey: ['bucket_not_found', 'The bucket does not exist.'],
  },
};

/**
 * Moves one object to another bucket: from $1[1]/$1[2] to $1[4]/$1[3], its bytes now at version
 * $1[5] (copied there first); only while it is still the upload $1[6] that was copied.
 */
export const MOVE_ACROSS = `with m as (
    update storage.objects set bucket_id = $1[4], name = $1[3], version = $1[5]::uuid, updated_at = now()
    where bucket_id = $1[1] and name = $1[2] and version = $1[6]::uuid
    returning ${PUBLIC_COLS}
  ) select (select row_to_json(m)::text from m) as body, (select count(*) from m)::int8 as n, null::int8 as total`;

/**
 * Every object whose name starts with a prefix (not only a folder's), with full names: the
 * flat listing of Supabase's `list-v2` without a delimiter.
 * @example flatListSql({ column: 'name', order: 'asc' })
 */
export function flatListSql(sort?: { column: keyof typeof ORDERS; order: 'asc' | 'desc' }): string {
  const order = (ORDERS[sort?.column ?? 'name'] ?? ORDERS.name)[sort?.order === 'desc' ? 'desc' : 'asc'];
  return `select coalesce(json_agg(i order by ${order}), '[]')::text as body, count(*)::int8 as n, null::int8 as total from (
    select name, id, owner, size, mime_type, etag, metadata,
      ${isoSql('created_at')} as created_at, ${isoSql('updated_at')} as updated_at
    from storage.objects i where bucket_id = $1[1] and name like $1[2] escape '\\'
    order by ${order} limit $1[3]::int offset $1[4]::int
  ) i`;
}
