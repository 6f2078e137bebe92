/**
 * The storage section of the config (docs/storage.md): which backend keeps the bytes, and the
 * largest file the server accepts. Every wrong value is a one-line `config: …` error naming
 * the variable, so a start never half-works with a bad setting.
 */
import { bool, ConfigError, type Env, httpUrl, optional, size } from './parse.js';

export interface S3Config {
  /** `S3_ENDPOINT`: an S3-compatible service (MinIO, R2, s3rver…); null for AWS itself. */
  endpoint: string | null;
  region: string;
  bucket: string;
  /** Both or neither: without them the AWS SDK's own chain (environment, instance role) is used. */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  /** `S3_FORCE_PATH_STYLE`: `http://host/bucket/key` rather than `http://bucket.host/key` (MinIO, s3rver). */
  forcePathStyle: boolean;
}

export interface StorageConfig {
  backend: 'disk' | 's3';
  /** `STORAGE_MAX_FILE_SIZE` in bytes (default 50 MiB); a bucket's own limit can only be lower. */
  maxFileSize: number;
  /** Set when `backend` is `s3`. */
  s3: S3Config | null;
  /** `STORAGE_IMAGE_TRANSFORMS` (default true): false refuses every transform (400 transforms_disabled). */
  imageTransforms: boolean;
}

/**
 * Reads STORAGE_BACKEND, STORAGE_MAX_FILE_SIZE, STORAGE_IMAGE_TRANSFORMS and the S3_* variables.
 * @example parseStorageConfig({ STORAGE_BACKEND: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'http://127.0.0.1:9000' })
 */
export function parseStorageConfig(env: Env): StorageConfig {
  const backend = (env.STORAGE_BACKEND || 'disk').trim();
  if (backend !== 'disk' && backend !== 's3') throw new ConfigError(`STORAGE_BACKEND must be "disk" or "s3", got "${backend}"`);
  const maxFileSize = size(env, 'STORAGE_MAX_FILE_SIZE', 50 * 2 ** 20);
  const imageTransforms = bool(env, 'STORAGE_IMAGE_TRANSFORMS', true);
  if (backend === 'disk') return { backend, maxFileSize, s3: null, imageTransforms };
  const bucket = optional(env, 'S3_BUCKET');
  if (!bucket) throw new ConfigError('STORAGE_BACKEND=s3 needs S3_BUCKET, the name of an existing bucket');
  const endpoint = httpUrl(env, 'S3_ENDPOINT', { base: true }) ?? null;
  const accessKeyId = env.S3_ACCESS_KEY_ID || null;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || null;
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new ConfigError('set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither (the AWS default credentials)');
  }
  return {
    backend,
    maxFileSize,
    imageTransforms,
    s3: {
      endpoint,
      region: optional(env, 'S3_REGION') ?? 'us-east-1',
      bucket,
      accessKeyId,
      secretAccessKey,
      forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', endpoint !== null),
    },
  };
}
