import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { ApiError } from '../http/index.js';

/**
 * The bytes of an upload on their way to the backend: counted, hashed (MD5, the ETag), and
 * stopped with 413 `payload_too_large` as soon as they pass the limit, whatever Content-Length
 * claimed (a chunked body has none).
 * @example const meter = new Meter(50 * 2 ** 20); await backend.put(key, req.raw.pipe(meter), …); meter.etag
 */
export class Meter extends Transform {
  size = 0;
  private readonly hash = createHash('md5');
  private digest: string | null = null;

  constructor(readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      done(tooLarge(this.limit));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.digest = this.hash.digest('hex');
    done();
  }

  /** The quoted ETag of the whole body, once it has ended. */
  get etag(): string {
    if (this.digest === null) throw new Error('storage: the body has not ended');
    return `"${this.digest}"`;
  }
}

/**
 * The 413 of a file over its limit, with the limit in bytes in `details`.
 * @example throw tooLarge(1024)
 */
export function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `The file is larger than the limit of ${limit} bytes for this bucket.`, { limit });
}
