/**
 * App-agnostic helpers: the clock (injected, so token decisions test with a fake one) and
 * crypto (CSPRNG tokens and codes, SHA-256, constant-time comparison). Imports nothing of src.
 */
export { type Clock, systemClock } from './clock.js';
export { randomDigits, randomToken, safeEqual, sha256 } from './crypto.js';
