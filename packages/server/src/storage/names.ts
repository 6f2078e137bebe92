/** Object and bucket names (docs/storage.md): what a client may call things, checked before any I/O. */
import { ApiError } from '../http/index.js';

const MAX_NAME_BYTES = 1024;
// C0 controls, DEL and C1 controls; a lone surrogate cannot be encoded as UTF-8.
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\]|\p{Cs}/u;
const BUCKET = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
const MIME = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;
const MIME_PATTERN = /^([a-z0-9!#$&^_.+-]+)\/([a-z0-9!#$&^_.+-]+|\*)$/i;

const invalid = (message: string) => new ApiError('invalid_object_name', message);

/**
 * Checks an object name and returns it in NFC, the form it is stored and compared in: 1–1024
 * bytes of UTF-8, `/` between folders; no leading `/`, no empty, `.` or `..` segment, no `\`,
 * NUL or control character. Throws 400 `invalid_object_name` naming the rule.
 * @example objectName('photos/Cafe\u0301.jpg') // 'photos/Café.jpg' (NFC)
 */
export function objectName(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalid('An object name is 1 to 1024 bytes of UTF-8; this one is empty.');
  if (FORBIDDEN.test(raw)) {
    throw invalid('An object name cannot contain a backslash, NUL, a control character or a lone surrogate.');
  }
  const name = raw.normalize('NFC');
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) throw invalid(`An object name is at most ${MAX_NAME_BYTES} bytes of UTF-8; this one has ${bytes}.`);
  if (name.startsWith('/')) throw invalid('An object name cannot start with "/".');
  for (const segment of name.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw invalid('An object name cannot have an empty, "." or ".." folder (no "//", no trailing "/").');
    }
  }
  return name;
}

/**
 * The path part of a storage URL, percent-decoded: `photos/a%20b.jpg` → `photos/a b.jpg`.
 * A malformed escape is a bad name (400), not a server error.
 * @example decodeName('a%2Fb') // 'a/b'
 */
export function decodeName(raw: string): string {
  try {
    return objectName(decodeURIComponent(raw));
  } catch (err) {
    if (err instanceof URIError) throw invalid('The object name in the path is not valid percent-encoding of UTF-8.');
    throw err;
  }
}

/** Where the storage routes live (the signed URLs this server makes point there too). */
export const STORAGE_PREFIX = '/api/v1/storage/';

/**
 * Bucket and object name from the raw path (not the router's decoding), so that exactly one
 * percent-decoding happens and any name (`?`, `#`, `%`, unicode) round-trips.
 * @example objectPath('/api/v1/storage/object/docs/a%20b.txt?download', 'object') // { bucket: 'docs', name: 'a b.txt' }
 */
export function objectPath(url: string, area: 'object' | 'sign' | 'public'): { bucket: string; name: string } {
  const q = url.indexOf('?');
  const rest = url.slice(`${STORAGE_PREFIX}${area}/`.length, q === -1 ? url.length : q);
  const slash = rest.indexOf('/');
  if (slash <= 0) throw new ApiError('invalid_object_name', 'The path must be /{bucket}/{object name}.');
  return { bucket: rest.slice(0, slash), name: decodeName(rest.slice(slash + 1)) };
}

/**
 * A bucket name: 1–63 of `a-z 0-9 _ . -`, starting with a letter or digit.
 * @example bucketName('avatars') // 'avatars'
 */
export function bucketName(raw: unknown): string {
  if (typeof raw !== 'string' || !BUCKET.test(raw)) {
    throw new ApiError(
      'invalid_bucket_name',
      'A bucket name is 1 to 63 characters of a-z, 0-9, "_", "." and "-", starting with a letter or a digit.',
    );
  }
  return raw;
}

/**
 * The `Content-Type` of an upload: its `type/subtype` (lower case) and the header as sent, to
 * serve back. Missing: `application/octet-stream`. Malformed: 415 `invalid_mime_type`.
 * @example mimeType('Image/PNG') // { base: 'image/png', full: 'Image/PNG' }
 */
export function mimeType(header: unknown): { base: string; full: string } {
  if (header === undefined || header === '') return { base: 'application/octet-stream', full: 'application/octet-stream' };
  const full = String(header).trim();
  const base = full.split(';')[0].trim().toLowerCase();
  if (!MIME.test(base) || full.length > 255 || /[\u0000-\u001f\u007f-\uffff]/.test(full)) {
    throw new ApiError('invalid_mime_type', 'The Content-Type is not a valid media type such as image/png.');
  }
  return { base, full };
}

/**
 * Whether a bucket's `allowed_mime_types` (null: any) admit a type; `image/*` admits every image.
 * @example mimeAllowed(['image/*'], 'image/png') // true
 */
export function mimeAllowed(allowed: string[] | null, base: string): boolean {
  if (allowed === null || allowed.length === 0) return true;
  const [type] = base.split('/');
  return allowed.some((a) => {
    const p = a.toLowerCase();
    return p === base || p === '*/*' || (p.endsWith('/*') && p.slice(0, -2) === type);
  });
}

/** Whether an entry of `allowed_mime_types` is well formed (`type/subtype` or `type/*`). */
export function isMimePattern(pattern: string): boolean {
  return pattern === '*/*' || MIME_PATTERN.test(pattern);
}
