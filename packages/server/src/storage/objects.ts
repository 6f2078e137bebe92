/**
 * Object operations: each one's access decided by the project's policies on storage.objects,
 * run as the caller through `Db.runAs` (the REST API's role-and-claims path), never by rules
 * written here. The bytes go to the backend under a fresh key for every upload; the row is
 * committed only once they are durable, and bytes no row points to any more are collected by
 * the garbage trigger and the sweep (sweep.ts).
 */
import type { ListEntry, StorageObject } from '@plinth/shared';
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { finished, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db, RoleContext } from '../db/index.js';
import { ApiError, fromDbError } from '../http/index.js';
import type { StorageBackend } from './backends/types.js';
import { BackendError } from './backends/types.js';
import type { Bucket, BucketService } from './buckets.js';
import type { ImageCache } from './image-cache.js';
import { Meter, tooLarge } from './meter.js';
import { mimeAllowed, mimeType, objectName } from './names.js';
import { DELETE, DRY_RUN, EMPTY, FIND, flatListSql, insertSql, likeEscape, listSql, MOVE, MOVE_ACROSS, OBJECT_ERRORS } from './sql.js';

/** An object with the key of its bytes (never sent). */
export interface StoredObject extends StorageObject {
  version: string;
}

export interface UploadInput {
  bucket: string;
  name: string;
  body: Readable;
  contentType: unknown;
  /** The declared Content-Length, when there is one: an over-size body is refused before it is read. */
  contentLength: number | null;
  upsert: boolean;
  /**
   * The bytes are already in the backend (a resumable upload's staged file): `body` is read for
   * the size and hash only, then `adopt(key)` moves them to the object's key instead of a put.
   */
  adopt?: (key: string) => Promise<void>;
  /** The uploader's own metadata (the `metadata` column), at most 8 KiB of JSON. */
  metadata?: Record<string, unknown>;
  /**
   * With `upsert`: replace only this upload of the name (its `version`), else 409
   * `object_exists` and nothing written (a compare-and-swap: a signed upload URL serves one upload).
   */
  replaces?: string;
}

/** How a folder listing is ordered (name bytewise by default). */
export interface ListSort {
  column: 'name' | 'created_at' | 'updated_at';
  order: 'asc' | 'desc';
}

const MAX_METADATA_BYTES = 8192;
const metadataTooLarge = () =>
  new ApiError('invalid_request', `An object's metadata is at most ${MAX_METADATA_BYTES} bytes of JSON.`, [
    { field: 'metadata', message: `is over ${MAX_METADATA_BYTES} bytes` },
  ]);

/**
 * The state of a name, as a signed upload URL is bound to it: '' when there is no object, else
 * a digest of the key of its bytes (new for every upload, so any upload through the URL, or any
 * other change, ends it; the key itself stays inside).
 * @example stateOf(await objects.find(SERVICE, 'docs', 'a.txt'))
 */
export function stateOf(object: StoredObject | null): string {
  return object === null ? '' : createHash('sha256').update(object.version).digest('base64url').slice(0, 22);
}

export interface ObjectDeps {
  db: Db;
  backend: StorageBackend;
  buckets: BucketService;
  maxFileSize: number;
  /** Called after a commit that left bytes to delete (deletes, upserts). */
  collect(): void;
  /** Stored image transforms, and whether transforms are on (image-cache.ts); on, not stored, when absent. */
  images?: ImageCache;
}

export const keyOf = (bucket: string, version: string) => `${bucket}/${version}`;

/** Transforms on, results not kept (tests that build the service alone). */
const NO_IMAGE_CACHE: ImageCache = { enabled: true, get: async () => null, put: async () => false };

/** A backend failure is the backend's (503), not the client's and not a bug. */
function backendFailure(err: unknown): unknown {
  return err instanceof BackendError
    ? new ApiError('storage_unavailable', 'The file storage is unavailable; try again shortly.', undefined, {
        cause: err,
        headers: { 'retry-after': '1' },
      })
    : err;
}

async function run(db: Db, who: RoleContext, sql: string, params: string[], rows = true) {
  try {
    return await db.runAs(who, sql, params, rows);
  } catch (err) {
    throw fromDbError(err, OBJECT_ERRORS);
  }
}

const notFound = () => new ApiError('not_found', 'No such object (or it is not visible to you).');

/**
 * The object operations of docs/storage.md.
 * @example const objects = createObjectService({ db, backend, buckets, maxFileSize, collect }); await objects.find(who, 'avatars', 'me.png');
 */
export function createObjectService(deps: ObjectDeps) {
  const { db, backend } = deps;

  /** Writes the row of an upload or a copy (as the caller); on refusal the new bytes go. */
  async function commit(who: RoleContext, key: string, params: string[], upsert: boolean, replaces = ''): Promise<void> {
    let written: number;
    try {
      written = (await run(db, who, insertSql(upsert, replaces !== ''), [...params, '', replaces], false)).n;
    } catch (err) {
      await backend.remove([key]).catch(() => undefined); // else the sweep takes it
      throw err;
    }
    if (written === 0) {
      // Only an upsert bound to one upload writes nothing: that upload was replaced meanwhile.
      await backend.remove([key]).catch(() => undefined);
      throw new ApiError('object_exists', 'The object was replaced while this upload ran; it was not overwritten.');
    }
    if (upsert) deps.collect();
  }

  /** The bytes of `source` copied to a new key of `bucket`; on failure nothing is left there. */
  async function copyBytes(source: StoredObject, bucket: string, version: string): Promise<string> {
    const key = keyOf(bucket, version);
    try {
      await backend.copy(keyOf(source.bucket, source.version), key);
    } catch (err) {
      await backend.remove([key]).catch(() => undefined);
      throw backendFailure(err);
    }
    return key;
  }

  /** A bucket's media types and size limit (the smaller of its own and the server's) for an object. */
  function checkFits(bucket: Bucket, mime: string, size: number | null): number {
    if (!mimeAllowed(bucket.allowed_mime_types, mime)) {
      throw new ApiError('invalid_mime_type', `The bucket "${bucket.id}" does not accept ${mime}.`, {
        allowed_mime_types: bucket.allowed_mime_types,
        mime_type: mime,
      });
    }
    const limit = Math.min(bucket.file_size_limit ?? deps.maxFileSize, deps.maxFileSize);
    if (size !== null && size > limit) throw tooLarge(limit);
    return limit;
  }

  return {
    /** One object as the caller may see it (SELECT policies), else null. */
    async find(who: RoleContext, bucket: string, name: string): Promise<StoredObject | null> {
      const r = await run(db, who, FIND, [bucket, name]);
      return r.body === null ? null : (JSON.parse(r.body) as StoredObject);
    },

    /**
     * Upload: checks (name, bucket, media type, declared size) and the INSERT policy in a
     * rolled-back statement before reading the body, so a refused upload is refused at once;
     * then the bytes, metered, to a fresh key; then the row. A body that fails, is aborted or
     * passes the limit leaves neither row nor bytes.
     */
    async upload(who: RoleContext, input: UploadInput) {
      const name = objectName(input.name);
      const bucket = await deps.buckets.get(input.bucket);
      const mime = mimeType(input.contentType);
      const limit = checkFits(bucket, mime.base, input.contentLength);
      const metadata = JSON.stringify(input.metadata ?? {});
      if (Buffer.byteLength(metadata) > MAX_METADATA_BYTES) throw metadataTooLarge();
      const version = randomUUID();
      const params = [bucket.id, name, String(input.contentLength ?? 0), mime.full, '', metadata, version];
      const replaces = input.replaces ?? '';
      await run(db, who, DRY_RUN, [...params, insertSql(input.upsert, replaces !== ''), replaces]);

      const key = keyOf(bucket.id, version);
      const meter = new Meter(limit);
      // Not pipeline(): on an error it would destroy the request, and with it the socket the
      // 413 must still be sent on. The body is only unhooked; an abort fails the meter.
      const body = input.body;
      body.pipe(meter);
      const stop = finished(body, { writable: false }, (err) => {
        if (err) meter.destroy(new ApiError('invalid_request', 'The upload was interrupted before its end.', undefined, { cause: err }));
      });
      try {
        if (input.adopt) {
          await pipeline(meter, new Writable({ write: (_chunk, _enc, done) => done() }));
          await input.adopt(key);
        } else await backend.put(key, meter, { contentType: mime.full });
      } catch (err) {
        body.unpipe(meter);
        body.pause();
        // put() removed its partial bytes; the body's own error (limit, abort) says what happened.
        throw backendFailure(err);
      } finally {
        stop();
      }
      params[2] = String(meter.size);
      params[4] = meter.etag;
      await commit(who, key, params, input.upsert, replaces);
      return { bucket: bucket.id, name, size: meter.size, mime_type: mime.full, etag: meter.etag };
    },

    /**
     * Whether the caller could upload to `name` now (its INSERT, or upsert, run and undone as in
     * `upload`), before any body: a signed upload URL is only made for who may upload there.
     */
    async mayUpload(
      who: RoleContext,
      bucketId: string,
      rawName: string,
      upsert: boolean,
      /** A resumable upload declares its type and size up front: the bucket's limits are checked too. */
      declared?: { contentType: unknown; size: number },
    ): Promise<{ bucket: string; name: string; mime: string }> {
      const name = objectName(rawName);
      const bucket = await deps.buckets.get(bucketId);
      const mime = declared ? mimeType(declared.contentType) : null;
      if (mime && declared) checkFits(bucket, mime.base, declared.size);
      const params = [bucket.id, name, String(declared?.size ?? 0), mime?.full ?? 'application/octet-stream', '', '{}', randomUUID()];
      await run(db, who, DRY_RUN, [...params, insertSql(upsert)]);
      return { bucket: bucket.id, name, mime: params[3] };
    },

    /** Folder entries under `prefix` the caller may see; folders have `id: null`. */
    async list(who: RoleContext, bucket: string, q: { prefix: string; search: string; limit: number; offset: number; sort?: ListSort }) {
      await deps.buckets.get(bucket);
      const prefix = q.prefix === '' || q.prefix.endsWith('/') ? q.prefix : `${q.prefix}/`;
      const search = q.search === '' ? '' : `%${likeEscape(q.search)}%`;
      const params = [bucket, `${likeEscape(prefix)}%`, String([...prefix].length), search, String(q.limit), String(q.offset)];
      const r = await run(db, who, listSql(q.sort), params);
      return JSON.parse(r.body ?? '[]') as ListEntry[];
    },

    /** Every object under a name prefix (any depth) the caller may see, with full names. */
    async listFlat(who: RoleContext, bucket: string, q: { prefix: string; limit: number; offset: number; sort?: ListSort }) {
      await deps.buckets.get(bucket);
      const params = [bucket, `${likeEscape(q.prefix)}%`, String(q.limit), String(q.offset)];
      const r = await run(db, who, flatListSql(q.sort), params);
      return JSON.parse(r.body ?? '[]') as ListEntry[];
    },

    /** Deletes the named objects the caller may delete; returns those deleted. */
    async remove(who: RoleContext, bucket: string, names: string[]): Promise<StorageObject[]> {
      const checked = names.map(objectName);
      const r = await run(db, who, DELETE, [bucket, JSON.stringify(checked)]);
      if (r.n > 0) deps.collect();
      return JSON.parse(r.body ?? '[]') as StorageObject[];
    },

    /** Deletes every object of a bucket the caller may delete (the secret key: all); returns how many. */
    async empty(who: RoleContext, bucket: string): Promise<number> {
      await deps.buckets.get(bucket);
      const r = await run(db, who, EMPTY, [bucket], false);
      if (r.n > 0) deps.collect();
      return r.n;
    },

    /**
     * Renames an object (UPDATE policies: the old row's USING, the new row's CHECK). To another
     * bucket (`toBucket`): that bucket's size and type limits apply, and the bytes are copied to a
     * key of the destination before the row moves to it (the old key is then collected).
     */
    async move(who: RoleContext, bucket: string, from: string, to: string, toBucket = bucket): Promise<StorageObject> {
      if (toBucket === bucket) {
        const r = await run(db, who, MOVE, [bucket, objectName(from), objectName(to)]);
        if (r.body === null) throw notFound();
        return JSON.parse(r.body) as StorageObject;
      }
      const source = await this.find(who, bucket, objectName(from));
      if (!source) throw notFound();
      const dest = await deps.buckets.get(toBucket);
      checkFits(dest, mimeType(source.mime_type).base, Number(source.size));
      const version = randomUUID();
      const key = await copyBytes(source, dest.id, version);
      let r: Awaited<ReturnType<typeof run>>;
      try {
        r = await run(db, who, MOVE_ACROSS, [bucket, source.name, objectName(to), dest.id, version, source.version]);
      } catch (err) {
        await backend.remove([key]).catch(() => undefined);
        throw err;
      }
      if (r.body === null) {
        await backend.remove([key]).catch(() => undefined);
        throw notFound();
      }
      deps.collect();
      return JSON.parse(r.body) as StorageObject;
    },

    /**
     * A new object with the bytes of another: SELECT on the source, INSERT of the copy (in
     * `toBucket`, under its limits, when given). Its metadata is the source's, or `metadata`.
     */
    async copy(who: RoleContext, bucket: string, from: string, to: string, metadata?: Record<string, unknown>, toBucket = bucket) {
      const target = objectName(to);
      const source = await this.find(who, bucket, objectName(from));
      if (!source) throw notFound();
      const dest = toBucket === bucket ? bucket : (await deps.buckets.get(toBucket)).id;
      if (dest !== bucket) checkFits(await deps.buckets.get(dest), mimeType(source.mime_type).base, Number(source.size));
      const version = randomUUID();
      const meta = JSON.stringify(metadata ?? source.metadata ?? {});
      if (Buffer.byteLength(meta) > MAX_METADATA_BYTES) throw metadataTooLarge();
      const params = [dest, target, String(source.size), source.mime_type, source.etag, meta, version];
      await run(db, who, DRY_RUN, [...params, insertSql(false)]);
      const key = await copyBytes(source, dest, version);
      await commit(who, key, params, false);
      return { bucket: dest, name: target, size: source.size, mime_type: source.mime_type, etag: source.etag };
    },

    /** Stored image transforms, and whether transforms are on (transform.ts reads through it). */
    images: deps.images ?? NO_IMAGE_CACHE,

    /** The bytes of a found object (a range of them); null when they vanished (replaced meanwhile). */
    async bytes(object: StoredObject, range?: { start: number; end: number }): Promise<Readable | Buffer | null> {
      try {
        return await backend.get(keyOf(object.bucket, object.version), range, Number(object.size));
      } catch (err) {
        throw backendFailure(err);
      }
    },
  };
}

export type ObjectService = ReturnType<typeof createObjectService>;
