/**
 * `client.functions.invoke(name, {body})`: calls a function of the project
 * (`/api/v1/functions/<name>`, docs/functions.md) with the signed-in user's token (else the
 * public key), as supabase-js's `functions.invoke` does. Never throws: a failure is `error`.
 */
import { clientError, errorFromBody, networkError } from './errors.js';
import type { HttpConfig } from './fetch.js';
import type { PlinthError } from './types.js';

export interface InvokeOptions {
  /** Default POST. */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A string is sent as text/plain, bytes (Blob, ArrayBuffer, a typed array) as they are, FormData as multipart, anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

export type InvokeResult<T> =
  | { data: T; error: null; status: number; response: Response }
  | { data: null; error: PlinthError; status: number; response: Response | null };

/** What the function answered, by its type: JSON parsed, text as a string, anything else as a Blob. */
async function readAnswer(res: Response): Promise<unknown> {
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = await res.text();
    return text === '' ? null : JSON.parse(text);
  }
  if (type.startsWith('text/') || type === '') return res.text();
  return res.blob();
}

function encode(body: unknown, headers: Record<string, string>): BodyInit | undefined {
  if (body === undefined) return undefined;
  const has = (k: string) => Object.keys(headers).some((h) => h.toLowerCase() === k);
  if (typeof body === 'string') {
    if (!has('content-type')) headers['content-type'] = 'text/plain;charset=UTF-8';
    return body;
  }
  if (
    (typeof Blob !== 'undefined' && body instanceof Blob) ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof FormData !== 'undefined' && body instanceof FormData)
  ) {
    if (
      !has('content-type') &&
      !(typeof FormData !== 'undefined' && body instanceof FormData) &&
      !(typeof Blob !== 'undefined' && body instanceof Blob)
    )
      headers['content-type'] = 'application/octet-stream';
    return body as BodyInit;
  }
  if (!has('content-type')) headers['content-type'] = 'application/json';
  return JSON.stringify(body);
}

export class FunctionsClient {
  constructor(
    private readonly http: HttpConfig,
    private readonly accessToken: () => Promise<string | null>,
    private readonly refresh: () => Promise<string | null>,
  ) {}

  /**
   * @example const { data, error } = await client.functions.invoke('hello', { body: { name: 'Ada' } });
   */
  async invoke<T = unknown>(name: string, options: InvokeOptions = {}): Promise<InvokeResult<T>> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      return {
        data: null,
        error: clientError('invalid_request', `"${name}" is not a function name (letters, digits, - and _).`),
        status: 0,
        response: null,
      };
    }
    let token = await this.accessToken();
    let res = await this.once(name, options, token);
    if (!(res instanceof Response)) return { data: null, error: res, status: 0, response: null };
    if (res.status === 401 && token) {
      // A token that expired on the way: one refresh and one retry, as the database calls do.
      const body = await res
        .clone()
        .json()
        .catch(() => null);
      if ((body as { code?: string } | null)?.code === 'token_expired') {
        token = await this.refresh();
        const again = token ? await this.once(name, options, token) : res;
        if (!(again instanceof Response)) return { data: null, error: again, status: 0, response: null };
        res = again;
      }
    }
    if (!res.ok) {
      const body = await res
        .clone()
        .json()
        .catch(() => null);
      return { data: null, error: errorFromBody(res.status, body), status: res.status, response: res };
    }
    try {
      return { data: (await readAnswer(res)) as T, error: null, status: res.status, response: res };
    } catch {
      return {
        data: null,
        error: clientError('invalid_response', 'The function said it answered JSON, but its body is not JSON.', res.status),
        status: res.status,
        response: res,
      };
    }
  }

  private async once(name: string, options: InvokeOptions, token: string | null): Promise<Response | PlinthError> {
    const headers: Record<string, string> = { ...this.http.headers, ...options.headers };
    if (this.http.publicKey) headers.apikey = this.http.publicKey;
    if (token) headers.authorization = `Bearer ${token}`;
    const body = encode(options.body, headers);
    try {
      const doFetch = this.http.fetch ?? globalThis.fetch;
      return await doFetch(`${this.http.url}/api/v1/functions/${name}`, { method: options.method ?? 'POST', headers, body });
    } catch (cause) {
      return networkError(cause);
    }
  }
}
