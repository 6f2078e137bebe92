import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 (or n) CSPRNG bytes, base64url. @example randomToken() // 'q3…' (43 chars) */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 hex digest, used to store tokens and keys. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time string equality (hashes first so lengths never leak). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** A 6-digit (or n-digit) numeric code from the CSPRNG, without modulo bias. */
export function randomDigits(n = 6): string {
  let out = '';
  while (out.length < n) {
    const byte = randomBytes(1)[0];
    if (byte < 250) out += String(byte % 10);
  }
  return out;
}
