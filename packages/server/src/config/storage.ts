/**
 * The storage section of the config (API.md §7): which backend keeps the bytes, and the
 * largest file the server accepts. Every wrong value is a one-line `config: …` error naming
 * the variable, so a start never half-works with a bad setting.
 */

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
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/**
 * A size in bytes: a plain integer, or a number with a unit (`50MiB`, `1.5GB`, `512 KiB`).
 * @example parseSize('50MiB', 'STORAGE_MAX_FILE_SIZE') // 52428800
 */
export function parseSize(value: string, name: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`config: ${name} must be a size in bytes such as 52428800 or 50MiB, got "${value}"`);
  }
  return n;
}

function bool(value: string | undefined, fallback: boolean, name: string): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new Error(`config: ${name} must be true or false, got "${value}"`);
}

/**
 * Reads STORAGE_BACKEND, STORAGE_MAX_FILE_SIZE and the S3_* variables.
 * @example parseStorageConfig({ STORAGE_BACKEND: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'http://127.0.0.1:9000' })
 */
export function parseStorageConfig(env: Record<string, string | undefined>): StorageConfig {
  const backend = (env.STORAGE_BACKEND || 'disk').trim();
  if (backend !== 'disk' && backend !== 's3') throw new Error(`config: STORAGE_BACKEND must be "disk" or "s3", got "${backend}"`);
  const maxFileSize = env.STORAGE_MAX_FILE_SIZE ? parseSize(env.STORAGE_MAX_FILE_SIZE, 'STORAGE_MAX_FILE_SIZE') : 50 * 2 ** 20;
  if (backend === 'disk') return { backend, maxFileSize, s3: null };
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) throw new Error('config: STORAGE_BACKEND=s3 needs S3_BUCKET, the name of an existing bucket');
  const endpoint = env.S3_ENDPOINT?.trim() || null;
  if (endpoint !== null) {
    let ok = false;
    try {
      ok = /^https?:$/.test(new URL(endpoint).protocol);
    } catch {}
    if (!ok) throw new Error(`config: S3_ENDPOINT must be an http(s) URL such as http://127.0.0.1:9000, got "${endpoint}"`);
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID || null;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || null;
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new Error('config: set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither (the AWS default credentials)');
  }
  return {
    backend,
    maxFileSize,
    s3: {
      endpoint,
      region: env.S3_REGION?.trim() || 'us-east-1',
      bucket,
      accessKeyId,
      secretAccessKey,
      forcePathStyle: bool(env.S3_FORCE_PATH_STYLE, endpoint !== null, 'S3_FORCE_PATH_STYLE'),
    },
  };
}
