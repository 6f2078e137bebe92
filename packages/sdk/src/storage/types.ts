/** Shapes of the storage API (API.md §7), declared here so the SDK depends on nothing. */

/** An object as the server describes it after a write (upload, copy). */
export interface UploadedObject {
  bucket: string;
  name: string;
  size: number;
  mime_type: string;
  /** Quoted MD5 of the bytes, the object's ETag. */
  etag: string;
}

/** An object's full metadata (delete and move answers). */
export interface StorageObject extends UploadedObject {
  id: string;
  owner: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/**
 * One entry of `list()`: a file, or a folder (`id` and the other fields null). `name` is
 * relative to the listed prefix.
 */
export interface ListEntry {
  name: string;
  id: string | null;
  owner: string | null;
  size: number | null;
  mime_type: string | null;
  etag: string | null;
  metadata: Record<string, unknown> | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface Bucket {
  id: string;
  name: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: string;
  updated_at: string;
}

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
