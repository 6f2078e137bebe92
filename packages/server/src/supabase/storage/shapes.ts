/**
 * Supabase Storage's shapes on the wire, written from storage's own objects and buckets (the
 * serializer of the face; nothing here decides anything), and its request bodies as TypeBox
 * schemas (the parser: storage-js's fields, names as it sends them).
 */
import { Type } from '@sinclair/typebox';
import { type Bucket, CACHE_CONTROL, type StoredObject } from '../../storage/index.js';

/** A bucket as Supabase's `GET /bucket/{id}` has it (`owner` null when made through the API, as Supabase's made with the service key). */
export function bucketShape(b: Bucket, owner: string | null = null) {
  return {
    id: b.id,
    name: b.name,
    owner,
    public: b.public,
    file_size_limit: b.file_size_limit,
    allowed_mime_types: b.allowed_mime_types,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

/** What Supabase keeps in an object's `metadata` (its user's own metadata is `user_metadata` there, `metadata` here). */
export function systemMetadata(o: { size: number | string; mime_type: string; etag: string; updated_at: string }) {
  return {
    eTag: o.etag,
    size: Number(o.size),
    mimetype: o.mime_type,
    cacheControl: CACHE_CONTROL.private,
    lastModified: o.updated_at,
    contentLength: Number(o.size),
    httpStatusCode: 200,
  };
}

/** A listing's entry (`POST /object/list`): a file, or a folder with `id` and the rest null. */
export function listEntryShape(e: {
  name: string;
  id: string | null;
  size: number | null;
  mime_type: string | null;
  etag: string | null;
  created_at: string | null;
  updated_at: string | null;
}) {
  const file = e.id !== null;
  return {
    name: e.name,
    id: e.id,
    updated_at: e.updated_at,
    created_at: e.created_at,
    last_accessed_at: e.updated_at,
    metadata: file ? systemMetadata(e as { size: number; mime_type: string; etag: string; updated_at: string }) : null,
  };
}

/** An object row, as Supabase's remove answers with the deleted ones. */
export function objectRowShape(o: {
  id: string;
  bucket: string;
  name: string;
  owner: string | null;
  size: number | string;
  mime_type: string;
  etag: string;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}) {
  return {
    id: o.id,
    bucket_id: o.bucket,
    name: o.name,
    owner: o.owner,
    owner_id: o.owner,
    created_at: o.created_at,
    updated_at: o.updated_at,
    last_accessed_at: o.updated_at,
    metadata: systemMetadata(o),
    user_metadata: o.metadata,
  };
}

/** `GET /object/info/…`: storage-js turns it into camelCase. `version` names the upload, not the key of its bytes. */
export function infoShape(o: StoredObject, version: string, cacheControl: string) {
  return {
    id: o.id,
    name: o.name,
    version,
    bucket_id: o.bucket,
    size: Number(o.size),
    content_type: o.mime_type,
    cache_control: cacheControl,
    etag: o.etag,
    metadata: o.metadata ?? {},
    last_modified: o.updated_at,
    created_at: o.created_at,
  };
}

/** A size limit as storage-js sends it: bytes, or a string with a unit (`'20mb'`: 20 000 000, as Supabase reads it). */
const SizeLimit = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ maxLength: 32 }), Type.Null()]);

export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const BucketParams = Type.Object({ bucket: Type.String({ maxLength: 100 }) });

export const BucketBody = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 100 })),
  name: Type.Optional(Type.String({ maxLength: 100 })),
  public: Type.Optional(Type.Boolean()),
  file_size_limit: Type.Optional(SizeLimit),
  allowed_mime_types: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }), Type.Null()])),
});

export const BucketListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  search: Type.Optional(Type.String({ maxLength: 100 })),
  sortColumn: Type.Optional(Type.Union([Type.Literal('id'), Type.Literal('name'), Type.Literal('created_at'), Type.Literal('updated_at')])),
  sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

const SortColumn = Type.Union([
  Type.Literal('name'),
  Type.Literal('created_at'),
  Type.Literal('updated_at'),
  Type.Literal('last_accessed_at'),
]);

export const ListBody = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: 1024 })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  search: Type.Optional(Type.String({ maxLength: 1024 })),
  sortBy: Type.Optional(
    Type.Object({ column: Type.Optional(SortColumn), order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])) }),
  ),
});

export const ListV2Body = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: 1024 })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
  cursor: Type.Optional(Type.String({ maxLength: 64 })),
  with_delimiter: Type.Optional(Type.Boolean()),
  sortBy: Type.Optional(
    Type.Object({
      column: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('created_at'), Type.Literal('updated_at')])),
      order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    }),
  ),
});

export const RemoveBody = Type.Object({
  prefixes: Type.Array(Type.Union([Type.String(), Type.Object({ path: Type.String() })]), { minItems: 1, maxItems: 1000 }),
});

export const MoveBody = Type.Object({
  bucketId: Type.String({ maxLength: 100 }),
  sourceKey: Type.String({ maxLength: 2048 }),
  destinationKey: Type.String({ maxLength: 2048 }),
  destinationBucket: Type.Optional(Type.String({ maxLength: 100 })),
  copyMetadata: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const SignBody = Type.Object({ expiresIn: Type.Integer(), transform: Type.Optional(Type.Unknown()) });
export const SignManyBody = Type.Object({
  expiresIn: Type.Integer(),
  paths: Type.Array(Type.String({ maxLength: 2048 }), { minItems: 1, maxItems: 1000 }),
});
export const TokenQuery = Type.Object({
  token: Type.String({ maxLength: 8192 }),
  download: Type.Optional(Type.String({ maxLength: 255 })),
});
export const DownloadQuery = Type.Object({ download: Type.Optional(Type.String({ maxLength: 255 })) });
/** `/render/image/…`: Supabase's transform options (checked by storage's transformOf). */
export const RenderQuery = Type.Object({
  download: Type.Optional(Type.String({ maxLength: 255 })),
  width: Type.Optional(Type.String({ maxLength: 6 })),
  height: Type.Optional(Type.String({ maxLength: 6 })),
  resize: Type.Optional(Type.String({ maxLength: 10 })),
  quality: Type.Optional(Type.String({ maxLength: 3 })),
  format: Type.Optional(Type.String({ maxLength: 10 })),
});
