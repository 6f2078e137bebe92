/**
 * `/storage/v1/object`: Supabase's object calls on storage's object service and links (the same
 * policies on storage.objects, limits, names and signed-URL rules as /api/v1/storage). What is
 * here is parsing (paths, bodies, headers, the multipart form) and the answers' shapes.
 */
import type { ListEntry } from '@plinth/shared';
import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type Principal } from '../../http/index.js';
import {
  bucketName,
  CACHE_CONTROL,
  decodeName,
  MAX_URL_SECONDS,
  type Storage,
  type StoredObject,
  serveObject,
  stateOf,
  transformOf,
} from '../../storage/index.js';
import { multipartBoundary, readMultipartFile } from './multipart.js';
import {
  type DownloadQuery,
  type RenderQuery,
  infoShape,
  type ListBody,
  type ListV2Body,
  listEntryShape,
  type MoveBody,
  objectRowShape,
  type RemoveBody,
  type SignBody,
  type SignManyBody,
  type TokenQuery,
} from './shapes.js';

/** The caller the route's guard resolved (routes.ts); a route without one is a bug of the table. */
function callerOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error(`supabase storage: ${req.routeOptions.url} has no caller guard in routes.ts`);
  return req.principal;
}

/**
 * Bucket and object name of a `…/:bucket/*` route, from the raw path (one percent-decoding, NFC,
 * storage's name rules: `..`, `//` and the like are 400).
 * @example pathOf(req) // { bucket: 'avatars', name: 'me/a b.png' } for /storage/v1/object/avatars/me/a%20b.png
 */
function pathOf(req: FastifyRequest): { bucket: string; name: string } {
  const route = req.routeOptions.url ?? '';
  const prefix = route.slice(0, route.length - ':bucket/*'.length);
  const q = req.url.indexOf('?');
  const rest = req.url.slice(prefix.length, q < 0 ? undefined : q);
  const slash = rest.indexOf('/');
  if (!route.endsWith(':bucket/*') || !req.url.startsWith(prefix) || slash <= 0) {
    throw new ApiError('invalid_object_name', 'The path must be /{bucket}/{object name}.');
  }
  return { bucket: rest.slice(0, slash), name: decodeName(rest.slice(slash + 1)) };
}

/** A `listV2` cursor (this face's own: the offset of the next page) as a number; 400 when it is not one of ours. */
function cursorOffset(cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0;
  const m = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m) throw new ApiError('invalid_request', 'The cursor is not one this server gave.', [{ field: 'cursor', message: 'is unknown' }]);
  return Number(m[1]);
}

const notFound = () => new ApiError('not_found', 'No such object (or it is not visible to you).');

/** A JSON object of user metadata (a form field, or the base64 `x-metadata` header). */
function metadataOf(text: string | undefined, base64: boolean): Record<string, unknown> | undefined {
  if (text === undefined || text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(base64 ? Buffer.from(text, 'base64').toString('utf8') : text);
  } catch {
    value = null;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('invalid_request', 'The metadata must be a JSON object (x-metadata: base64 of it).', [
      { field: 'metadata', message: 'is not a JSON object' },
    ]);
  }
  return value as Record<string, unknown>;
}

/** An upload's body, type, declared size and metadata: the raw body, or the file of a multipart form. */
async function uploadBody(req: FastifyRequest) {
  const boundary = multipartBoundary(req.headers['content-type']);
  if (boundary) {
    const part = await readMultipartFile(req.raw, boundary);
    return {
      body: part.body,
      contentType: part.contentType,
      contentLength: null,
      metadata: metadataOf(part.fields.metadata, false),
      abandon: part.abandon,
    };
  }
  const length = req.headers['content-length'];
  const header = req.headers['x-metadata'];
  return {
    body: req.raw,
    contentType: req.headers['content-type'],
    contentLength: length === undefined ? null : Number(length),
    metadata: metadataOf(typeof header === 'string' ? header : undefined, true),
    abandon: () => undefined,
  };
}

/** `expiresIn` within storage's bounds for a signed URL. */
function expiry(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_URL_SECONDS) {
    throw new ApiError('invalid_request', `expiresIn is 1 to ${MAX_URL_SECONDS} seconds (7 days).`, [
      { field: 'expiresIn', message: `must be 1 to ${MAX_URL_SECONDS}` },
    ]);
  }
  return seconds;
}

/** The path of a URL this face serves, as storage-js expects it: relative to /storage/v1, the name as it is (storage-js encodes it). */
const relative = (kind: string, bucket: string, name: string, token: string) => `/object/${kind}/${bucket}/${name}?token=${token}`;

type Q<T> = FastifyRequest<{ Querystring: T }>;
type B<T> = FastifyRequest<{ Body: T }>;

/**
 * @example const h = createObjectHandlers(storage); app.post('/storage/v1/object/list/:bucket', { onRequest: caller }, h.list);
 */
export function createObjectHandlers(storage: Storage) {
  const { objects, links } = storage;

  async function uploadAs(req: FastifyRequest, upsert: boolean) {
    const { bucket, name } = pathOf(req);
    const who = callerOf(req);
    const input = await uploadBody(req);
    try {
      const done = await objects.upload(who, { bucket: bucketName(bucket), name, ...input, upsert });
      const found = await objects.find(who, done.bucket, done.name);
      return { Key: `${done.bucket}/${done.name}`, ...(found ? { Id: found.id, id: found.id } : {}) };
    } catch (err) {
      input.abandon();
      throw err;
    }
  }

  /** A render route always transforms (no option at all: WebP when accepted, as Supabase). */
  const render = (
    req: FastifyRequest<{ Querystring: { download?: string } }>,
    reply: FastifyReply,
    found: StoredObject,
    cacheControl: string,
    transform: ReturnType<typeof transformOf>,
  ) =>
    serveObject(objects, req, reply, found, {
      cacheControl,
      download: req.query.download,
      transform: transform ?? { resize: 'cover', quality: 80, format: 'auto' },
    });

  const serve = (
    req: FastifyRequest<{ Querystring: { download?: string } }>,
    reply: FastifyReply,
    found: StoredObject,
    cacheControl: string,
  ) => serveObject(objects, req, reply, found, { cacheControl, download: req.query.download });

  return {
    /** POST: a new object (`x-upsert: true` replaces); PUT: storage-js's `update`, which replaces. */
    upload: (req: FastifyRequest) => uploadAs(req, req.method === 'PUT' || req.headers['x-upsert'] === 'true'),

    async download(req: Q<Static<typeof DownloadQuery>>, reply: FastifyReply) {
      const { bucket, name } = pathOf(req);
      const found = await objects.find(callerOf(req), bucket, name);
      if (!found) throw notFound();
      return serve(req, reply, found, CACHE_CONTROL.private);
    },
    async publicDownload(req: Q<Static<typeof DownloadQuery>>, reply: FastifyReply) {
      const { bucket, name } = pathOf(req);
      return serve(req, reply, await links.publicObject(bucket, name), CACHE_CONTROL.public);
    },
    async signedDownload(req: Q<Static<typeof TokenQuery>>, reply: FastifyReply) {
      const { bucket, name } = pathOf(req);
      return serve(req, reply, await links.signedObject(req.query.token, bucket, name), CACHE_CONTROL.signed);
    },

    async info(req: FastifyRequest) {
      const { bucket, name } = pathOf(req);
      const found = await objects.find(callerOf(req), bucket, name);
      if (!found) throw notFound();
      return infoShape(found, stateOf(found), CACHE_CONTROL.private);
    },
    async publicInfo(req: FastifyRequest) {
      const { bucket, name } = pathOf(req);
      const found = await links.publicObject(bucket, name);
      return infoShape(found, stateOf(found), CACHE_CONTROL.public);
    },

    async list(req: FastifyRequest<{ Params: { bucket: string }; Body: Static<typeof ListBody> }>) {
      const b = req.body ?? {};
      const column = b.sortBy?.column === 'last_accessed_at' ? 'updated_at' : (b.sortBy?.column ?? 'name');
      const entries = await objects.list(callerOf(req), req.params.bucket, {
        prefix: b.prefix ?? '',
        search: b.search ?? '',
        limit: Math.min(b.limit ?? 100, 1000),
        offset: b.offset ?? 0,
        sort: { column, order: b.sortBy?.order ?? 'asc' },
      });
      return entries.map(listEntryShape);
    },

    /**
     * `listV2`: the objects under a name prefix at any depth, or (`with_delimiter`) a folder's
     * files and sub-folders, full names, in pages of `limit` (at most 1000) with a cursor.
     */
    async listV2(req: FastifyRequest<{ Params: { bucket: string }; Body: Static<typeof ListV2Body> }>) {
      const b = req.body ?? {};
      const who = callerOf(req);
      const limit = Math.min(b.limit ?? 1000, 1000);
      const offset = cursorOffset(b.cursor);
      const sort = { column: b.sortBy?.column ?? 'name', order: b.sortBy?.order ?? 'asc' } as const;
      const prefix = b.prefix ?? '';
      let entries: Array<ListEntry & { name: string }>;
      if (b.with_delimiter) {
        const folder = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
        const rows = await objects.list(who, req.params.bucket, { prefix: folder, search: '', limit: limit + 1, offset, sort });
        entries = rows.map((e) => ({ ...e, name: folder + e.name }));
      } else {
        entries = await objects.listFlat(who, req.params.bucket, { prefix, limit: limit + 1, offset, sort });
      }
      const page = entries.slice(0, limit);
      const hasNext = entries.length > limit;
      return {
        hasNext,
        folders: page.filter((e) => e.id === null).map((e) => ({ key: e.name, name: `${e.name}/` })),
        objects: page.filter((e) => e.id !== null).map((e) => ({ ...listEntryShape(e), key: e.name })),
        ...(hasNext ? { nextCursor: Buffer.from(`o:${offset + limit}`).toString('base64url') } : {}),
      };
    },

    async removeMany(req: FastifyRequest<{ Params: { bucket: string }; Body: Static<typeof RemoveBody> }>) {
      const names = req.body.prefixes.map((p) => (typeof p === 'string' ? p : p.path));
      return (await objects.remove(callerOf(req), req.params.bucket, names)).map(objectRowShape);
    },
    async remove(req: FastifyRequest) {
      const { bucket, name } = pathOf(req);
      const [deleted] = await objects.remove(callerOf(req), bucket, [name]);
      if (!deleted) throw notFound();
      return { message: 'Successfully deleted' };
    },

    async move(req: B<Static<typeof MoveBody>>) {
      const b = req.body;
      await objects.move(callerOf(req), b.bucketId, b.sourceKey, b.destinationKey, b.destinationBucket);
      return { message: 'Successfully moved' };
    },
    async copy(req: B<Static<typeof MoveBody>>) {
      const b = req.body;
      const metadata = b.copyMetadata === false ? (b.metadata ?? {}) : undefined;
      const done = await objects.copy(callerOf(req), b.bucketId, b.sourceKey, b.destinationKey, metadata, b.destinationBucket);
      return { Key: `${done.bucket}/${done.name}` };
    },

    /** With `transform`, the URL serves that transform of the image (bound in its token), at /render/image/sign. */
    async sign(req: B<Static<typeof SignBody>>) {
      const { bucket, name } = pathOf(req);
      const transform = transformOf(req.body.transform as Record<string, unknown> | undefined);
      const token = await links.signToken(callerOf(req), bucket, name, expiry(req.body.expiresIn), transform);
      if (transform) return { signedURL: `/render/image/sign/${bucket}/${name}?token=${token}` };
      return { signedURL: relative('sign', bucket, name, token) };
    },

    /** `/render/image/authenticated/…`: the image as the caller may read it, transformed. */
    async renderAuthenticated(req: Q<Static<typeof RenderQuery>>, reply: FastifyReply) {
      const { bucket, name } = pathOf(req);
      const found = await objects.find(callerOf(req), bucket, name);
      if (!found) throw notFound();
      return render(req, reply, found, CACHE_CONTROL.private, transformOf(req.query));
    },
    async renderPublic(req: Q<Static<typeof RenderQuery>>, reply: FastifyReply) {
      const { bucket, name } = pathOf(req);
      return render(req, reply, await links.publicObject(bucket, name), CACHE_CONTROL.public, transformOf(req.query));
    },
    /** `/render/image/sign/…?token=`: the transform the URL was signed with (the query's are ignored, as Supabase does). */
    async renderSigned(req: Q<Static<typeof TokenQuery>>, reply: FastifyReply) {
      const { bucket, name } = pathOf(req);
      const { object, transform } = await links.signedRead(req.query.token, bucket, name);
      return render(req, reply, object, CACHE_CONTROL.signed, transform);
    },
    /** Many at once: each path its URL, or its own error (hidden or missing alike), in order. */
    async signMany(req: FastifyRequest<{ Params: { bucket: string }; Body: Static<typeof SignManyBody> }>) {
      const who = callerOf(req);
      const seconds = expiry(req.body.expiresIn);
      const { bucket } = req.params;
      const out = [];
      for (const path of req.body.paths) {
        try {
          const token = await links.signToken(who, bucket, path, seconds);
          out.push({ error: null, path, signedURL: relative('sign', bucket, path, token) });
        } catch (err) {
          if (!(err instanceof ApiError) || !['not_found', 'invalid_object_name'].includes(err.code)) throw err;
          out.push({ error: 'Either the object does not exist or you do not have access to it', path, signedURL: null });
        }
      }
      return out;
    },

    async signUpload(req: FastifyRequest) {
      const { bucket, name } = pathOf(req);
      const { token } = await links.signUpload(callerOf(req), bucket, name, req.headers['x-upsert'] === 'true');
      return { url: relative('upload/sign', bucket, name, token), token };
    },
    async uploadSigned(req: Q<Static<typeof TokenQuery>>) {
      const { bucket, name } = pathOf(req);
      const input = await uploadBody(req);
      try {
        const done = await links.uploadSigned(req.query.token, { bucket: bucketName(bucket), name, ...input });
        return { Key: `${done.bucket}/${done.name}` };
      } catch (err) {
        input.abandon();
        throw err;
      }
    },
  };
}
