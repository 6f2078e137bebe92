/**
 * TypeBox schemas of the storage routes: they validate requests, describe them in OpenAPI, and
 * (the answers) are checked against packages/shared's storage types.
 */
import type * as Wire from '@plinth/shared';
import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, wireSchema } from '../http/index.js';
const Count = (description: string) => Type.String({ pattern: '^[0-9]{1,9}$', description });

export const BucketParams = Type.Object({ name: Type.String({ maxLength: 63, description: 'The bucket name' }) });
/** `{bucket}` and the object path (`*`, percent-encoded, `/` between folders). */
export const ObjectParams = Type.Object({
  bucket: Type.String({ maxLength: 63, description: 'The bucket name' }),
  '*': Type.String({ description: 'The object name: percent-encoded UTF-8, "/" between folders' }),
});
export const BucketOnlyParams = Type.Object({ bucket: Type.String({ maxLength: 63, description: 'The bucket name' }) });

const MimeTypes = Type.Array(Type.String({ maxLength: 255 }), {
  maxItems: 100,
  description: 'e.g. ["image/*", "application/pdf"]; null: any',
});
const Limit = Type.Integer({ minimum: 1, description: 'Bytes; at most STORAGE_MAX_FILE_SIZE; null: the server limit' });

export const BucketCreate = Type.Object(
  {
    name: Type.String({ maxLength: 63, description: '1–63 of a-z 0-9 _ . -' }),
    public: Type.Optional(Type.Boolean({ description: 'Served without a key at /api/v1/storage/public/{bucket}/{path}' })),
    file_size_limit: Type.Optional(Type.Union([Limit, Type.Null()])),
    allowed_mime_types: Type.Optional(Type.Union([MimeTypes, Type.Null()])),
  },
  { additionalProperties: false },
);
export const BucketPatch = Type.Object(
  {
    public: Type.Optional(Type.Boolean()),
    file_size_limit: Type.Optional(Type.Union([Limit, Type.Null()])),
    allowed_mime_types: Type.Optional(Type.Union([MimeTypes, Type.Null()])),
  },
  { additionalProperties: false },
);
export const Bucket = wireSchema<Wire.Bucket>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    public: Type.Boolean(),
    file_size_limit: Type.Union([Type.Integer(), Type.Null()]),
    allowed_mime_types: Type.Union([Type.Array(Type.String()), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

export const ObjectInfo = wireSchema<Wire.StorageObject>()(
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    bucket: Type.String(),
    name: Type.String(),
    owner: Nullable(Type.String({ description: 'The uploader (auth.uid()); null for anon and the secret key' })),
    size: Type.Integer(),
    mime_type: Type.String(),
    etag: Type.String(),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export const Uploaded = wireSchema<Wire.UploadedObject>()(
  Type.Object({
    bucket: Type.String(),
    name: Type.String(),
    size: Type.Integer(),
    mime_type: Type.String(),
    etag: Type.String({ description: 'Quoted MD5 of the bytes' }),
  }),
);
/** A list entry: a file, or a folder (`id` and the rest null). */
export const ListEntry = wireSchema<Wire.ListEntry>()(
  Type.Object({
    name: Type.String({ description: 'Relative to the prefix' }),
    id: Type.Union([Type.String(), Type.Null()]),
    owner: Type.Union([Type.String(), Type.Null()]),
    size: Type.Union([Type.Integer(), Type.Null()]),
    mime_type: Type.Union([Type.String(), Type.Null()]),
    etag: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    created_at: Type.Union([Timestamp, Type.Null()]),
    updated_at: Type.Union([Timestamp, Type.Null()]),
  }),
);
export const ListQuery = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: 1024, description: 'A folder, e.g. "photos/2024"' })),
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Entries whose name contains this (case-insensitive)' })),
  limit: Type.Optional(Count('Default 100, at most 1000')),
  offset: Type.Optional(Count('Default 0')),
});
export const DeleteMany = Type.Object(
  { paths: Type.Array(Type.String({ maxLength: 4096 }), { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
export const FromTo = Type.Object(
  { from: Type.String({ maxLength: 4096 }), to: Type.String({ maxLength: 4096 }) },
  { additionalProperties: false },
);
/** The longest a signed URL may last: 7 days. */
export const MAX_URL_SECONDS = 604800;
export const SignBody = Type.Object(
  { expires_in: Type.Integer({ minimum: 1, maximum: MAX_URL_SECONDS, description: 'Seconds (at most 7 days)' }) },
  { additionalProperties: false },
);
export const Signed = Type.Object({ signed_url: Type.String({ description: 'GET it without headers until it expires' }) });
/** Image transforms (transform.ts) on every read: any one of them given transforms the image. */
const TRANSFORM = {
  width: Type.Optional(Type.String({ maxLength: 6, description: 'Image transform: width in pixels (1–2500)' })),
  height: Type.Optional(Type.String({ maxLength: 6, description: 'Image transform: height in pixels (1–2500)' })),
  resize: Type.Optional(Type.Union([Type.Literal('cover'), Type.Literal('contain'), Type.Literal('fill')])),
  quality: Type.Optional(Type.String({ maxLength: 3, description: 'Image transform: 20–100 (default 80)' })),
  format: Type.Optional(
    Type.Union([Type.Literal('origin'), Type.Literal('webp'), Type.Literal('avif')], { description: 'Default: WebP when accepted' }),
  ),
};
export const DownloadQuery = Type.Object({
  download: Type.Optional(
    Type.String({ maxLength: 255, description: 'Send as an attachment with this file name ("" for the object\'s own)' }),
  ),
  ...TRANSFORM,
});
export const SignedQuery = Type.Object({
  token: Type.String({ maxLength: 8192 }),
  download: DownloadQuery.properties.download,
  ...TRANSFORM,
});

const binary = (description: string) => ({ description, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } });
/** Documented only: a download is the stored bytes, streamed, not serialized JSON. */
export const BYTES_RESPONSE = {
  200: binary('The bytes, with Content-Type, ETag, Content-Length, Last-Modified'),
  206: binary('The bytes of the one range asked for (Range), with Content-Range'),
  304: { description: 'Not modified (If-None-Match named the ETag)', type: 'null' },
};

/** Object routes are the storage API of apps (the bucket routes are management). */
export const STORAGE_TAG = { tags: ['storage'] };
/** Signed and public reads need no key at all. */
export const NO_KEY = { tags: ['storage'], security: [] };

const array = <T>(items: T) => ({ type: 'array', items }) as const;

/** The schema of each storage route (request validation and its OpenAPI entry), by route. */
export const ROUTES = {
  bucketCreate: { body: BucketCreate, response: { 201: Bucket } },
  bucketList: { response: { 200: array(Bucket) } },
  bucketGet: { params: BucketParams, response: { 200: Bucket } },
  bucketUpdate: { params: BucketParams, body: BucketPatch, response: { 200: Bucket } },
  bucketDelete: { params: BucketParams, response: { 200: Bucket } },
  download: { ...STORAGE_TAG, params: ObjectParams, querystring: DownloadQuery, response: BYTES_RESPONSE },
  list: { ...STORAGE_TAG, params: BucketOnlyParams, querystring: ListQuery, response: { 200: array(ListEntry) } },
  remove: { ...STORAGE_TAG, params: ObjectParams, response: { 200: ObjectInfo } },
  removeMany: { ...STORAGE_TAG, params: BucketOnlyParams, body: DeleteMany, response: { 200: array(ObjectInfo) } },
  move: { ...STORAGE_TAG, params: BucketOnlyParams, body: FromTo, response: { 200: ObjectInfo } },
  copy: { ...STORAGE_TAG, params: BucketOnlyParams, body: FromTo, response: { 200: Uploaded } },
  sign: { ...STORAGE_TAG, params: ObjectParams, body: SignBody, response: { 200: Signed } },
  signedDownload: { ...NO_KEY, params: ObjectParams, querystring: SignedQuery, response: BYTES_RESPONSE },
  publicDownload: { ...NO_KEY, params: ObjectParams, querystring: DownloadQuery, response: BYTES_RESPONSE },
  upload: {
    ...STORAGE_TAG,
    params: ObjectParams,
    headers: { type: 'object', properties: { 'x-upsert': { type: 'string', enum: ['true', 'false'] } } },
    response: { 201: Uploaded },
  },
};
