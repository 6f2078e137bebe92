import { clientError, errorFromBody, networkError } from '../errors.js';
import { type HttpConfig, send } from '../fetch.js';
import type { PlinthError, Result } from '../types.js';
import type { ListEntry, ListOptions, StorageObject, UploadBody, UploadedObject, UploadOptions, UrlOptions } from './types.js';

/** How storage requests get their bearer token: the database's (the auth session, refreshed when due). */
export interface StorageContext {
  http: HttpConfig;
  accessToken(): Promise<string | null>;
  refresh(): Promise<string | null>;
}

/**
 * An object name as a URL path: each folder percent-encoded, the `/` between them kept.
 * @example encodePath('my photos/a#1.png') // 'my%20photos/a%231.png'
 */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * URL parsers resolve `.` and `..` folders (even percent-encoded) before a request leaves, so
 * such a name would reach another object: the SDK refuses it as the server would.
 */
function dotSegments(path: string): PlinthError | null {
  return path.split('/').some((s) => s === '.' || s === '..')
    ? clientError('invalid_object_name', 'An object name cannot have a "." or ".." folder.')
    : null;
}

const isStream = (b: unknown): b is ReadableStream<Uint8Array> => typeof ReadableStream !== 'undefined' && b instanceof ReadableStream;
const inBrowser = () => typeof window !== 'undefined' && typeof document !== 'undefined';

/**
 * Sends a request with the user's token; a `token_expired` answer refreshes once and retries
 * (the server checks the token before it reads a body, so that is safe), unless the body was a
 * stream, which cannot be sent twice.
 */
async function withToken<T>(ctx: StorageContext, once: (token: string | null) => Promise<Result<T>>, retry = true): Promise<Result<T>> {
  let token = await ctx.accessToken();
  let res = await once(token);
  if (retry && res.error?.code === 'token_expired' && token) {
    token = await ctx.refresh();
    if (token) res = await once(token);
  }
  return res;
}

/** One raw request (bytes in or out); never throws. */
async function raw(
  ctx: StorageContext,
  init: { method: string; path: string; token: string | null; headers?: Record<string, string>; body?: BodyInit },
) {
  const headers: Record<string, string> = { ...ctx.http.headers, apikey: ctx.http.publicKey, ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const doFetch = ctx.http.fetch ?? globalThis.fetch;
  try {
    const request: RequestInit & { duplex?: 'half' } = { method: init.method, headers, body: init.body };
    if (isStream(init.body)) request.duplex = 'half'; // a streamed request body (Node, Deno, Bun)
    return { response: await doFetch(`${ctx.http.url}${init.path}`, request), error: null };
  } catch (cause) {
    return { response: null, error: networkError(cause) };
  }
}

async function failure(response: Response): Promise<PlinthError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {}
  return errorFromBody(response.status, body);
}

const query = (params: Record<string, string | number | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

const downloadQuery = (options: UrlOptions = {}) =>
  options.download === undefined || options.download === false ? {} : { download: options.download === true ? '' : options.download };

/**
 * The files of one bucket, as the signed-in user (or anon): every call is decided by the
 * project's policies on `storage.objects`. Returned by `client.storage.from(bucket)`.
 */
export class StorageBucket {
  constructor(
    private readonly ctx: StorageContext,
    readonly bucket: string,
  ) {}

  private objectPath(path: string) {
    return `/api/v1/storage/object/${encodeURIComponent(this.bucket)}/${encodePath(path)}`;
  }

  private json<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, q = ''): Promise<Result<T>> {
    return withToken(this.ctx, async (token) => {
      const res = await send<T>(this.ctx.http, { method, path, query: q.replace(/^\?/, ''), body, token });
      return res.error ? { data: null, error: res.error } : { data: res.data, error: null };
    });
  }

  /**
   * Uploads a file: a Blob or File (its type is the Content-Type unless `contentType` says
   * otherwise), an ArrayBuffer or typed array, a string, or a ReadableStream (streamed in Node;
   * read into memory first in browsers, which stream request bodies only over HTTP/2).
   * @example const { data, error } = await client.storage.from('avatars').upload(`${user.id}/me.png`, file, { upsert: true });
   */
  async upload(path: string, body: UploadBody, options: UploadOptions = {}): Promise<Result<UploadedObject>> {
    const bad = dotSegments(path);
    if (bad) return { data: null, error: bad };
    let payload: BodyInit = body as BodyInit;
    if (isStream(body) && inBrowser()) payload = await new Response(body).blob();
    const type =
      options.contentType ??
      (typeof Blob !== 'undefined' && payload instanceof Blob && payload.type ? payload.type : 'application/octet-stream');
    const headers: Record<string, string> = { 'content-type': type };
    if (options.upsert) headers['x-upsert'] = 'true';
    // `move` and `copy` at the top of a bucket are the names of actions for POST: PUT uploads them.
    const method = /^(move|copy)$/.test(path) ? 'PUT' : 'POST';
    return withToken(
      this.ctx,
      async (token) => {
        const { response, error } = await raw(this.ctx, { method, path: this.objectPath(path), token, headers, body: payload });
        if (!response) return { data: null, error };
        if (!response.ok) return { data: null, error: await failure(response) };
        return { data: (await response.json()) as UploadedObject, error: null };
      },
      !isStream(payload),
    );
  }

  /**
   * Downloads a file as a Blob (its type is the stored Content-Type).
   * @example const { data: blob } = await client.storage.from('avatars').download('me.png'); img.src = URL.createObjectURL(blob);
   */
  download(path: string): Promise<Result<Blob>> {
    const bad = dotSegments(path);
    if (bad) return Promise.resolve({ data: null, error: bad });
    return withToken(this.ctx, async (token) => {
      const { response, error } = await raw(this.ctx, { method: 'GET', path: this.objectPath(path), token });
      if (!response) return { data: null, error };
      if (!response.ok) return { data: null, error: await failure(response) };
      try {
        return { data: await response.blob(), error: null };
      } catch (cause) {
        return { data: null, error: networkError(cause) };
      }
    });
  }

  /**
   * The entries directly under a folder (`''` for the top): files, and sub-folders with `id: null`.
   * @example const { data } = await client.storage.from('docs').list('reports/2024', { limit: 50, search: 'q1' });
   */
  list(prefix = '', options: ListOptions = {}): Promise<Result<ListEntry[]>> {
    const q = query({ prefix: prefix || undefined, limit: options.limit, offset: options.offset, search: options.search });
    return this.json<ListEntry[]>('GET', `/api/v1/storage/object/${encodeURIComponent(this.bucket)}`, undefined, q);
  }

  /**
   * Deletes files; resolves to the ones deleted (those the caller could not see are left out).
   * @example await client.storage.from('docs').remove(['a.txt', 'b/c.txt']);
   */
  remove(paths: string[]): Promise<Result<StorageObject[]>> {
    if (paths.length === 0) return Promise.resolve({ data: [], error: null });
    return this.json<StorageObject[]>('DELETE', `/api/v1/storage/object/${encodeURIComponent(this.bucket)}`, { paths });
  }

  /** Renames a file within the bucket. @example await client.storage.from('docs').move('draft.txt', 'final.txt'); */
  move(from: string, to: string): Promise<Result<StorageObject>> {
    return this.json<StorageObject>('POST', `/api/v1/storage/object/${encodeURIComponent(this.bucket)}/move`, { from, to });
  }

  /** Copies a file within the bucket; the caller owns the copy. @example await client.storage.from('docs').copy('a.txt', 'backup/a.txt'); */
  copy(from: string, to: string): Promise<Result<UploadedObject>> {
    return this.json<UploadedObject>('POST', `/api/v1/storage/object/${encodeURIComponent(this.bucket)}/copy`, { from, to });
  }

  /**
   * A URL that reads the file without any header for `expiresIn` seconds (at most 7 days), for
   * `<img src>`, downloads or sharing. Only for a file the caller may read.
   * @example const { data } = await client.storage.from('docs').createSignedUrl('report.pdf', 3600); window.open(data.signedUrl);
   */
  async createSignedUrl(path: string, expiresIn: number, options: UrlOptions = {}): Promise<Result<{ signedUrl: string }>> {
    const bad = dotSegments(path);
    if (bad) return { data: null, error: bad };
    if (!Number.isInteger(expiresIn) || expiresIn < 1)
      return { data: null, error: clientError('invalid_request', 'expiresIn must be a positive whole number of seconds.') };
    const res = await this.json<{ signed_url: string }>(
      'POST',
      `/api/v1/storage/sign/${encodeURIComponent(this.bucket)}/${encodePath(path)}`,
      {
        expires_in: expiresIn,
      },
    );
    if (res.error) return res;
    const extra = query(downloadQuery(options)).replace(/^\?/, '&');
    return { data: { signedUrl: res.data.signed_url + extra }, error: null };
  }

  /**
   * The URL of a file of a public bucket (no request is made; a private bucket's file is 404 there).
   * @example const { data } = client.storage.from('avatars').getPublicUrl('me.png'); img.src = data.publicUrl;
   */
  getPublicUrl(path: string, options: UrlOptions = {}): { data: { publicUrl: string } } {
    const url = `${this.ctx.http.url}/api/v1/storage/public/${encodeURIComponent(this.bucket)}/${encodePath(path)}${query(downloadQuery(options))}`;
    return { data: { publicUrl: url } };
  }
}
