/**
 * Shapes of the storage API. What the server answers (buckets, objects, list entries) is
 * `@plinth/shared`'s declaration; the options are the SDK's own.
 */
export type { Bucket, ListEntry, StorageObject, UploadedObject } from '@plinth/shared';

export interface BucketOptions {
  public?: boolean;
  /** Bytes; null: the server's STORAGE_MAX_FILE_SIZE. */
  file_size_limit?: number | null;
  /** e.g. `['image/*']`; null: any type. */
  allowed_mime_types?: string[] | null;
}

export interface UploadOptions {
  /** Replace an existing object of that name (`x-upsert: true`); otherwise 409 `object_exists`. */
  upsert?: boolean;
  /** The Content-Type to store; default: the Blob's or File's type, else `application/octet-stream`. */
  contentType?: string;
}

export interface ListOptions {
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
  /** Entries whose name contains this, case-insensitive. */
  search?: string;
}

export interface UrlOptions {
  /** Serve as an attachment: `true` under the object's own name, or a file name. */
  download?: boolean | string;
}

/** What `upload` takes: anything fetch can send. A stream is buffered in browsers (see `upload`). */
export type UploadBody = Blob | ArrayBuffer | ArrayBufferView | ReadableStream<Uint8Array> | string;
