/** Buckets (docs/storage.md): managed with the secret key or an admin session, never by end-users. */
import type { Bucket } from '@plinth/shared';
import type { Db } from '../db/index.js';
import { ApiError, fromDbError } from '../http/index.js';
import { isoSql } from '../lib/index.js';
import { bucketName, isMimePattern } from './names.js';

export type { Bucket };

export interface BucketFields {
  public?: boolean;
  file_size_limit?: number | null;
  allowed_mime_types?: string[] | null;
}

/** A text[] from a JSON array parameter: the same on both drivers. */
const arrayOf = (p: string) => `(select array_agg(x) from jsonb_array_elements_text(${p}::jsonb) x)`;
const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

const COLS = `id, id as name, public, file_size_limit, allowed_mime_types, ${isoSql('created_at')} as created_at, ${isoSql('updated_at')} as updated_at`;

function row(r: Record<string, unknown>): Bucket {
  const limit = r.file_size_limit;
  return {
    id: String(r.id),
    name: String(r.name),
    public: r.public === true,
    file_size_limit: limit === null || limit === undefined ? null : Number(limit),
    allowed_mime_types: (r.allowed_mime_types as string[] | null) ?? null,
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
  };
}

/** Field rules TypeBox cannot say: a limit within the server's, well-formed media types. */
function checkFields(fields: BucketFields, maxFileSize: number): void {
  const problems: Array<{ field: string; message: string }> = [];
  if (fields.file_size_limit != null && fields.file_size_limit > maxFileSize) {
    problems.push({ field: 'file_size_limit', message: `must be at most the server's STORAGE_MAX_FILE_SIZE (${maxFileSize} bytes)` });
  }
  (fields.allowed_mime_types ?? []).forEach((t, i) => {
    if (!isMimePattern(t))
      problems.push({ field: `allowed_mime_types[${i}]`, message: 'must be a media type such as image/png, or image/*' });
  });
  if (problems.length) throw new ApiError('invalid_request', `The bucket's ${problems[0].field} ${problems[0].message}.`, problems);
}

const notFound = (name: string) => new ApiError('bucket_not_found', `No bucket "${name}".`);

/**
 * Bucket reads and writes, run as the server (buckets are not under the end-users' policies).
 * @example const buckets = createBucketService(db, 50 * 2 ** 20); await buckets.create('avatars', { public: true });
 */
export function createBucketService(db: Db, maxFileSize: number) {
  /** Buckets the project file (plinth.json) manages: their fields it names are refused through the API. */
  let managed: { file: string; fields: Map<string, string[]> } | null = null;
  const refuseManaged = (name: string, fields: BucketFields) => {
    const field = managed?.fields.get(name)?.find((f) => (fields as Record<string, unknown>)[f] !== undefined);
    if (managed && field)
      throw new ApiError('managed_by_config', `The bucket ${name}'s ${field} is managed by ${managed.file}; change it there.`, [
        { field, message: `is managed by ${managed.file}` },
      ]);
  };
  return {
    /** Marks the buckets (and their fields) the project file names as managed. */
    setManaged(file: string, fields: Map<string, string[]>) {
      managed = { file, fields };
    },
    /** The fields of `name` the project file manages, and the file; null when none. */
    managedOf(name: string): { file: string; fields: string[] } | null {
      const fields = managed?.fields.get(name);
      return managed && fields ? { file: managed.file, fields } : null;
    },
    /** Who made each bucket (`owner`, Supabase's column: set by SQL or a Supabase project's seed), by id. */
    async owners(): Promise<Map<string, string | null>> {
      const r = await db.query<{ id: string; owner: string | null }>('select id, owner::text as owner from storage.buckets');
      return new Map(r.rows.map((row) => [row.id, row.owner]));
    },
    async list(): Promise<Bucket[]> {
      return (await db.query(`select ${COLS} from storage.buckets order by id`)).rows.map(row);
    },
    /** The bucket, or null; names that cannot be buckets are simply not found. */
    async find(name: string): Promise<Bucket | null> {
      const r = (await db.query(`select ${COLS} from storage.buckets where id = $1`, [name])).rows[0];
      return r ? row(r) : null;
    },
    async get(name: string): Promise<Bucket> {
      const b = await this.find(name);
      if (!b) throw notFound(name);
      return b;
    },
    async create(name: unknown, fields: BucketFields): Promise<Bucket> {
      const id = bucketName(name);
      checkFields(fields, maxFileSize);
      try {
        const r = await db.query(
          `insert into storage.buckets (id, public, file_size_limit, allowed_mime_types) values ($1, $2, $3, ${arrayOf('$4')}) returning ${COLS}`,
          [id, fields.public ?? false, fields.file_size_limit ?? null, json(fields.allowed_mime_types)],
        );
        return row(r.rows[0]);
      } catch (err) {
        throw fromDbError(err, { constraints: { buckets_pkey: ['bucket_exists', `A bucket "${id}" already exists.`] } });
      }
    },
    /** `fromFile`: the project file's own apply (never refused as managed). */
    async update(name: string, fields: BucketFields, fromFile = false): Promise<Bucket> {
      if (!fromFile) refuseManaged(name, fields);
      checkFields(fields, maxFileSize);
      const r = await db.query(
        `update storage.buckets set
           public = case when $2::boolean is null then public else $2::boolean end,
           file_size_limit = case when $3 then $4::int8 else file_size_limit end,
           allowed_mime_types = case when $5 then ${arrayOf('$6')} else allowed_mime_types end,
           updated_at = now()
         where id = $1 returning ${COLS}`,
        [
          name,
          fields.public ?? null,
          fields.file_size_limit !== undefined,
          fields.file_size_limit ?? null,
          fields.allowed_mime_types !== undefined,
          json(fields.allowed_mime_types),
        ],
      );
      if (!r.rows[0]) throw notFound(name);
      return row(r.rows[0]);
    },
    /** Deletes an empty bucket; one with objects is 409 `bucket_not_empty`. */
    async remove(name: string): Promise<Bucket> {
      try {
        const r = await db.query(`delete from storage.buckets where id = $1 returning ${COLS}`, [name]);
        if (!r.rows[0]) throw notFound(name);
        return row(r.rows[0]);
      } catch (err) {
        throw fromDbError(err, {
          constraints: { objects_bucket_id_fkey: ['bucket_not_empty', `The bucket "${name}" still has objects; delete them first.`] },
        });
      }
    },
  };
}

export type BucketService = ReturnType<typeof createBucketService>;
