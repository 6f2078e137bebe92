/**
 * Stored image transforms (docs/storage.md, "Image transforms"): a transform's result is kept in
 * the backend (disk or S3) under `<bucket>/<version>.t<16 hex digits of the options>`, next to
 * the original's bytes, and named in `storage.variants` (migration 0149). A later read of the same
 * object version with the same options is then one primary-key lookup and one backend read, no
 * decoding. Evicted with the object: the variants of a version go when its bytes are collected
 * (sweep.ts drains `storage.garbage` and the variants of the versions it deletes); a variant the
 * drain missed (written while its object went) has a dead version, and the orphan sweep takes it.
 * At most VARIANTS_PER_VERSION per version: past that a transform is served and not kept, so a
 * client asking for every width cannot fill the backend.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../db/index.js';
import type { StorageBackend } from './backends/types.js';

/** Results kept per object version; more are served and not kept. */
export const VARIANTS_PER_VERSION = 16;

/** The object's key (`<bucket>/<version>`) and the options' digest: the key of a stored result. */
export const variantKey = (objectKey: string, options: string) =>
  `${objectKey}.t${createHash('sha256').update(options).digest('hex').slice(0, 16)}`;

export interface ImageCache {
  /** False when transforms are turned off (STORAGE_IMAGE_TRANSFORMS=false, `[storage.image_transformation] enabled = false`). */
  readonly enabled: boolean;
  /** A stored result of `options` for this object version, or null. */
  get(objectKey: string, options: string): Promise<{ data: Buffer; type: string } | null>;
  /** Keeps a result (when its object is still there and the version holds fewer than the cap); never throws. */
  put(objectKey: string, version: string, options: string, data: Buffer, type: string): Promise<boolean>;
}

async function collect(bytes: Readable | Buffer): Promise<Buffer> {
  if (Buffer.isBuffer(bytes)) return bytes;
  const parts: Buffer[] = [];
  for await (const chunk of bytes) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/**
 * @example const images = createImageCache({ db, backend, enabled: true, log }); await images.get('avatars/0b5c…', 'w200|…')
 */
export function createImageCache(deps: { db: Db; backend: StorageBackend; enabled: boolean; log?: Logger }): ImageCache {
  const { db, backend } = deps;
  return {
    enabled: deps.enabled,
    async get(objectKey, options) {
      const key = variantKey(objectKey, options);
      const { rows } = await db.query<{ content_type: string; size: string }>(
        'select content_type, size::text as size from storage.variants where key = $1',
        [key],
      );
      if (!rows[0]) return null;
      // A row whose bytes are not there (a put that failed, a backend restored without them):
      // transformed again, as if never stored.
      const bytes = await backend.get(key, undefined, Number(rows[0].size)).catch(() => null);
      return bytes ? { data: await collect(bytes), type: rows[0].content_type } : null;
    },
    async put(objectKey, version, options, data, type) {
      const key = variantKey(objectKey, options);
      try {
        // Named first, then written: a drain between the two deletes a key with no bytes yet, and
        // the bytes written after it have a dead version, which the orphan sweep deletes.
        const { rows } = await db.query(
          `insert into storage.variants (key, version, content_type, size)
           select $1, $2::uuid, $3, $4::bigint
            where exists (select 1 from storage.objects where version = $2::uuid)
              and (select count(*) from storage.variants where version = $2::uuid) < ${VARIANTS_PER_VERSION}
           on conflict (key) do nothing returning 1`,
          [key, version, type, String(data.length)],
        );
        if (!rows[0]) return false;
        try {
          await backend.put(key, Readable.from([data]), { contentType: type });
        } catch (err) {
          await db.query('delete from storage.variants where key = $1', [key]).catch(() => undefined);
          throw err;
        }
        return true;
      } catch (err) {
        deps.log?.warn({ err }, 'storage: keeping a transformed image failed; it is transformed again next time');
        return false;
      }
    },
  };
}
