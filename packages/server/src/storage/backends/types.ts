import type { Readable } from 'node:stream';

/** Bytes `start` to `end` of an object, both inclusive (an HTTP byte range). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where the bytes of objects live: one small interface, two adapters (disk.ts, s3.ts). Keys are
 * made by the storage service only (`<bucket>/<uuid>`), never from a client's object name.
 */
export interface StorageBackend {
  readonly kind: 'disk' | 's3';
  /**
   * Streams `body` to `key` and resolves once the bytes are durable (flushed and renamed on
   * disk; the S3 service acknowledged them). When `body` fails or is aborted it rejects and
   * leaves nothing at `key`.
   */
  put(key: string, body: Readable, info: { contentType: string }): Promise<void>;
  /**
   * The bytes (or a range of them) as a stream; null when there is no such key. Given the
   * object's `size`, a backend may answer a small one as a single Buffer instead (the disk does
   * up to 1 MiB: one read and one socket write, no stream machinery).
   */
  get(key: string, range?: ByteRange, size?: number): Promise<Readable | Buffer | null>;
  /** Copies the bytes of `from` to `to` (durable when it resolves). */
  copy(from: string, to: string): Promise<void>;
  /** Deletes keys; a key that is already gone is no error. */
  remove(keys: string[]): Promise<void>;
  /** Every stored key with its last modification time (ms), for the sweep of orphans. */
  list(): AsyncIterable<{ key: string; modified: number }>;
  /** Removes what interrupted uploads left that is older than `before` (ms); returns how many. */
  cleanIncomplete(before: number): Promise<number>;
  /** Where resumable uploads' bytes wait (resumable.ts): reached by every instance sharing this backend. */
  readonly staging: UploadStaging;
  close(): Promise<void>;
}

/**
 * The bytes of resumable uploads under way, kept where every instance sharing the backend
 * reaches them; their state (offset, parts) is in `storage.uploads` (resumable.ts).
 * - `file` (disk): one file per upload under the storage directory, written at any offset.
 * - `parts` (S3): a multipart upload, written in parts of exactly `partSize` bytes but the last
 *   (part n holds bytes from (n-1)·partSize, so a part sent again after a cut replaces itself).
 */
export interface UploadStaging {
  readonly kind: 'file' | 'parts';
  readonly partSize: number;
  /** Starts an upload's staging; the handle to keep (S3: the multipart's upload id; disk: ''). */
  start(id: string): Promise<string>;
  /** `file`: the upload's file, cut to `offset`, to be written from there. */
  openAt(id: string, offset: number): Promise<{ write(data: Buffer): Promise<void>; close(): Promise<void> }>;
  /** `parts`: stores part `n` (from 1); resolves to its ETag. */
  part(id: string, handle: string, n: number, data: Buffer): Promise<string>;
  /** All the bytes, once every one arrived (`parts`: completes the multipart with these ETags first). */
  read(id: string, handle: string, etags: string[]): Promise<Readable>;
  /**
   * `file` only: moves the staged bytes to the object key `key` (flushed first), where a put of
   * `read`'s stream would write them again: the finish of a large upload then writes its bytes once.
   */
  adopt?(id: string, key: string): Promise<void>;
  /** Deletes what is staged (S3: aborts the multipart and deletes an assembled copy); no error when gone. */
  discard(id: string, handle: string): Promise<void>;
  /** Staged uploads older than `before` (ms), with their handle, for the sweep of those no row names. */
  list(before: number): AsyncIterable<{ id: string; handle: string }>;
}

/** The backend failed or cannot be reached: the storage service answers 503 storage_unavailable. */
export class BackendError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackendError';
  }
}
