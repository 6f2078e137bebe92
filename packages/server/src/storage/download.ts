/**
 * The HTTP of downloads: byte ranges, conditional requests, file names (pure functions), and
 * `serveObject`, which answers GET or HEAD with an object's bytes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import type { ObjectService, StoredObject } from './objects.js';
import { type ImageTransform, serveTransformed } from './transform.js';

export type RangeDecision = { kind: 'all' } | { kind: 'part'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Reads a `Range` header against an object of `size` bytes (RFC 9110 §14). One range of bytes
 * is served as 206; a header that is malformed, of another unit, or of several ranges is
 * ignored (200 with everything, as the RFC allows); a range starting past the end is 416.
 * @example parseRange('bytes=0-99', 1000) // { kind: 'part', start: 0, end: 99 }
 * @example parseRange('bytes=-100', 1000) // { kind: 'part', start: 900, end: 999 }
 */
export function parseRange(header: string | undefined, size: number): RangeDecision {
  if (!header) return { kind: 'all' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'all' };
  if (m[1] === '') {
    // The last N bytes.
    const n = Number(m[2]);
    if (n === 0) return { kind: 'unsatisfiable' };
    if (size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (!Number.isSafeInteger(start) || start >= size) return { kind: 'unsatisfiable' };
  if (end < start) return { kind: 'all' };
  return { kind: 'part', start, end };
}

/**
 * Whether `If-None-Match` names this ETag (weak comparison, `*` matches any): then 304.
 * @example noneMatch('"abc", W/"def"', '"def"') // true
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/**
 * `Content-Disposition: attachment` for `?download=name`: an ASCII fallback and the UTF-8
 * name (RFC 6266 / 8187); quotes, backslashes and control characters never reach the header.
 * @example attachment('report.pdf') // 'attachment; filename="report.pdf"; filename*=UTF-8\'\'report.pdf'
 */
export function attachment(filename: string): string {
  const clean = filename.slice(0, 255).replace(/[\u0000-\u001f\u007f"\\/]|\p{Cs}/gu, '_') || 'download';
  const ascii = clean.replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Every answer with an object's bytes carries these. The bytes are the uploader's: a page or
 * script among them must not run with the API's origin (the console lives there), so it gets
 * a sandbox of its own, and browsers may not guess another type than the one stored.
 */
const SAFE_HEADERS = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" };

/**
 * The `Cache-Control` of each kind of download. A user's download may be cached by their browser
 * only; signed and public reads carry no key, and what was read last time may have been deleted
 * or replaced since: every cache asks again each time (the ETag makes that a 304 when nothing
 * changed).
 */
export const CACHE_CONTROL = { private: 'private, no-cache', signed: 'private, no-cache', public: 'public, no-cache' } as const;

export interface ServeOptions {
  /** `Cache-Control`: private for a user's download, public for a public bucket. */
  cacheControl: string;
  /** `?download` (a file name, or '' for the object's own): sent as an attachment. */
  download?: string;
  /** Width, height, format… (transform.ts): the image is transformed on the way out. */
  transform?: ImageTransform | null;
}

/**
 * Answers GET or HEAD with an object: ETag and If-None-Match (304), one byte Range (206, or
 * 416), Content-Type from the upload, Content-Length, and the bytes from the backend (streamed,
 * or one Buffer for a small file on disk).
 * @example return serveObject(objects, req, reply, found, { cacheControl: 'private, no-cache' });
 */
export async function serveObject(
  objects: ObjectService,
  req: FastifyRequest,
  reply: FastifyReply,
  object: StoredObject,
  options: ServeOptions,
): Promise<FastifyReply> {
  if (options.transform) {
    const headers: Record<string, string> = { ...SAFE_HEADERS, 'cache-control': options.cacheControl };
    if (options.download !== undefined) headers['content-disposition'] = attachment(options.download || basename(object.name));
    return serveTransformed(objects, req, reply, object, options.transform, headers);
  }
  const size = Number(object.size);
  reply.headers({
    ...SAFE_HEADERS,
    etag: object.etag,
    'last-modified': new Date(object.updated_at).toUTCString(),
    'accept-ranges': 'bytes',
    'cache-control': options.cacheControl,
  });
  if (options.download !== undefined) reply.header('content-disposition', attachment(options.download || basename(object.name)));
  if (noneMatch(req.headers['if-none-match'], object.etag)) return reply.code(304).send();

  const ifRange = req.headers['if-range'];
  let range = parseRange(req.headers.range, size);
  if (ifRange !== undefined && ifRange !== object.etag) range = { kind: 'all' };
  if (range.kind === 'unsatisfiable') {
    throw new ApiError(
      'range_not_satisfiable',
      `The range is outside the object's ${size} bytes.`,
      { size },
      {
        headers: { 'content-range': `bytes */${size}` },
      },
    );
  }
  reply.type(object.mime_type);
  const part = range.kind === 'part' ? range : null;
  if (part) reply.code(206).header('content-range', `bytes ${part.start}-${part.end}/${size}`);
  reply.header('content-length', part ? part.end - part.start + 1 : size);
  if (req.method === 'HEAD') return reply.send();
  // An empty object has no byte to read (and a range of none cannot be asked of the backend).
  if (size === 0) return reply.send('');
  const bytes = await objects.bytes(object, part ?? undefined);
  if (!bytes) throw new ApiError('not_found', 'The object was replaced or deleted meanwhile; try again.');
  return reply.send(bytes);
}

function basename(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
