import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { S3Config } from '../../config/index.js';
import { BackendError, type ByteRange, type StorageBackend, type UploadStaging } from './types.js';

/** Every object of the project lives under this prefix of the S3 bucket; the sweep looks nowhere else. */
const PREFIX = 'objects/';
/** Resumable uploads under way (their multipart uploads), beside the objects. */
const UPLOADS = 'uploads/';
/** Multipart above one part: S3 wants parts of at least 5 MiB (but the last). */
const PART_SIZE = 8 * 2 ** 20;
/** Parts uploaded at once: memory stays near (1 + 2) × 8 MiB per upload, however large the file. */
const PARTS_IN_FLIGHT = 2;

const KEY = /^[a-z0-9][a-z0-9_.-]{0,62}\/[0-9a-f-]{36}(?:\.t[0-9a-f]{16})?$/;

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

const failed = (what: string, err: unknown) =>
  new BackendError(`storage: S3 failed to ${what}: ${(err as Error).name ?? ''} ${(err as Error).message ?? String(err)}`.trim(), {
    cause: err,
  });

/**
 * Any S3-compatible service (`STORAGE_BACKEND=s3`). Small files go up in one PutObject; from
 * 8 MiB on, a multipart upload streams the body in 8 MiB parts, two in flight, and is aborted
 * when the body fails. S3 acknowledges only stored bytes, so an acknowledged upload is durable.
 * Checksums are asked for only where S3 requires them: S3-compatible services often do not
 * know the SDK's newer default (CRC32 trailers).
 * @example const backend = await createS3Backend(config.storage.s3);
 */
export async function createS3Backend(config: S3Config): Promise<StorageBackend> {
  // On Node 20 the SDK prints a 7-line warning that its releases after January 2027 need Node
  // 22. The installed version works on 20 (tested there), and a start prints one line per
  // problem, so it stays quiet unless the operator set the variable themselves.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    ...(config.accessKeyId && config.secretAccessKey
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
      : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A service that is down answers at once (503), not after the OS's connect timeout.
    requestHandler: { connectionTimeout: 5000 },
  });
  const Bucket = config.bucket;
  const k = (key: string) => {
    if (!KEY.test(key)) throw new Error('storage: not a storage key');
    return PREFIX + key;
  };

  async function send<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw failed(what, err);
    }
  }

  async function multipart(Key: string, first: Buffer, rest: AsyncIterator<Buffer>, contentType: string): Promise<void> {
    const { UploadId } = await send('start an upload', () =>
      client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType: contentType })),
    );
    const parts: Array<{ PartNumber: number; ETag?: string }> = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown = null;
    const upload = (body: Buffer, PartNumber: number) => {
      const p = send('upload a part', () =>
        client.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body, ContentLength: body.length })),
      )
        .then((r) => {
          parts.push({ PartNumber, ETag: r.ETag });
        })
        .catch((err) => {
          failure ??= err;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    };
    try {
      let n = 1;
      upload(first, n++);
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        if (failure) throw failure;
        upload(next.value, n++);
        while (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      if (failure) throw failure;
      parts.sort((a, b) => a.PartNumber - b.PartNumber);
      await send('complete an upload', () =>
        client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } })),
      );
    } catch (err) {
      await Promise.allSettled(inFlight);
      // Some services (s3rver) cannot abort: the sweep's cleanIncomplete tries again later.
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Resumable uploads: a multipart upload to `uploads/<id>` (outside the objects' prefix, so
   * neither the orphan sweep nor cleanIncomplete touches it), completed at the finish and read
   * back once by the plain upload, then deleted.
   */
  const UPLOAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const stagedKey = (id: string) => {
    if (!UPLOAD_ID.test(id)) throw new Error('storage: not an upload id');
    return `${UPLOADS}${id}`;
  };
  const staging: UploadStaging = {
    kind: 'parts',
    partSize: PART_SIZE,
    async start(id) {
      const { UploadId } = await send('start an upload', () =>
        client.send(new CreateMultipartUploadCommand({ Bucket, Key: stagedKey(id), ContentType: 'application/octet-stream' })),
      );
      if (!UploadId) throw new BackendError('storage: S3 started an upload without an id');
      return UploadId;
    },
    openAt: () => Promise.reject(new Error('storage: S3 stages uploads in parts')),
    async part(id, UploadId, PartNumber, data) {
      const r = await send('upload a part', () =>
        client.send(new UploadPartCommand({ Bucket, Key: stagedKey(id), UploadId, PartNumber, Body: data, ContentLength: data.length })),
      );
      return r.ETag ?? '';
    },
    async read(id, UploadId, etags) {
      const Key = stagedKey(id);
      try {
        await client.send(
          new CompleteMultipartUploadCommand({
            Bucket,
            Key,
            UploadId,
            MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) },
          }),
        );
      } catch (err) {
        // Completed by an earlier finish that then failed: the assembled object is there.
        if ((err as Error).name !== 'NoSuchUpload' && status(err) !== 404) throw failed('complete an upload', err);
      }
      const res = await send('read an upload', () => client.send(new GetObjectCommand({ Bucket, Key })));
      return res.Body as Readable;
    },
    async discard(id, UploadId) {
      const Key = stagedKey(id);
      if (UploadId) await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
      await send('delete an upload', () => client.send(new DeleteObjectCommand({ Bucket, Key })));
    },
    async *list(before) {
      let uploads: Array<{ Key?: string; UploadId?: string; Initiated?: Date }>;
      try {
        uploads = (await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: UPLOADS }))).Uploads ?? [];
      } catch (err) {
        if ((err as Error).name === 'NotImplemented' || status(err) === 501) return;
        throw failed('list unfinished uploads', err);
      }
      for (const u of uploads) {
        const id = u.Key?.slice(UPLOADS.length) ?? '';
        if (UPLOAD_ID.test(id) && u.UploadId && (u.Initiated?.getTime() ?? 0) < before) yield { id, handle: u.UploadId };
      }
    },
  };

  return {
    kind: 's3',
    staging,
    async put(key, body, info) {
      const Key = k(key);
      const parts = chunked(body, PART_SIZE);
      const first = await parts.next();
      const second = first.done ? first : await parts.next();
      if (second.done) {
        const buf = first.done ? Buffer.alloc(0) : first.value;
        await send('store an object', () =>
          client.send(new PutObjectCommand({ Bucket, Key, Body: buf, ContentLength: buf.length, ContentType: info.contentType })),
        );
        return;
      }
      await multipart(Key, first.value as Buffer, prepend(second.value, parts), info.contentType);
    },
    async get(key, range?: ByteRange): Promise<Readable | null> {
      try {
        const res = await client.send(
          new GetObjectCommand({ Bucket, Key: k(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
        );
        return res.Body as Readable;
      } catch (err) {
        if ((err as Error).name === 'NoSuchKey' || status(err) === 404) return null;
        throw failed('read an object', err);
      }
    },
    async copy(from, to) {
      await send('copy an object', () => client.send(new CopyObjectCommand({ Bucket, Key: k(to), CopySource: `${Bucket}/${k(from)}` })));
    },
    async remove(keys) {
      for (const key of keys) await send('delete an object', () => client.send(new DeleteObjectCommand({ Bucket, Key: k(key) })));
    },
    async *list() {
      let ContinuationToken: string | undefined;
      do {
        const page = await send('list objects', () => client.send(new ListObjectsV2Command({ Bucket, Prefix: PREFIX, ContinuationToken })));
        for (const o of page.Contents ?? []) {
          const key = o.Key?.slice(PREFIX.length) ?? '';
          if (KEY.test(key)) yield { key, modified: o.LastModified?.getTime() ?? 0 };
        }
        ContinuationToken = page.NextContinuationToken;
      } while (ContinuationToken);
    },
    async cleanIncomplete(before) {
      let uploads: Array<{ Key?: string; UploadId?: string; Initiated?: Date }>;
      try {
        uploads = (await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: PREFIX }))).Uploads ?? [];
      } catch (err) {
        if ((err as Error).name === 'NotImplemented' || status(err) === 501) return 0;
        throw failed('list unfinished uploads', err);
      }
      let n = 0;
      for (const u of uploads) {
        if ((u.Initiated?.getTime() ?? 0) >= before) continue;
        await send('abort an upload', () => client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId })));
        n++;
      }
      return n;
    },
    async close() {
      client.destroy();
    },
  };
}

/** The body in buffers of `size` bytes (the last one shorter). */
async function* chunked(body: Readable, size: number): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    held.push(chunk);
    length += chunk.length;
    while (length >= size) {
      const all = Buffer.concat(held, length);
      yield all.subarray(0, size);
      held = [all.subarray(size)];
      length -= size;
    }
  }
  if (length > 0 || held.length === 0) yield Buffer.concat(held, length);
}

async function* prepend(first: Buffer, rest: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  yield first;
  yield* rest;
}
