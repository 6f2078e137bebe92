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
  close(): Promise<void>;
}

/** The backend failed or cannot be reached: the storage service answers 503 storage_unavailable. */
export class BackendError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackendError';
  }
}
