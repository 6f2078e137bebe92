/**
 * Resumable uploads: the TUS 1.0.0 protocol (core, and the creation, creation-with-upload,
 * termination and expiration extensions) on storage's object service, for every face that serves
 * it (`/api/v1/storage/upload/resumable`, Supabase's `/storage/v1/upload/resumable`).
 *
 * One core: creation runs the very checks of a plain upload before any byte (the bucket's size
 * limit against `Upload-Length`, its media types, the INSERT or upsert policy run and undone,
 * `objects.mayUpload`); the last chunk hands the assembled bytes to `objects.upload`, the plain
 * upload, as the caller of that request (who must be the creator), so the policy is checked
 * again at the finish and the bytes go to the backend under a fresh key, hashed and metered,
 * exactly as any upload's.
 *
 * Any instance continues any upload (several behind a load balancer): an upload's state is a row
 * of `storage.uploads` (migration 0180), its bytes are the backend's staging (backends/types.ts:
 * a file in the storage directory the instances share, or an S3 multipart upload whose whole
 * parts are stored as they arrive and whose remainder waits in the row). A PATCH claims the row
 * at the offset it states while no other PATCH holds it (a lease, renewed as it writes), so of
 * two PATCHes at one offset, on one instance or two, one appends and the other is 409. The bytes
 * of a dropped connection are kept and recorded when the drop is seen; `HEAD` tells the offset.
 * Abandoned uploads expire (`Upload-Expires`, 24 hours after creation) and a sweep every 10
 * minutes deletes them (their file, or their multipart aborted).
 */
import { randomUUID } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db, RoleContext } from '../db/index.js';
import { ApiError, type Principal } from '../http/index.js';
import type { Clock } from '../lib/index.js';
import { BackendError, type UploadStaging } from './backends/types.js';
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
  db: Db;
  objects: ObjectService;
  /** The backend's staging of uploads under way (a shared directory, or S3 multipart uploads). */
  staging: UploadStaging;
  clock: Clock;
  /** Tests: how long a PATCH's claim lasts without a renewal (ms). */
  leaseMs?: number;
}

/** How long a PATCH's claim on an upload lasts unrenewed: an instance that died mid-PATCH frees its upload after this. */
const LEASE_MS = 60_000;
/** On the disk, the row's offset follows a PATCH every MiB (on S3, every part): HEAD tells what is stored meanwhile. */
const PROGRESS_STEP = 2 ** 20;
/** On the disk, what a PATCH gathers before one write. */
const WRITE_BYTES = 2 ** 20;

interface Row {
  bucket_id: string;
  name: string;
  length: string;
  content_type: string;
  metadata: Record<string, unknown> | null;
  upsert: boolean;
  creator: string;
  expires_at: string;
  received: string;
  handle: string;
  parts: string[];
  /** base64 (a bytea parameter does not survive every driver as bytes) */
  tail: string;
}

const COLUMNS =
  "bucket_id, name, length::text, content_type, metadata, upsert, creator, expires_at::text, received::text, handle, parts, encode(tail, 'base64') as tail";

const infoOf = (r: Row): UploadInfo => ({
  bucket: r.bucket_id,
  name: r.name,
  length: Number(r.length),
  contentType: r.content_type,
  ...(r.metadata ? { metadata: r.metadata } : {}),
  upsert: r.upsert,
  creator: r.creator,
  expires: Number(r.expires_at),
});

/** Where an upload stands: bytes received, the S3 parts' ETags and the bytes past them. */
interface Progress {
  received: number;
  parts: string[];
  tail: Buffer;
}

/**
 * @example const resumable = createResumable({ db, objects, staging: backend.staging, clock }); resumable.start();
 */
export function createResumable(deps: ResumableDeps) {
  const { db, objects, staging, clock } = deps;
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  /** The PATCH appending to each upload on this instance: a new one for the same upload ends it first (a client resuming after a cut). */
  const writers = new Map<string, { req: FastifyRequest; done: Promise<void> }>();

  async function forget(id: string, handle: string): Promise<void> {
    await db.query('delete from storage.uploads where id = $1', [id]);
    await staging.discard(id, handle).catch(() => undefined); // the sweep finds what is left
  }

  /** The upload `id` of this caller, with its offset; 404 for anything else (another's, expired, unknown). */
  async function load(id: string, who: Principal): Promise<{ info: UploadInfo; row: Row }> {
    if (!ID.test(id)) throw unknownUpload();
    const { rows } = await db.query<Row>(`select ${COLUMNS} from storage.uploads where id = $1`, [id]);
    const row = rows[0];
    if (!row || row.creator !== creatorOf(who)) throw unknownUpload();
    const info = infoOf(row);
    if (info.expires <= clock.now()) throw unknownUpload(); // the sweep deletes it
    return { info, row };
  }

  /** Claims the upload at `offset` for this PATCH (`writer`), or 409 (another offset, or another PATCH writing). */
  async function claim(id: string, offset: number, writer: string): Promise<{ handle: string; progress: Progress }> {
    const now = clock.now();
    const { rows } = await db.query<Row>(
      `update storage.uploads set writer = $3, writer_until = $4
        where id = $1 and received = $2 and (writer is null or writer_until < $5)
        returning ${COLUMNS}`,
      [id, offset, writer, now + leaseMs, now],
    );
    const row = rows[0];
    if (row)
      return { handle: row.handle, progress: { received: Number(row.received), parts: row.parts, tail: Buffer.from(row.tail, 'base64') } };
    const { rows: at } = await db.query<{ received: string; busy: boolean }>(
      'select received::text, (writer is not null and writer_until >= $2) as busy from storage.uploads where id = $1',
      [id, now],
    );
    if (!at[0]) throw unknownUpload();
    const has = Number(at[0].received);
    if (has !== offset) throw new ApiError('conflict', `Upload-Offset is ${offset}, but the upload has ${has} bytes.`, { offset: has });
    throw new ApiError('conflict', 'Another request is appending to this upload; HEAD tells the offset once it ends.', { offset: has });
  }

  /** Records what arrived and lets the claim go (`keep`: held on, for the finish); false when the claim was lost. */
  async function record(id: string, writer: string, p: Progress, keep: boolean): Promise<boolean> {
    const { rows } = await db.query(
      `update storage.uploads set received = $3, parts = $4::jsonb, tail = decode($5, 'base64'),
          writer = case when $6 then writer end, writer_until = case when $6 then writer_until end
        where id = $1 and writer = $2 returning id`,
      [id, writer, p.received, JSON.stringify(p.parts), p.tail.toString('base64'), keep],
    );
    return rows.length === 1;
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
   * Writes the request's body on from `p` (bounded by the upload's length): to the file, or in
   * whole parts with the remainder kept in `p.tail`. `p` is advanced as bytes are stored, so
   * after a failure (a dropped connection) it tells what is kept.
   */
  async function receive(
    req: FastifyRequest,
    id: string,
    handle: string,
    info: UploadInfo,
    p: Progress,
    stored: (at: Progress) => Promise<void>,
  ): Promise<void> {
    const room = new Room(info.length - p.received, info.length);
    if (staging.kind === 'file') {
      const file = await staging.openAt(id, p.received);
      let told = p.received;
      // Written a MiB at a time (one write instead of sixteen), and what is held is written after a cut too.
      let held: Buffer[] = [];
      let heldBytes = 0;
      const write = async () => {
        if (heldBytes === 0) return;
        const data = held.length === 1 ? held[0] : Buffer.concat(held, heldBytes);
        held = [];
        heldBytes = 0;
        await file.write(data);
        p.received += data.length;
        if (p.received - told >= PROGRESS_STEP) {
          told = p.received;
          await stored({ received: p.received, parts: [], tail: Buffer.alloc(0) });
        }
      };
      try {
        await pipeline(req.raw, room, async (source: AsyncIterable<Buffer>) => {
          for await (const chunk of source) {
            held.push(chunk);
            heldBytes += chunk.length;
            if (heldBytes >= WRITE_BYTES) await write();
          }
        });
      } finally {
        try {
          await write();
        } finally {
          await file.close();
        }
      }
      return;
    }
    const size = staging.partSize;
    let held: Buffer[] = p.tail.length ? [p.tail] : [];
    let heldBytes = p.tail.length;
    const flush = async (all: boolean) => {
      while (heldBytes >= size || (all && heldBytes > 0)) {
        const joined = Buffer.concat(held, heldBytes);
        const n = Math.min(size, heldBytes);
        const etag = await staging.part(id, handle, p.parts.length + 1, joined.subarray(0, n));
        p.parts = [...p.parts, etag];
        held = heldBytes > n ? [joined.subarray(n)] : [];
        heldBytes -= n;
        if (n === size) await stored({ received: p.parts.length * size, parts: p.parts, tail: Buffer.alloc(0) });
      }
    };
    try {
      await pipeline(req.raw, room, async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          held.push(chunk);
          heldBytes += chunk.length;
          p.received += chunk.length;
          if (heldBytes >= size) await flush(false);
        }
      });
      // The last bytes of the upload are its last part (shorter than the others).
      if (p.received === info.length) await flush(true);
    } finally {
      p.tail = Buffer.concat(held, heldBytes);
    }
  }

  /**
   * Appends the request's body at `offset` under a claim on the upload; what arrived stays when
   * the connection drops. Then, at the end, the upload is finished: handed to the plain upload.
   */
  async function append(id: string, req: FastifyRequest, who: Principal, info: UploadInfo, offset: number): Promise<number> {
    const previous = writers.get(id);
    if (previous) {
      previous.req.raw.destroy();
      await previous.done;
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > info.length - offset) throw tooLarge(info.length);
    const writer = randomUUID();
    const { handle, progress } = await claim(id, offset, writer);
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const me = { req, done };
    writers.set(id, me);
    const renew = setInterval(() => {
      void db
        .query('update storage.uploads set writer_until = $3 where id = $1 and writer = $2', [id, writer, clock.now() + leaseMs])
        .catch(() => undefined);
    }, leaseMs / 3);
    renew.unref();
    const before: Progress = { ...progress };
    try {
      try {
        await receive(req, id, handle, info, progress, async (at) => {
          // HEAD tells what is stored while the PATCH goes on; a lost claim (the upload ended) stops it.
          if (!(await record(id, writer, at, true))) throw unknownUpload();
        });
      } catch (err) {
        clearInterval(renew);
        if (err instanceof ApiError) {
          // An over-long chunk is refused whole; on S3, the whole parts it filled are stored and stay.
          const kept =
            progress.parts.length === before.parts.length
              ? before
              : { parts: progress.parts, received: progress.parts.length * staging.partSize, tail: Buffer.alloc(0) };
          await record(id, writer, kept, false);
          throw err;
        }
        // The connection dropped (or the backend failed): what was stored is kept, and HEAD tells how much.
        if (!(await record(id, writer, progress, false))) throw unknownUpload();
        if (err instanceof BackendError) throw err;
        throw new ApiError('invalid_request', 'The upload was interrupted; HEAD tells what arrived.', undefined, { cause: err });
      }
      clearInterval(renew);
      const last = progress.received === info.length;
      if (!(await record(id, writer, progress, last))) throw unknownUpload();
      if (last) await finish(id, who, info, handle, progress.parts, writer);
      return progress.received;
    } finally {
      clearInterval(renew);
      if (writers.get(id) === me) writers.delete(id);
      release();
    }
  }

  /** The last byte arrived: the plain upload of the assembled bytes, as this request's caller. */
  async function finish(id: string, who: Principal, info: UploadInfo, handle: string, parts: string[], writer: string): Promise<void> {
    try {
      await objects.upload(who as RoleContext, {
        bucket: info.bucket,
        name: info.name,
        body: await staging.read(id, handle, parts),
        contentType: info.contentType,
        contentLength: info.length,
        upsert: info.upsert,
        metadata: info.metadata,
        // On the disk the staged file becomes the object's (read once for its hash, written once).
        ...(staging.adopt ? { adopt: (key: string) => (staging.adopt as NonNullable<typeof staging.adopt>)(id, key) } : {}),
      });
    } catch (err) {
      // The backend being down leaves the upload for a retry (a PATCH of no bytes at the end); any
      // other refusal (the policy, a name taken meanwhile) is final.
      const retry = (err instanceof ApiError && err.code === 'storage_unavailable') || err instanceof BackendError;
      if (retry)
        await db.query('update storage.uploads set writer = null, writer_until = null where id = $1 and writer = $2', [id, writer]);
      else await forget(id, handle);
      throw err;
    }
    await forget(id, handle);
  }

  /** Deletes expired uploads (and staged bytes no upload names); returns how many uploads. */
  async function sweep(): Promise<number> {
    const now = clock.now();
    const { rows } = await db.query<{ id: string; handle: string }>(
      `delete from storage.uploads where expires_at <= $1 and (writer is null or writer_until < $1) returning id::text, handle`,
      [now],
    );
    for (const r of rows) await staging.discard(r.id, r.handle).catch(() => undefined);
    // Staged bytes without their row (an instance that stopped between the two): an hour old at least.
    for await (const s of staging.list(Date.now() - 3600_000)) {
      const { rows: known } = await db.query('select 1 from storage.uploads where id = $1', [s.id]);
      if (!known[0]) await staging.discard(s.id, s.handle).catch(() => undefined);
    }
    return rows.length;
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
      const handle = await staging.start(id);
      try {
        await db.query(
          `insert into storage.uploads (id, bucket_id, name, length, content_type, metadata, upsert, creator, expires_at, handle)
           values ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10)`,
          [
            id,
            info.bucket,
            info.name,
            info.length,
            info.contentType,
            metadata ? JSON.stringify(metadata) : null,
            upsert,
            info.creator,
            info.expires,
            handle,
          ],
        );
      } catch (err) {
        await staging.discard(id, handle).catch(() => undefined);
        throw err;
      }
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
      const { info, row } = await load(req.params.id, who);
      return reply
        .code(200)
        .header('upload-offset', row.received)
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
      const { row } = await load(req.params.id, who);
      const writing = writers.get(req.params.id);
      if (writing) {
        writing.req.raw.destroy();
        await writing.done;
      }
      await forget(req.params.id, row.handle);
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

    /** Deletes expired uploads (and staged bytes no upload names); returns how many uploads. */
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
