import { clientError, errorFromBody, networkError } from './errors.js';
import type { PlinthError } from './types.js';

/** Connection settings shared by every request of one client. */
export interface HttpConfig {
  /** Project URL without a trailing slash, e.g. `https://api.example.com`. */
  url: string;
  publicKey: string;
  /** Custom fetch (tests, proxies); resolved at call time so polyfills installed later work. */
  fetch?: typeof fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

export interface HttpRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the project URL, starting with `/`. */
  path: string;
  /** Encoded query string without `?`. */
  query?: string;
  body?: unknown;
  /** Access token for `Authorization: Bearer`; omitted or null sends the public key only. */
  token?: string | null;
  headers?: Record<string, string>;
  /** Milliseconds before the request is abandoned as a network error. */
  timeoutMs?: number;
}

export type HttpResponse<T> =
  | { data: T; error: null; status: number; headers: Headers }
  | { data: null; error: PlinthError; status: number; headers: Headers | null };

/**
 * Sends one request to the Plinth API and never throws: every failure, including a refused
 * connection, comes back as `error`. Adds `apikey` and, when a token is given, the bearer header.
 * @example
 * const res = await send(config, { method: 'POST', path: '/v1/auth/signin', body: { email, password } });
 * if (res.error) console.log(res.error.code);
 */
export async function send<T>(config: HttpConfig, req: HttpRequest): Promise<HttpResponse<T>> {
  // No public key (a management client on an admin session, like the console): no apikey header.
  const headers: Record<string, string> = { ...config.headers, ...(config.publicKey ? { apikey: config.publicKey } : {}), ...req.headers };
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const url = `${config.url}${req.path}${req.query ? `?${req.query}` : ''}`;
  const controller = req.timeoutMs ? new AbortController() : null;
  const timer = controller ? setTimeout(() => controller.abort(), req.timeoutMs) : null;
  let response: Response;
  let text: string;
  try {
    const doFetch = config.fetch ?? globalThis.fetch;
    response = await doFetch(url, {
      method: req.method ?? 'GET',
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: controller?.signal,
    });
    text = await response.text();
  } catch (cause) {
    return { data: null, error: networkError(cause), status: 0, headers: null };
  } finally {
    if (timer) clearTimeout(timer);
  }
  let body: unknown = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      if (response.ok) {
        const error = clientError('invalid_response', 'The server answered with a body that is not JSON.', response.status);
        return { data: null, error, status: response.status, headers: response.headers };
      }
    }
  }
  if (!response.ok) return { data: null, error: errorFromBody(response.status, body), status: response.status, headers: response.headers };
  return { data: body as T, error: null, status: response.status, headers: response.headers };
}

/** Trims trailing slashes so paths can be appended with a single `/`. */
export function normalizeUrl(url: string): string {
  return url.replace(/\/+$/, '');
}
