/**
 * Resumable uploads: the TUS 1.0.0 protocol (core, and the creation, creation-with-upload,
 * termination and expiration extensions) on storage's object service, for every face that serves
 * it (`/api/v1/storage/upload/resumable`, Supabase's `/storage/v1/upload/resumable`).
 *
 * One core: creation runs the very checks of a plain upload before any byte (the bucket's size
 * limit against `Upload-Length`, its media types, the INSERT or upsert policy run and undone,
 * `objects.mayUpload`); the chunks are appended to a file of their own under
 * `<data dir>/storage/uploads/` (streamed: a chunk never sits whole in memory); the last chunk
 * hands that file to `objects.upload`, the plain upload, as the caller of that request (who must be
 * the creator), so the policy is checked again at the finish and the bytes go to the backend
 * (disk or S3) under a fresh key, hashed and metered, exactly as any upload's.
 *
 * State is on disk (`<id>.json` beside `<id>.part`): a dropped connection keeps what arrived,
 * `HEAD` tells the offset, a restart of the server loses nothing. Abandoned uploads expire
 * (`Upload-Expires`, 24 hours after creation) and are deleted by a sweep every 10 minutes.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoleContext } from '../db/index.js';
import { ApiError, type Principal } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import { tooLarge } from './meter.js';
import { bucketName } from './names.js';
import type { ObjectService } from './objects.js';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration';
/** How long an upload may stay unfinished: a day, as Supabase's default. */
export const RESUMABLE_EXPIRY_MS = 24 * 3600_000;
const SWEEP_MS = 10 * 60_000;
const CHUNK_TYPE = 'application/offset+octet-stream';
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What an upload under way is: written once at creation, beside its bytes. */
interface UploadInfo {
  bucket: string;
  name: string;
  length: number;
  contentType: string;
  metadata?: Record<string, unknown>;
  upsert: boolean;
  /** Who created it (role and subject): only they may append, read the offset, finish or end it. */
  creator: string;
  expires: number;
}

const creatorOf = (who: Principal) => `${who.role}:${who.role === 'authenticated' ? who.sub : ''}`;
const unknownUpload = () => new ApiError('not_found', 'No such upload (it finished, expired, was ended, or is not yours).');
const bad = (field: string, message: string) => new ApiError('invalid_request', `${field} ${message}.`, [{ field, message }]);

/**
 * `Upload-Metadata`: comma-separated `key base64value` pairs (a key alone has the empty value).
 * @example parseMetadata('bucketName YXZhdGFycw==,objectName bWUucG5n') // { bucketName: 'avatars', objectName: 'me.png' }
 */
export function parseMetadata(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const pair of header.split(',')) {
    const [key, value, extra] = pair.trim().split(' ');
    if (!key || extra !== undefined || (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))) {
      throw bad('Upload-Metadata', 'must be comma-separated "key base64value" pairs');
    }
    out[key] = value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8');
  }
  return out;
}

/** A non-negative integer header, or a 400 naming it. */
function intHeader(req: FastifyRequest, name: string): number {
  const raw = req.headers[name.toLowerCase()];
  const n = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw bad(name, 'must be a non-negative integer');
  return n;
}

/** Passes at most `room` bytes; more is 413 (the bytes before the excess are kept). */
class Room extends Transform {
  constructor(
    private room: number,
    private readonly limit: number,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (chunk.length > this.room) {
      done(tooLarge(this.limit));
      return;
    }
    this.room -= chunk.length;
    done(null, chunk);
  }
}

export interface ResumableDeps {
  objects: ObjectService;
  /** `<data dir>/storage/uploads`: the uploads under way. */
  dir: string;
  clock: Clock;
}

/**
 * @example const resumable = await createResumable({ objects, dir: join(dataDir, 'storage', 'uploads'), clock }); resumable.start();
 */
export async function createResumable(deps: ResumableDeps) {
  const { objects, dir, clock } = deps;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const partOf = (id: string) => join(dir, `${id}.part`);
  const infoOf = (id: string) => join(dir, `${id}.json`);
  /** The PATCH appending to each upload now: a new one for the same upload ends it first (a client resuming after a cut). */
  const writers = new Map<string, { req: FastifyRequest; done: Promise<void> }>();

  async function forget(id: string): Promise<void> {
    await rm(partOf(id), { force: true });
    await rm(infoOf(id), { force: true });
  }

  /** The upload `id` of this caller, with its offset; 404 for anything else (another's, expired, unknown). */
  async function load(id: string, who: Principal): Promise<{ info: UploadInfo; offset: number }> {
    if (!ID.test(id)) throw unknownUpload();
    let info: UploadInfo;
    let offset: number;
    try {
      info = JSON.parse(await readFile(infoOf(id), 'utf8')) as UploadInfo;
      offset = (await stat(partOf(id))).size;
    } catch {
      throw unknownUpload();
    }
    if (info.creator !== creatorOf(who)) throw unknownUpload();
    if (info.expires <= clock.now()) {
      if (!writers.has(id)) await forget(id);
      throw unknownUpload();
    }
    return { info, offset };
  }

  function tusHeaders(reply: FastifyReply): void {
    reply.header('tus-resumable', TUS_VERSION).header('cache-control', 'no-store');
  }

  function checkVersion(req: FastifyRequest): void {
    if (req.headers['tus-resumable'] !== TUS_VERSION) {
      throw new ApiError('invalid_request', `Tus-Resumable: ${TUS_VERSION} is required (the only version served).`, [
        { field: 'Tus-Resumable', message: `must be ${TUS_VERSION}` },
      ]);
    }
  }

  /**
   * Appends the request's body at `offset` (bounded by the upload's length); what arrived stays
   * when the connection drops. Then, at the end, the upload is finished: handed to the plain upload.
   */
  async function append(id: string, req: FastifyRequest, who: Principal, info: UploadInfo, offset: number): Promise<number> {
    const previous = writers.get(id);
    if (previous) {
      previous.req.raw.destroy();
      await previous.done;
    }
    const now = (await stat(partOf(id)).catch(() => null))?.size;
    if (now === undefined) throw unknownUpload();
    if (now !== offset) throw new ApiError('conflict', `Upload-Offset is ${offset}, but the upload has ${now} bytes.`, { offset: now });
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const me = { req, done };
    writers.set(id, me);
    try {
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > info.length - offset) throw tooLarge(info.length);
      try {
        await pipeline(req.raw, new Room(info.length - offset, info.length), createWriteStream(partOf(id), { flags: 'a' }));
      } catch (err) {
        if (err instanceof ApiError) {
          await truncate(partOf(id), offset).catch(() => undefined); // an over-long chunk is refused whole
          throw err;
        }
        // The connection dropped: what arrived is kept, and HEAD tells how much.
        throw new ApiError('invalid_request', 'The upload was interrupted; HEAD tells what arrived.', undefined, { cause: err });
      }
      const size = (await stat(partOf(id))).size;
      if (size === info.length) await finish(id, who, info);
      return size;
    } finally {
      if (writers.get(id) === me) writers.delete(id);
      release();
    }
  }

  /** The last byte arrived: the plain upload of the assembled file, as this request's caller. */
  async function finish(id: string, who: Principal, info: UploadInfo): Promise<void> {
    try {
      await objects.upload(who as RoleContext, {
        bucket: info.bucket,
        name: info.name,
        body: createReadStream(partOf(id)),
        contentType: info.contentType,
        contentLength: info.length,
        upsert: info.upsert,
        metadata: info.metadata,
      });
    } catch (err) {
      // The backend being down leaves the upload for a retry (a PATCH of no bytes at the end); any
      // other refusal (the policy, a name taken meanwhile) is final.
      if (!(err instanceof ApiError && err.code === 'storage_unavailable')) await forget(id);
      throw err;
    }
    await forget(id);
  }

  async function sweep(): Promise<number> {
    let n = 0;
    for (const file of await readdir(dir).catch(() => [] as string[])) {
      const id = file.replace(/\.(json|part)$/, '');
      if (!ID.test(id) || !file.endsWith('.json') || writers.has(id)) continue;
      const info = await readFile(join(dir, file), 'utf8').then(
        (t) => JSON.parse(t) as UploadInfo,
        () => null,
      );
      if (info === null || info.expires <= clock.now()) {
        await forget(id);
        n++;
      }
    }
    // A part without its info (a crash between the two writes) goes too.
    for (const file of await readdir(dir).catch(() => [] as string[])) {
      const id = file.replace(/\.part$/, '');
      if (file.endsWith('.part') && !writers.has(id) && !(await stat(infoOf(id)).catch(() => null)))
        await rm(join(dir, file), { force: true });
    }
    return n;
  }

  let timer: NodeJS.Timeout | null = null;

  return {
    /**
     * POST: a new upload (`Upload-Length`, `Upload-Metadata` with `bucketName`, `objectName`,
     * `contentType`, `metadata`; `x-upsert: true`), checked as a plain upload is before its body;
     * with a body of `application/offset+octet-stream`, its first bytes too.
     * @param base the path the upload's URL is under (its `Location`)
     */
    async create(req: FastifyRequest, reply: FastifyReply, who: Principal, base: string) {
      tusHeaders(reply);
      checkVersion(req);
      if (req.headers['upload-defer-length'] !== undefined) throw bad('Upload-Defer-Length', 'is not supported: send Upload-Length');
      const length = intHeader(req, 'Upload-Length');
      const meta = parseMetadata(req.headers['upload-metadata'] as string | undefined);
      const bucket = meta.bucketName ?? meta.bucket;
      const name = meta.objectName ?? meta.name;
      if (!bucket) throw bad('Upload-Metadata', 'must name the bucket (bucketName)');
      if (!name) throw bad('Upload-Metadata', 'must name the object (objectName)');
      let metadata: Record<string, unknown> | undefined;
      if (meta.metadata) {
        try {
          metadata = JSON.parse(meta.metadata) as Record<string, unknown>;
        } catch {
          metadata = undefined;
        }
        if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) throw bad('metadata', 'must be a JSON object');
      }
      const upsert = req.headers['x-upsert'] === 'true';
      const contentType = meta.contentType || meta.filetype || 'application/octet-stream';
      const target = await objects.mayUpload(who as RoleContext, bucketName(bucket), name, upsert, { contentType, size: length });
      const id = randomUUID();
      const info: UploadInfo = {
        bucket: target.bucket,
        name: target.name,
        length,
        contentType: target.mime,
        ...(metadata ? { metadata } : {}),
        upsert,
        creator: creatorOf(who),
        expires: clock.now() + RESUMABLE_EXPIRY_MS,
      };
      await writeFile(partOf(id), '', { flag: 'wx', mode: 0o600 });
      await writeFile(infoOf(id), JSON.stringify(info), { mode: 0o600 });
      reply.header('location', `${base}/${id}`).header('upload-expires', new Date(info.expires).toUTCString());
      let offset = 0;
      if (String(req.headers['content-type'] ?? '').startsWith(CHUNK_TYPE) || length === 0) {
        offset = await append(id, req, who, info, 0);
      }
      return reply.code(201).header('upload-offset', String(offset)).send();
    },

    /** HEAD: how much arrived (`Upload-Offset`) of how much (`Upload-Length`). */
    async head(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, who: Principal) {
      tusHeaders(reply);
      const { info, offset } = await load(req.params.id, who);
      return reply
        .code(200)
        .header('upload-offset', String(offset))
        .header('upload-length', String(info.length))
        .header('upload-expires', new Date(info.expires).toUTCString())
        .send();
    },

    /** PATCH: the bytes from `Upload-Offset` on; the last one finishes the upload (204 either way). */
    async patch(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, who: Principal) {
      tusHeaders(reply);
      checkVersion(req);
      if (!String(req.headers['content-type'] ?? '').startsWith(CHUNK_TYPE)) {
        throw new ApiError('unsupported_media_type', `A PATCH of an upload is Content-Type: ${CHUNK_TYPE}.`);
      }
      const offset = intHeader(req, 'Upload-Offset');
      const { info } = await load(req.params.id, who);
      const size = await append(req.params.id, req, who, info, offset);
      return reply.code(204).header('upload-offset', String(size)).header('upload-expires', new Date(info.expires).toUTCString()).send();
    },

    /** DELETE: the upload is ended and its bytes deleted (termination). */
    async remove(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, who: Principal) {
      tusHeaders(reply);
      checkVersion(req);
      await load(req.params.id, who);
      const writing = writers.get(req.params.id);
      if (writing) {
        writing.req.raw.destroy();
        await writing.done;
      }
      await forget(req.params.id);
      return reply.code(204).send();
    },

    /** OPTIONS: what this server speaks. */
    options(_req: FastifyRequest, reply: FastifyReply, maxSize: number) {
      return reply
        .code(204)
        .header('tus-resumable', TUS_VERSION)
        .header('tus-version', TUS_VERSION)
        .header('tus-extension', TUS_EXTENSIONS)
        .header('tus-max-size', String(maxSize))
        .send();
    },

    /** Deletes expired uploads (and parts whose info is gone); returns how many uploads. */
    sweep,
    start() {
      timer = setInterval(() => void sweep().catch(() => undefined), SWEEP_MS);
      timer.unref();
    },
    async close() {
      if (timer) clearInterval(timer);
      for (const w of writers.values()) w.req.raw.destroy();
    },
  };
}

export type Resumable = Awaited<ReturnType<typeof createResumable>>;
