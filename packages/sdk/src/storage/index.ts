import { send } from '../fetch.js';
import type { Result } from '../types.js';
import { StorageBucket, type StorageContext } from './bucket.js';
import type { Bucket, BucketOptions } from './types.js';

export { StorageBucket, encodePath, type StorageContext } from './bucket.js';
export type * from './types.js';

/**
 * `client.storage`: files in buckets (docs/storage.md). Object calls carry the signed-in user's
 * access token like database calls, so the project's policies on `storage.objects` decide.
 * The bucket methods are management calls: they work only for a client made with the secret
 * key (server-side).
 */
export class StorageClient {
  constructor(private readonly ctx: StorageContext) {}

  /**
   * The files of one bucket.
   * @example const { data, error } = await client.storage.from('avatars').upload('me.png', file);
   */
  from(bucket: string): StorageBucket {
    return new StorageBucket(this.ctx, bucket);
  }

  private async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Result<T>> {
    const res = await send<T>(this.ctx.http, { method, path: `/api/v1/storage/buckets${path}`, body, token: await this.ctx.accessToken() });
    return res.error ? { data: null, error: res.error } : { data: res.data, error: null };
  }

  /** Every bucket (secret key). @example const { data } = await admin.storage.listBuckets(); */
  listBuckets(): Promise<Result<Bucket[]>> {
    return this.call('GET', '');
  }

  /** One bucket (secret key). @example await admin.storage.getBucket('avatars'); */
  getBucket(name: string): Promise<Result<Bucket>> {
    return this.call('GET', `/${encodeURIComponent(name)}`);
  }

  /** Creates a bucket (secret key). @example await admin.storage.createBucket('avatars', { public: true, allowed_mime_types: ['image/*'] }); */
  createBucket(name: string, options: BucketOptions = {}): Promise<Result<Bucket>> {
    return this.call('POST', '', { name, ...options });
  }

  /** Changes a bucket (secret key). @example await admin.storage.updateBucket('avatars', { file_size_limit: 1048576 }); */
  updateBucket(name: string, options: BucketOptions): Promise<Result<Bucket>> {
    return this.call('PATCH', `/${encodeURIComponent(name)}`, options);
  }

  /** Deletes an empty bucket (secret key); one with files is `bucket_not_empty`. @example await admin.storage.deleteBucket('old'); */
  deleteBucket(name: string): Promise<Result<Bucket>> {
    return this.call('DELETE', `/${encodeURIComponent(name)}`);
  }
}
