/**
 * Types of the storage API (docs/storage.md) that cross the network: the server's response
 * schemas are checked against them (storage/schemas.ts) and the SDK exports them as they are.
 * Times are wire time (RFC 3339 UTC with milliseconds).
 */

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
  /** The uploader (`auth.uid()`); null for anon and the secret key. */
  owner: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/**
 * One entry of a folder listing: a file, or a folder (`id` and the other fields null). `name`
 * is relative to the listed prefix.
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
