import { ApiError } from '../http/errors.js';

const MAX_PASSWORD = 128;
// Deliberately basic: one @, a dot in the domain, no spaces or control characters. Deliverability is proven by
// the verification mail, not by a regex.
const EMAIL = /^[^\s@\p{Cc}]+@[^\s@.\p{Cc}]+(\.[^\s@.\p{Cc}]+)+$/u;

/**
 * Trims and lowercases an email, or throws 400 `invalid_email`.
 * @example normalizeEmail('  Ann@Example.COM ') // 'ann@example.com'
 */
export function normalizeEmail(input: unknown): string {
  const email = typeof input === 'string' ? input.trim().toLowerCase() : '';
  if (email.length > 254 || !EMAIL.test(email)) throw new ApiError('invalid_email', 'The email address is not valid.');
  return email;
}

/**
 * Checks a new password's length in characters (not bytes): `min` up to 128, else 400 `weak_password`.
 * @example checkPassword('correct horse', 8) // ok; checkPassword('short', 8) // throws
 */
export function checkPassword(password: unknown, min: number): string {
  if (typeof password !== 'string')
    throw new ApiError('weak_password', `The password must be a string of ${min} to ${MAX_PASSWORD} characters.`);
  const length = [...password].length;
  if (length < min || length > MAX_PASSWORD) {
    throw new ApiError('weak_password', `The password must be ${min} to ${MAX_PASSWORD} characters long.`, {
      min_length: min,
      max_length: MAX_PASSWORD,
    });
  }
  return password;
}

/** Epoch ms → the ISO text bound as `$n::timestamptz` (the clock, not the database, decides time). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
