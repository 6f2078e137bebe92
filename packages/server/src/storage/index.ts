/**
 * File storage (docs/storage.md). What this area adds:
 * - endpoints (route table: routes.ts, handlers in handlers/): buckets `POST|GET
 *   /api/v1/storage/buckets`, `GET|PATCH|DELETE /api/v1/storage/buckets/{name}` (secret key or
 *   admin); objects (any key or token, or the admin cookie as the secret key: http/guards.ts)
 *   `POST|PUT|GET|HEAD|DELETE /api/v1/storage/object/{bucket}/{path}`, list
 *   `GET /api/v1/storage/object/{bucket}`, bulk delete `DELETE /api/v1/storage/object/{bucket}`,
 *   `POST /api/v1/storage/object/{bucket}/move|copy`; signed URLs
 *   `POST|GET /api/v1/storage/sign/{bucket}/{path}`; public buckets
 *   `GET /api/v1/storage/public/{bucket}/{path}`; resumable uploads (TUS 1.0.0, resumable.ts)
 *   `POST|OPTIONS /api/v1/storage/upload/resumable`, `HEAD|PATCH|DELETE …/{id}`.
 * - tables (migration 0020_storage.sql): storage.buckets, storage.objects (RLS: the project's
 *   policies decide every object operation), storage.garbage (bytes to delete),
 *   storage.sweeps, storage.variants (stored image transforms, migration 0149), storage.uploads
 *   (resumable uploads under way, migration 0180); functions storage.dry_run, storage.foldername/filename/extension.
 * - backends (backends/): the disk under the data dir, or S3 (`STORAGE_BACKEND=s3`).
 * - error codes: bucket_not_found, bucket_exists, bucket_not_empty, invalid_bucket_name,
 *   object_exists, invalid_object_name, invalid_mime_type, payload_too_large,
 *   range_not_satisfiable, storage_unavailable, rls_violation, not_found, token_invalid; any
 *   other database error answers as on every route (db/errors.ts: a policy's or trigger's
 *   raise is raised_exception).
 * - a sweep every 10 minutes (sweep.ts) of bytes no row points to.
 * - for other faces (supabase/storage/): the services, `links` (links.ts: the rules of signed and
 *   public URLs and signed uploads), `serveObject`, `acceptRawBodies` and the name parsers, so a
 *   face parses and shapes but decides nothing itself.
 */
import type { Logger } from 'pino';
import type { StorageConfig } from '../config/index.js';
import type { Db } from '../db/index.js';
import type { App, CallerGuards } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import { createBackend } from './backends/index.js';
import type { StorageBackend } from './backends/types.js';
import { type BucketService, createBucketService } from './buckets.js';
import { createBucketHandlers } from './handlers/buckets.js';
import { createLinkHandlers } from './handlers/links.js';
import { createObjectHandlers } from './handlers/objects.js';
import { createImageCache } from './image-cache.js';
import { createLinks, type Links } from './links.js';
import { type ObjectService, createObjectService } from './objects.js';
import { createResumable, type Resumable } from './resumable.js';
import { registerStorageRoutes } from './routes.js';
import { createSignedUrls, type UrlTokens } from './signed.js';
import { createSweeper, type SweepOptions, type Sweeper } from './sweep.js';

export { objectName, bucketName, decodeName, mimeType, STORAGE_PREFIX } from './names.js';
export { CACHE_CONTROL, serveObject, type ServeOptions } from './download.js';
export { MAX_URL_SECONDS } from './schemas.js';
export { acceptRawBodies } from './handlers/raw-body.js';
export { UPLOAD_URL_SECONDS, type Links } from './links.js';
export { stateOf, type ListSort, type ObjectService, type StoredObject, type UploadInput } from './objects.js';
export type { Bucket, BucketFields, BucketService } from './buckets.js';
export { createDiskBackend, keyPath, type StorageBackend } from './backends/index.js';
export type { SweepOptions, SweepReport } from './sweep.js';
export { type ImageTransform, MAX_DIMENSION, MAX_INPUT_PIXELS, transformOf } from './transform.js';
export { parseMetadata, RESUMABLE_EXPIRY_MS, TUS_EXTENSIONS, TUS_VERSION, type Resumable } from './resumable.js';

export interface StorageOptions {
  db: Db;
  config: StorageConfig;
  /** `<dataDir>/storage` holds the disk backend's files. */
  dataDir: string;
  publicUrl: string;
  /** Signs and verifies signed-URL tokens: the TokenService's `signObjectUrl` / `verifyObjectUrl`. */
  urlTokens: UrlTokens;
  /** Who is calling (http/guards.ts): keys, tokens, the console's cookie. */
  callers: CallerGuards;
  clock: Clock;
  log: Logger;
  /** Tests: another backend, or other sweep timings. */
  backend?: StorageBackend;
  sweep?: Partial<SweepOptions>;
}

export interface Storage {
  backend: StorageBackend;
  buckets: BucketService;
  objects: ObjectService;
  /** Signed and public URLs, signed uploads: their rules, for every face that serves them. */
  links: Links;
  /** Resumable (TUS) uploads, ending in `objects.upload`: for every face that serves them. */
  resumable: Resumable;
  /** The largest file the server takes (STORAGE_MAX_FILE_SIZE). */
  maxFileSize: number;
  sweeper: Sweeper;
  close(): Promise<void>;
}

/**
 * Opens the backend, mounts the storage routes and starts the sweep.
 * @example const storage = await registerStorage(app, { db, config: config.storage, dataDir: config.dataDir, publicUrl: config.publicUrl, urlTokens, callers, clock, log });
 */
export async function registerStorage(app: App, options: StorageOptions): Promise<Storage> {
  const backend = options.backend ?? (await createBackend(options.config, options.dataDir));
  const sweeper = createSweeper({ db: options.db, backend, clock: options.clock, log: options.log, options: options.sweep });
  const buckets = createBucketService(options.db, options.config.maxFileSize);
  const objects = createObjectService({
    db: options.db,
    backend,
    buckets,
    maxFileSize: options.config.maxFileSize,
    collect: () => sweeper.kick(),
    images: createImageCache({ db: options.db, backend, enabled: options.config.imageTransforms, log: options.log }),
  });
  const signed = createSignedUrls(options.urlTokens, options.publicUrl);
  const links = createLinks(objects, buckets, signed);
  const resumable = createResumable({ db: options.db, objects, staging: backend.staging, clock: options.clock });
  await registerStorageRoutes(app, options.callers, resumable, options.config.maxFileSize, {
    buckets: createBucketHandlers(buckets),
    objects: createObjectHandlers(objects),
    links: createLinkHandlers(objects, links, signed),
  });
  sweeper.start();
  resumable.start();
  return {
    backend,
    buckets,
    objects,
    links,
    resumable,
    maxFileSize: options.config.maxFileSize,
    sweeper,
    async close() {
      await resumable.close();
      await sweeper.close();
      await backend.close();
    },
  };
}
