import {
  type Bucket,
  type BucketOptions as BucketFields,
  encodePath,
  type ListEntry as Entry,
  type UploadedObject as Uploaded,
} from '@plinth/sdk';
import { useEffect, useState } from 'react';
import { ApiFailure, call, fetchBlob, saveBlob, serverUrl, signedOut } from './api';

/**
 * The storage calls of the Storage page (docs/storage.md), on the admin cookie like every console
 * call (the server takes it as the secret key on storage routes). Kept apart from lib/api.ts
 * so that only the Storage page's lazy chunk carries them. Object names go into paths one
 * percent-encoded folder at a time, the `/` between them kept (`#`, `?`, `%`, unicode work).
 */

/** The storage API's shapes, as the SDK declares them. */
export type { Bucket, BucketOptions as BucketFields, ListEntry as Entry, UploadedObject as Uploaded } from '@plinth/sdk';

/** Entries per listing request (the server's default; it allows up to 1000). */
export const PAGE = 100;

const bucketPath = (bucket: string) => `/api/v1/storage/object/${encodeURIComponent(bucket)}`;
const objectPath = (bucket: string, name: string) => `${bucketPath(bucket)}/${encodePath(name)}`;

/**
 * Downloads an object as a file named `filename`: fetched with the cookie and the header, saved
 * from a blob URL (a link to the API URL would carry the cookie without the header: refused).
 */
export async function downloadObject(bucket: string, name: string, filename: string): Promise<void> {
  saveBlob(await fetchBlob(`${objectPath(bucket, name)}?download=${encodeURIComponent(filename)}`), filename);
}

/**
 * A blob URL of the object's bytes for an `<img>` preview (null while loading or when `enabled`
 * is false), revoked when the object changes or the component goes.
 */
export function useObjectPreview(bucket: string, name: string, enabled: boolean): { url: string | null; error: unknown } {
  const [state, setState] = useState<{ url: string | null; error: unknown }>({ url: null, error: null });
  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    let url: string | null = null;
    setState({ url: null, error: null });
    fetchBlob(objectPath(bucket, name), abort.signal).then(
      (blob) => {
        url = URL.createObjectURL(blob);
        setState({ url, error: null });
      },
      (error) => !abort.signal.aborted && setState({ url: null, error }),
    );
    return () => {
      abort.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [bucket, name, enabled]);
  return state;
}
/** The keyless URL of an object of a public bucket, under the server's public URL. */
export const publicUrl = (base: string, bucket: string, name: string) =>
  `${base.replace(/\/+$/, '')}/api/v1/storage/public/${encodeURIComponent(bucket)}/${encodePath(name)}`;

export const storage = {
  buckets: () => call<Bucket[]>({ path: '/api/v1/storage/buckets' }),
  createBucket: (name: string, fields: BucketFields) =>
    call<Bucket>({ method: 'POST', path: '/api/v1/storage/buckets', body: { name, ...fields } }),
  updateBucket: (name: string, fields: BucketFields) =>
    call<Bucket>({ method: 'PATCH', path: `/api/v1/storage/buckets/${encodeURIComponent(name)}`, body: fields }),
  deleteBucket: (name: string) => call<Bucket>({ method: 'DELETE', path: `/api/v1/storage/buckets/${encodeURIComponent(name)}` }),
  /** One page of the entries directly under `folder` ('' or `a/b/`), names containing `search`. */
  list: (bucket: string, folder: string, search: string, offset: number, limit = PAGE) =>
    call<Entry[]>({
      path: bucketPath(bucket),
      query: new URLSearchParams({ prefix: folder, search, limit: String(limit), offset: String(offset) }).toString(),
    }),
  remove: (bucket: string, names: string[]) => call<Uploaded[]>({ method: 'DELETE', path: bucketPath(bucket), body: { paths: names } }),
  /** An absolute URL that reads the object without any header for `seconds`. */
  sign: async (bucket: string, name: string, seconds: number) =>
    (
      await call<{ signed_url: string }>({
        method: 'POST',
        path: `/api/v1/storage/sign/${encodeURIComponent(bucket)}/${encodePath(name)}`,
        body: { expires_in: seconds },
      })
    ).signed_url,
};

/**
 * Uploads one file with XMLHttpRequest, the one browser API that reports upload progress
 * (fetch streams request bodies over HTTP/2 only). Resolves with the stored object or rejects
 * with an ApiFailure carrying the server's code (`payload_too_large`, `invalid_mime_type`,
 * `object_exists`, …); `signal` aborts it.
 */
export function upload(
  bucket: string,
  name: string,
  file: File,
  options: { upsert?: boolean; onProgress?: (fraction: number) => void; signal?: AbortSignal } = {},
): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${serverUrl}${objectPath(bucket, name)}`);
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.setRequestHeader('x-plinth-admin', '1');
    if (options.upsert) xhr.setRequestHeader('x-upsert', 'true');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) options.onProgress?.(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: { code?: string; message?: string; details?: unknown } | null = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {}
      if (xhr.status === 201 && body) return resolve(body as unknown as Uploaded);
      if (xhr.status === 401) signedOut();
      reject(new ApiFailure(body?.code ?? 'http_error', body?.message ?? `The server answered ${xhr.status}.`, xhr.status, body?.details));
    };
    xhr.onerror = () => reject(new ApiFailure('network_error', 'The upload did not reach the server.', 0));
    xhr.onabort = () => reject(new ApiFailure('aborted', 'Upload cancelled.', 0));
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** Bytes for people: 1536 → "1.5 KiB". */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} ${n === 1 ? 'byte' : 'bytes'}` : `${v.toFixed(v < 10 ? 1 : 0).replace(/\.0$/, '')} ${units[i]}`;
}
