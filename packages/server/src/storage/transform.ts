/**
 * Image transforms (docs/storage.md, "Image transforms"): an object read through any of
 * storage's reads (a user's, a public bucket's, a signed URL's), resized and re-encoded by
 * `sharp` on the way out. Who may read is decided before, by the read itself; here only the
 * pixels change. Bounded: at most 2500 pixels a side out, 50 megapixels and 32 MiB in, two
 * transforms at once (the others wait their turn), and sharp's own cache off, so a burst of
 * transforms holds a few decoded images, not dozens. `sharp` (libvips, ~40 MiB once loaded) is
 * imported on the first transform only: a server that never transforms never loads it.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import { keyOf, type ObjectService, type StoredObject } from './objects.js';

export const RESIZE_MODES = ['cover', 'contain', 'fill'] as const;
export const FORMATS = ['origin', 'webp', 'avif'] as const;
/** The largest width or height asked for (Supabase's bound). */
export const MAX_DIMENSION = 2500;
/** The largest image decoded: 50 megapixels (8660 × 5773), about 200 MiB of pixels at most. */
export const MAX_INPUT_PIXELS = 50_000_000;
/** The largest file read for a transform. */
export const MAX_INPUT_BYTES = 32 * 2 ** 20;
/** Transforms running at once; more wait. Two cores here: more at once would only hold more memory. */
const AT_ONCE = 2;

export interface ImageTransform {
  width?: number;
  height?: number;
  resize: (typeof RESIZE_MODES)[number];
  quality: number;
  /** `auto` (no `format` asked for): WebP when the client accepts it, else the original's. */
  format: (typeof FORMATS)[number] | 'auto';
}

const bad = (field: string, message: string) => new ApiError('invalid_request', `${field} ${message}.`, [{ field, message }]);

function int(v: unknown, field: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'number' ? v : /^\d{1,6}$/.test(String(v)) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw bad(field, `must be an integer from ${min} to ${max}`);
  return n;
}

/**
 * The transform a query (or a signed URL's `transform` object) asks for; null when it asks none
 * (the original is served as it is). 400 for a value out of bounds.
 * @example transformOf({ width: '200', format: 'webp' }) // { width: 200, resize: 'cover', quality: 80, format: 'webp' }
 */
export function transformOf(q: Record<string, unknown> | undefined | null): ImageTransform | null {
  if (!q) return null;
  const width = int(q.width, 'width', 1, MAX_DIMENSION);
  const height = int(q.height, 'height', 1, MAX_DIMENSION);
  const quality = int(q.quality, 'quality', 20, 100);
  const resize = q.resize ?? 'cover';
  const format = q.format ?? 'auto';
  if (width === undefined && height === undefined && quality === undefined && q.format === undefined) return null;
  if (!RESIZE_MODES.includes(resize as never)) throw bad('resize', `must be one of ${RESIZE_MODES.join(', ')}`);
  if (format !== 'auto' && !FORMATS.includes(format as never)) throw bad('format', `must be one of ${FORMATS.join(', ')}`);
  return {
    ...(width !== undefined ? { width } : {}),
    ...(height !== undefined ? { height } : {}),
    resize: resize as ImageTransform['resize'],
    quality: quality ?? 80,
    format: format as ImageTransform['format'],
  };
}

type Sharp = typeof import('sharp');
let loading: Promise<Sharp> | null = null;
/** sharp, imported once, on the first transform. */
function sharpModule(): Promise<Sharp> {
  loading ??= import('sharp').then((m) => {
    const sharp = (m.default ?? m) as Sharp;
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  });
  return loading;
}

let running = 0;
const waiting: Array<() => void> = [];
async function turn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

const RESIZING_TYPE = { cover: 'fill', contain: 'fit', fill: 'force' } as const;
/**
 * `X-Transformations`, as Supabase's answers carry it (imgproxy's words: cover is `fill`).
 * @example described({ width: 200, height: 200, resize: 'cover', quality: 60, format: 'auto' }) // 'height:200,width:200,resizing_type:fill,quality:60'
 */
function described(t: ImageTransform): string {
  const parts = [];
  if (t.height !== undefined) parts.push(`height:${t.height}`);
  if (t.width !== undefined) parts.push(`width:${t.width}`);
  parts.push(`resizing_type:${RESIZING_TYPE[t.resize]}`);
  if (t.quality !== 80) parts.push(`quality:${t.quality}`);
  if (t.format === 'webp' || t.format === 'avif') parts.push(`format:${t.format}`);
  return parts.join(',');
}

/** The formats written back as they are for `origin`; any other (SVG, HEIF, TIFF…) becomes PNG. */
const KEPT = new Set(['jpeg', 'png', 'webp', 'avif', 'gif']);

async function collect(bytes: Readable | Buffer): Promise<Buffer> {
  if (Buffer.isBuffer(bytes)) return bytes;
  const parts: Buffer[] = [];
  for await (const chunk of bytes) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/**
 * Answers GET or HEAD with the object transformed: 415 `unsupported_media_type` for bytes that are
 * not an image, 413 `payload_too_large` past the input bounds. The ETag is the object's and the
 * transform's, so a browser revalidates to 304 without any pixel being touched.
 */
export async function serveTransformed(
  objects: ObjectService,
  req: FastifyRequest,
  reply: FastifyReply,
  object: StoredObject,
  t: ImageTransform,
  headers: Record<string, string>,
): Promise<FastifyReply> {
  // Not the stored type but the bytes decide what is an image (clients upload photos as
  // text/plain or application/octet-stream); every pixel is decoded and encoded again, so nothing
  // of the stored bytes but the picture reaches the answer.
  if (Number(object.size) > MAX_INPUT_BYTES) {
    throw new ApiError('payload_too_large', `Images over ${MAX_INPUT_BYTES} bytes are not transformed.`, { limit: MAX_INPUT_BYTES });
  }
  if (!objects.images.enabled) {
    throw new ApiError('transforms_disabled', 'Image transforms are turned off on this server (STORAGE_IMAGE_TRANSFORMS=false).');
  }
  const accept = String(req.headers.accept ?? '');
  const format = t.format === 'auto' ? (accept.includes('image/webp') ? 'webp' : 'origin') : t.format;
  const options = `${t.width ?? ''}|${t.height ?? ''}|${t.resize}|${t.quality}|${format}`;
  const etag = `"${createHash('md5').update(`${object.etag}|${options}`).digest('hex')}"`;
  reply.headers({ ...headers, etag, 'last-modified': new Date(object.updated_at).toUTCString(), 'x-transformations': described(t) });
  if (t.format === 'auto') reply.header('vary', 'Accept');
  const inm = req.headers['if-none-match'];
  if (inm?.split(',').some((v) => v.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();

  const objectKey = keyOf(object.bucket, object.version);
  const stored = await objects.images.get(objectKey, options);
  const out = stored ?? (await turn(() => render(objects, object, t, format)));
  // Kept for the next read after this answer is on its way (a failure only logs: image-cache.ts).
  if (!stored) void objects.images.put(objectKey, object.version, options, out.data, out.type);
  reply
    .type(out.type)
    .header('content-length', out.data.length)
    .header('x-transform-cache', stored ? 'hit' : 'miss');
  if (req.method === 'HEAD') return reply.send();
  return reply.send(out.data);
}

/** Decodes, resizes and encodes (one of AT_ONCE turns). */
async function render(
  objects: ObjectService,
  object: StoredObject,
  t: ImageTransform,
  format: ImageTransform['format'],
): Promise<{ data: Buffer; type: string }> {
  const sharp = await sharpModule();
  const bytes = await objects.bytes(object);
  if (!bytes) throw new ApiError('not_found', 'The object was replaced or deleted meanwhile; try again.');
  const input = await collect(bytes);
  // The header first: what is not an image, or too many pixels, is refused before any decoding.
  const meta = await sharp(input, { limitInputPixels: false })
    .metadata()
    .catch((err: unknown) => {
      throw new ApiError('unsupported_media_type', 'The object is not an image this server can read.', undefined, { cause: err });
    });
  if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_INPUT_PIXELS) {
    throw new ApiError('payload_too_large', `Images over ${MAX_INPUT_PIXELS} pixels are not transformed.`, { limit: MAX_INPUT_PIXELS });
  }
  try {
    let img = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).rotate();
    if (t.width !== undefined || t.height !== undefined) {
      img = img.resize({ width: t.width, height: t.height, fit: t.resize, background: { r: 0, g: 0, b: 0, alpha: 0 } });
    }
    const original = meta.format ?? 'png';
    const target = format === 'origin' ? (KEPT.has(original) ? original : 'png') : format;
    img = img.toFormat(target as 'png', { quality: t.quality });
    const { data, info } = await img.toBuffer({ resolveWithObject: true });
    return { data, type: `image/${info.format === 'heif' ? 'avif' : info.format}` };
  } catch (err) {
    const message = (err as Error).message ?? '';
    if (/pixel limit/i.test(message)) {
      throw new ApiError('payload_too_large', `Images over ${MAX_INPUT_PIXELS} pixels are not transformed.`, { limit: MAX_INPUT_PIXELS });
    }
    throw new ApiError('unsupported_media_type', 'The object is not an image this server can read.', undefined, { cause: err });
  }
}
