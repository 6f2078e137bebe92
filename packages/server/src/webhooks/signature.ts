/**
 * `Plinth-Signature` (docs/webhooks.md "Verifying"): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>" keyed with the webhook's secret>`, Stripe's scheme, so receivers know it. While a
 * rotated-out secret still signs, a second `v1=` follows with its signature; a receiver accepts
 * the request when any `v1` matches and `t` is recent (which stops replays of old requests).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../lib/index.js';

/** A new signing secret: `whsec_` and 32 CSPRNG bytes, base64url. The HMAC key is the whole string. */
export function newSecret(): string {
  return `whsec_${randomToken(32)}`;
}

/** The hex HMAC-SHA256 of `${t}.${body}` under `secret`. */
export function sign(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/**
 * The header value for a body sent at `t` (unix seconds), signed by every secret given (the
 * current one first).
 * @example signatureHeader(['whsec_…'], 1767225600, '{"type":"insert",…}') // 't=1767225600,v1=5f…'
 */
export function signatureHeader(secrets: string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${sign(s, t, body)}`)].join(',');
}

/**
 * A receiver's check, as docs/webhooks.md shows it: some `v1` of the header is the body's
 * signature under `secret`, and `t` is within `toleranceSeconds` of `now`.
 * @example verifySignature(secret, req.headers['plinth-signature'], rawBody) // true
 */
export function verifySignature(secret: string, header: string, body: string, now = Date.now() / 1000, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(now - t) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, t, body), 'hex');
  return parts.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '') && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
