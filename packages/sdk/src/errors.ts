import type { PlinthError, PlinthErrorCode } from './types.js';

/**
 * Builds the error the SDK reports when no HTTP answer arrived (offline, DNS, CORS refusal,
 * timeout). `status` is 0 because there was no response.
 * @example networkError(new TypeError('Failed to fetch')) // { code: 'network_error', status: 0, ... }
 */
export function networkError(cause: unknown): PlinthError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return { code: 'network_error', message: `The request did not reach the server: ${reason}`, status: 0 };
}

/**
 * Builds an error the SDK raises itself, before or without a request.
 * @example clientError('session_missing', 'Not signed in.') // { code: 'session_missing', status: 0, ... }
 */
export function clientError(code: PlinthErrorCode, message: string, status = 0): PlinthError {
  return { code, message, status };
}

/**
 * Turns a non-2xx answer into a PlinthError. The body normally is the contract's
 * `{code, message, details?}`; anything else (a proxy's HTML page, an empty 502) still gets a
 * code so callers can always branch on `error.code`.
 * @example errorFromBody(409, { code: 'email_exists', message: 'Taken.' }) // { code: 'email_exists', status: 409, ... }
 */
export function errorFromBody(status: number, body: unknown): PlinthError {
  if (body !== null && typeof body === 'object') {
    const { code, message, details } = body as Record<string, unknown>;
    if (typeof code === 'string') {
      // One of the server's codes (a server newer than this SDK may send one added since).
      const error: PlinthError = { code: code as PlinthErrorCode, message: typeof message === 'string' ? message : code, status };
      if (details !== undefined) error.details = details;
      return error;
    }
  }
  return { code: 'unexpected_response', message: `The server answered HTTP ${status} without an error body.`, status };
}
