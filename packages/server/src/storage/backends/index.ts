import { join } from 'node:path';
import type { StorageConfig } from '../../config/index.js';
import { createDiskBackend } from './disk.js';
import type { StorageBackend } from './types.js';

export { BackendError, type ByteRange, type StorageBackend } from './types.js';
export { createDiskBackend, diskTempFiles, keyPath } from './disk.js';

/**
 * The configured backend: the disk under `<dataDir>/storage`, or S3. The S3 client is loaded
 * only when it is used (it is large, and warns about old Node versions when loaded).
 * @example const backend = await createBackend(config.storage, config.dataDir);
 */
export async function createBackend(config: StorageConfig, dataDir: string): Promise<StorageBackend> {
  if (config.backend === 's3' && config.s3) {
    const { createS3Backend } = await import('./s3.js');
    return createS3Backend(config.s3);
  }
  return createDiskBackend(join(dataDir, 'storage'));
}
