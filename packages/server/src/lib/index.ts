/**
 * App-agnostic helpers: the clock (injected, so token decisions test with a fake one),
 * crypto (CSPRNG tokens and codes, SHA-256, constant-time comparison) and the wire format of
 * time (`iso`, `isoSql`). Imports nothing of src.
 */
export { type Clock, systemClock } from './clock.js';
export { randomDigits, randomToken, safeEqual, sha256 } from './crypto.js';
export { iso, isoSql } from './time.js';
