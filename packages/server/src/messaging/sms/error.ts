import { SendError } from '../send-error.js';

/**
 * The one HTTP exchange every SMS adapter makes, so that timeouts, retry
 * rules, truncation and secret masking are decided once for all providers.
 */

/** Long enough for a slow provider, short enough that a dead one does not hold the outbox. */
export const TIMEOUT_MS = 10_000;
export const FORM = 'application/x-www-form-urlencoded';
const MAX_ANSWER = 500;

/** What an adapter was given besides its credentials. */
export interface HttpOptions {
  /** Base URL without a trailing slash; each adapter has its provider's as the default. */
  baseUrl?: string;
  /** Tests shorten it; production keeps TIMEOUT_MS. */
  timeoutMs?: number;
}

/** One provider answer, whatever its status. */
export interface Exchange {
  status: number;
  text: string;
}

/** @example basicAuth('user', 'pass') // 'Basic dXNlcjpwYXNz' */
export const basicAuth = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Parses a provider body that may or may not be JSON. @example json('{"id":"s1"}') // { id: 's1' } */
export function json(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Masks every form a credential can take in an answer: as given, URL- or form-encoded (a
 * peer echoing our request body), JSON-escaped. Values shorter than 4 characters are left
 * alone: masking them would shred the text and no provider issues credentials that short.
 * @example redact('token=abcd', ['abcd']) // 'token=[redacted]'
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    const forms = [
      secret,
      encodeURIComponent(secret),
      new URLSearchParams([['', secret]]).toString().slice(1),
      JSON.stringify(secret).slice(1, -1),
    ];
    for (const form of new Set(forms)) out = out.split(form).join('[redacted]');
  }
  return out;
}

/** The answer as the delivery log keeps it. @example answer({ status: 403, text: 'Invalid to number' }, []) // 'HTTP 403: Invalid to number' */
export function answer(x: Exchange, secrets: readonly string[]): string {
  const text = x.text.trim();
  // Masked before truncating, so a cut can never leave the head of a credential behind.
  return redact(text ? `HTTP ${x.status}: ${text}` : `HTTP ${x.status}`, secrets).slice(0, MAX_ANSWER);
}

/**
 * POSTs and returns the answer whatever its status; only a network failure or a timeout
 * throws, and both are retryable (the provider may never have seen the message).
 * @example const x = await post('46elks', url, { authorization, 'content-type': FORM }, form.toString(), {}, secrets);
 */
export async function post(
  provider: string,
  url: string,
  headers: Record<string, string>,
  body: string,
  o: HttpOptions,
  secrets: readonly string[],
): Promise<Exchange> {
  const timeoutMs = o.timeoutMs ?? TIMEOUT_MS;
  try {
    // Redirects are not followed: the credentials or signature must not travel to another host,
    // and an API that redirects a POST is misconfigured, which the 3xx in the log shows.
    const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    const why =
      e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.message ?? e.cause?.code ?? e.message ?? 'network error');
    const response = redact(why, secrets).slice(0, MAX_ANSWER);
    throw new SendError(`${provider}: ${response}`, response, true);
  }
}

/** True for answers worth trying again: rate limits and the provider's own failures. */
export const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * The error for an answer that is not a success. `detail` is the provider's own reason when the
 * adapter could parse one; `retryable` overrides the HTTP rule (Vonage fails inside a 200).
 * @example throw refused('twilio', x, secrets, { detail: '21211 Invalid To' });
 */
export function refused(
  provider: string,
  x: Exchange,
  secrets: readonly string[],
  o: { detail?: string; retryable?: boolean } = {},
): SendError {
  const response = answer(x, secrets);
  const why = o.detail ? redact(`HTTP ${x.status}, ${o.detail}`, secrets).slice(0, 200) : response;
  return new SendError(`${provider}: ${why}`, response, o.retryable ?? retryableStatus(x.status));
}
