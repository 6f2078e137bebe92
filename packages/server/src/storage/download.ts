import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import { attachment, noneMatch, parseRange } from './http.js';
import type { ObjectService, StoredObject } from './objects.js';

/**
 * Every answer with an object's bytes carries these. The bytes are the uploader's: a page or
 * script among them must not run with the API's origin (the console lives there), so it gets
 * a sandbox of its own, and browsers may not guess another type than the one stored.
 */
const SAFE_HEADERS = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" };

export interface ServeOptions {
  /** `Cache-Control`: private for a user's download, public for a public bucket. */
  cacheControl: string;
  /** `?download` (a file name, or '' for the object's own): sent as an attachment. */
  download?: string;
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
