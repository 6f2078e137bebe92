/**
 * Supabase Storage's error shape, `{statusCode, code, error, message}` (storage-js reads
 * `statusCode` and `code`, and shows `message`), written from Plinth's one error body
 * `{code, message, details?}`: whatever answered (a handler, a guard, the server's error handler),
 * an error of a /storage/v1 route is rewritten here on its way out (an `onSend` hook), so the
 * meaning of each error stays the core's and only its spelling is Supabase's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Supabase's `code` (its ErrorCode), `error` and, where storage-js or apps match on it, its `message`. */
interface Spelling {
  code: string;
  error: string;
  message?: (details: Record<string, unknown> | undefined) => string;
}

const SPELLINGS: Record<string, Spelling> = {
  bucket_not_found: { code: 'NoSuchBucket', error: 'Bucket not found', message: () => 'Bucket not found' },
  not_found: { code: 'NoSuchKey', error: 'not_found', message: () => 'Object not found' },
  object_exists: { code: 'Duplicate', error: 'Duplicate', message: () => 'The resource already exists' },
  bucket_exists: { code: 'BucketAlreadyExists', error: 'Duplicate', message: () => 'The resource already exists' },
  bucket_not_empty: { code: 'ResourceNotEmpty', error: 'ResourceNotEmpty', message: () => 'The bucket you tried to delete is not empty' },
  payload_too_large: { code: 'EntityTooLarge', error: 'Payload too large', message: () => 'The object exceeded the maximum allowed size' },
  invalid_mime_type: {
    code: 'InvalidMimeType',
    error: 'invalid_mime_type',
    message: (d) => (typeof d?.mime_type === 'string' ? `mime type ${d.mime_type} is not supported` : 'mime type is not supported'),
  },
  invalid_object_name: { code: 'InvalidKey', error: 'InvalidKey' },
  invalid_bucket_name: { code: 'InvalidBucketName', error: 'Invalid Input' },
  range_not_satisfiable: { code: 'InvalidRange', error: 'invalid_range' },
  rls_violation: { code: 'AccessDenied', error: 'Unauthorized' },
  forbidden: { code: 'AccessDenied', error: 'Unauthorized' },
  unauthorized: { code: 'InvalidJWT', error: 'Unauthorized' },
  invalid_token: { code: 'InvalidJWT', error: 'Unauthorized' },
  token_expired: { code: 'InvalidJWT', error: 'Unauthorized' },
  token_invalid: { code: 'InvalidSignature', error: 'InvalidSignature' },
  storage_unavailable: { code: 'InternalError', error: 'InternalError' },
  transforms_disabled: { code: 'FeatureNotEnabled', error: 'FeatureNotEnabled', message: () => 'Image transformation is not enabled' },
  database_unavailable: { code: 'DatabaseConnectionLimit', error: 'DatabaseError' },
};

/**
 * Plinth's error body as Supabase's: the HTTP status stays the real one (Supabase answers 400 for
 * most errors and puts the real one in `statusCode`; Plinth sends it in both).
 * @example supabaseError(404, { code: 'bucket_not_found', message: 'No bucket "x".' }) // { statusCode: '404', code: 'NoSuchBucket', error: 'Bucket not found', message: 'Bucket not found' }
 */
export function supabaseError(status: number, body: { code?: unknown; message?: unknown; details?: unknown }) {
  const spelling = SPELLINGS[String(body.code)];
  const details = body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : undefined;
  const message = spelling?.message?.(details) ?? String(body.message ?? 'Error');
  const code = spelling?.code ?? (status >= 500 ? 'InternalError' : 'InvalidRequest');
  return { statusCode: String(status), code, error: spelling?.error ?? code, message };
}

/**
 * The `onSend` hook of the /storage/v1 scope: an error body (status ≥ 400, JSON) goes out in
 * Supabase's shape; everything else untouched.
 * @example scope.addHook('onSend', toSupabaseErrors);
 */
export async function toSupabaseErrors(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode < 400 || typeof payload !== 'string' || payload === '') return payload;
  if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return payload;
  }
  if (!body || typeof body !== 'object' || !('code' in body)) return payload;
  const out = supabaseError(reply.statusCode, body as { code?: unknown; message?: unknown; details?: unknown });
  // No key and no token at all: Supabase's words for it (its JWT check of an empty header), which
  // clients and their tests match on.
  if ((reply.statusCode === 401 || reply.statusCode === 403) && !req.headers.apikey && !req.headers.authorization) {
    return JSON.stringify({ ...out, code: 'InvalidJWT', error: 'Unauthorized', message: 'Invalid Compact JWS' });
  }
  return JSON.stringify(out);
}
